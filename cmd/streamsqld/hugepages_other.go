//go:build !linux

package main

import (
	"context"
	"errors"
)

// startHugePages is --huge-pages on; only Linux has transparent huge pages
// to ask for (hugepages_linux.go).
func startHugePages(ctx context.Context, reserve int) error {
	return errors.New("--huge-pages needs Linux's transparent huge pages: it has no effect here")
}

// hugeReserve is unused here.
const hugeReserve = 0
