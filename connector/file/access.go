package file

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
)

// Access says which files file sources may read: never anything under
// /proc, /sys or /dev, nor under a Deny entry (the data directory, the
// TLS key, a password file), and, when Dir is set, nothing outside Dir.
// Paths are compared after resolving symbolic links, both when a source is
// validated (Open) and when a reader opens its file (the opened file's
// own path is checked again, so a link swapped in between does not
// escape). Only regular files are read: FIFOs, devices, sockets and
// directories are refused. Who may create a file source at all is the
// engine's business (superusers and members of pg_read_server_files).
//
// An Access is immutable once built by NewAccess; the zero Access applies
// only the fixed rules.
type Access struct {
	dir  string   // resolved; "" any directory
	deny []string // resolved
}

// alwaysDenied are the kernel's file systems: process memory and
// environment, devices that never end.
var alwaysDenied = []string{"/proc", "/sys", "/dev"}

// NewAccess builds an Access: dir (may be "") is the only directory file
// sources may read from; deny lists files or directories never read. Each
// is resolved now (a missing deny entry is kept as its absolute path); a
// dir that does not resolve to a directory is an error.
func NewAccess(dir string, deny ...string) (Access, error) {
	var a Access
	if dir != "" {
		r, err := resolveExisting(dir)
		if err != nil {
			return a, err
		}
		fi, err := os.Stat(r)
		if err != nil {
			return a, err
		}
		if !fi.IsDir() {
			return a, errors.New(dir + " is not a directory")
		}
		a.dir = r
	}
	for _, d := range deny {
		if d == "" {
			continue
		}
		r, err := resolveExisting(d)
		if err != nil {
			abs, aerr := filepath.Abs(d)
			if aerr != nil {
				return a, aerr
			}
			r = abs
		}
		a.deny = append(a.deny, r)
	}
	return a, nil
}

// Dir is the directory file sources are confined to ("" none).
func (a Access) Dir() string { return a.dir }

func resolveExisting(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// within reports whether path is root or below it (both clean, absolute).
func within(path, root string) bool {
	if root == "/" {
		return true
	}
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

// denied is the 42501 error for a path the rules forbid.
func denied(path, why string) error {
	return pgerr.New(pgerr.InsufficientPrivilege, "permission denied to read from file %q", path).
		WithDetail("%s", why)
}

// checkResolved applies the rules to real, the resolved form of path (and
// to path's own absolute form, so /proc/... is refused even where it
// resolves elsewhere).
func (a Access) checkResolved(path, real string) error {
	abs, _ := filepath.Abs(path)
	switch rule, d := a.breach(abs, real); rule {
	case breachKernel:
		return denied(path, "Files under "+d+" are never read by file sources.")
	case breachDenied:
		return denied(path, "The file is (or is inside) "+d+", which holds the server's own data or secrets.")
	case breachOutside:
		return denied(path, "File sources may only read files inside "+d+" (--file-source-dir); the path resolves to "+real+".")
	}
	return nil
}

// The rules a path can break, in the order breach checks them.
const (
	breachNone    = iota
	breachKernel  // under one of alwaysDenied (/proc, /sys, /dev)
	breachDenied  // under one of the server's denied paths (a.deny)
	breachOutside // outside a.dir
)

// breach reports the first rule that abs (a path's absolute form) or real
// (its resolved form) breaks, and the directory the rule names; file
// sources and file sinks share the rules and word their refusals apart.
func (a Access) breach(abs, real string) (rule int, dir string) {
	for _, p := range []string{abs, real} {
		for _, d := range alwaysDenied {
			if within(p, d) {
				return breachKernel, d
			}
		}
	}
	for _, d := range a.deny {
		if within(real, d) {
			return breachDenied, d
		}
	}
	if a.dir != "" && !within(real, a.dir) {
		return breachOutside, a.dir
	}
	return breachNone, ""
}

// check validates path at CREATE SOURCE (and when the catalog loads): it
// must resolve to an allowed regular file, or, when follow, may not exist
// yet (its directory, resolved, must then be allowed).
func (a Access) check(path string, follow bool) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fileError(path, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		// Check the rules first: a refused place must not tell whether
		// a file exists there.
		parent, perr := filepath.EvalSymlinks(filepath.Dir(abs))
		if perr != nil {
			parent = filepath.Dir(abs)
		}
		if cerr := a.checkResolved(path, filepath.Join(parent, filepath.Base(abs))); cerr != nil {
			return cerr
		}
		if follow {
			return nil
		}
		return fileError(path, err)
	}
	if err != nil {
		return fileError(path, err)
	}
	if err := a.checkResolved(path, real); err != nil {
		return err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return fileError(path, err)
	}
	return regular(path, fi)
}

// regular refuses anything but a regular file.
func regular(path string, fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return pgerr.New(pgerr.WrongObjectType, "%q is a directory", path)
	case !fi.Mode().IsRegular():
		return pgerr.New(pgerr.WrongObjectType, "%q is not a regular file", path).
			WithDetail("File sources read regular files only, not FIFOs, devices or sockets.").
			WithHint("Write the stream to a regular file and read it with follow = 'true'.")
	}
	return nil
}

// openChecked opens path for reading without blocking on a FIFO, refuses
// anything but a regular file, and checks the rules against the path of
// the file actually opened.
func (a Access) openChecked(path string) (*os.File, error) {
	f, err := openNoBlock(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = regular(path, fi)
	}
	if err == nil {
		var real string
		if real, err = openedPath(f, path); err == nil {
			err = a.checkResolved(path, real)
		} else {
			err = fileError(path, err)
		}
	} else if pgerr.As(err) == nil {
		err = fileError(path, err)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
