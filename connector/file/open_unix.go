//go:build unix

package file

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// openNoBlock opens path read-only with O_NONBLOCK, so that opening a FIFO
// never waits for a writer (the caller refuses it), then makes the
// descriptor blocking again for reading a regular file.
func openNoBlock(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openedPath is the path of the file f has open, as the kernel knows it
// (/proc/self/fd on Linux), so that a symbolic link swapped after the
// check cannot lead elsewhere; where that is unavailable, path resolved.
func openedPath(f *os.File, path string) (string, error) {
	if p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd()))); err == nil {
		return strings.TrimSuffix(p, " (deleted)"), nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}
