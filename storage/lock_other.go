//go:build !unix

package storage

import "os"

// lockDir does nothing where flock is unavailable.
func lockDir(dir string) (*os.File, error) { return nil, nil }
