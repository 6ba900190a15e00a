//go:build !unix

package file

import (
	"os"
	"path/filepath"
)

func openNoBlock(path string) (*os.File, error) { return os.Open(path) }

func openedPath(f *os.File, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}
