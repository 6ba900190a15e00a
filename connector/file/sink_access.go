package file

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/streamsql/streamsql/pgerr"
)

// CheckWriteDir applies the rules of a (built with --file-sink-dir as its
// Dir) to dir, the directory a file sink writes into: dir, resolved as far
// as it exists, must be inside Dir (when set), outside the denied paths and
// the kernel's file systems, and, if it exists, a directory. The error is
// 42501 for a refused place, 42809 for a file that is not a directory.
func (a Access) CheckWriteDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fileError(dir, err)
	}
	// Resolve the longest existing prefix; the rest is created later.
	existing, rest := abs, ""
	for {
		if _, err := os.Lstat(existing); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return fileError(dir, err)
	}
	real = filepath.Join(real, rest)
	switch rule, d := a.breach(abs, real); rule {
	case breachKernel:
		return writeDenied(dir, "File sinks never write under "+d+".")
	case breachDenied:
		return writeDenied(dir, "The directory is (or is inside) "+d+", which holds the server's own data or secrets.")
	case breachOutside:
		return writeDenied(dir, "File sinks may only write inside "+d+" (--file-sink-dir); the path resolves to "+real+".")
	}
	if fi, err := os.Stat(real); err == nil && !fi.IsDir() {
		return pgerr.New(pgerr.WrongObjectType, "%q is not a directory", dir).
			WithHint("A file sink's path is the directory its files are written into.")
	}
	return nil
}

func writeDenied(path, why string) error {
	return pgerr.New(pgerr.InsufficientPrivilege, "permission denied to write to directory %q", path).WithDetail("%s", why)
}
