package file

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/pgerr"
)

// The paths a file source must never read, whoever asks.
func TestOpenRefusesForbiddenFiles(t *testing.T) {
	dataDir := t.TempDir()
	roles := filepath.Join(dataDir, "roles.json")
	if err := os.WriteFile(roles, []byte(`{"secret":1}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	allowed := t.TempDir()
	outside := writeFile(t, "outside.csv", "1\n")
	inside := filepath.Join(allowed, "in.csv")
	if err := os.WriteFile(inside, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	escape := filepath.Join(allowed, "escape.csv") // a link out of the directory
	if err := os.Symlink(outside, escape); err != nil {
		t.Fatal(err)
	}
	toRoles := filepath.Join(allowed, "roles.csv") // a link into the data directory
	if err := os.Symlink(roles, toRoles); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(allowed, "pipe.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	confined, err := NewAccess(allowed, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	open, err := NewAccess("", dataDir)
	if err != nil {
		t.Fatal(err)
	}
	c := cols(t, "line text")
	for _, tc := range []struct {
		acc    Access
		path   string
		follow bool
		code   pgerr.Code
	}{
		{open, roles, false, pgerr.InsufficientPrivilege},
		{open, dataDir + "/../" + filepath.Base(dataDir) + "/roles.json", false, pgerr.InsufficientPrivilege},
		{open, toRoles, false, pgerr.InsufficientPrivilege},
		{open, "/proc/self/environ", false, pgerr.InsufficientPrivilege},
		{open, "/sys/kernel/hostname", false, pgerr.InsufficientPrivilege},
		{open, "/dev/zero", false, pgerr.InsufficientPrivilege},
		{open, "/dev/zero", true, pgerr.InsufficientPrivilege},
		{open, fifo, false, pgerr.WrongObjectType},
		{open, fifo, true, pgerr.WrongObjectType},
		{confined, outside, false, pgerr.InsufficientPrivilege},
		{confined, escape, false, pgerr.InsufficientPrivilege},
		{confined, allowed + "/../" + filepath.Base(outside), true, pgerr.InsufficientPrivilege},
		{confined, filepath.Join(filepath.Dir(outside), "missing.csv"), true, pgerr.InsufficientPrivilege},
		{confined, filepath.Join(allowed, "missing.csv"), false, pgerr.UndefinedFile},
		{confined, inside, false, ""},
		{confined, filepath.Join(allowed, "later.csv"), true, ""},
		{open, outside, false, ""},
		{Access{}, roles, false, ""}, // the zero Access knows no data directory
	} {
		opts := map[string]string{"path": tc.path, "format": "csv", "delimiter": "|"}
		if tc.follow {
			opts["follow"] = "true"
		}
		_, err := OpenAccess(c, opts, "", tc.acc)
		if got := pgerr.CodeOf(err); err != nil && got != tc.code || err == nil && tc.code != "" {
			t.Errorf("OpenAccess(%s, follow %v) = %v (%s), want %q", tc.path, tc.follow, err, got, tc.code)
		}
		if tc.code == pgerr.InsufficientPrivilege && !strings.Contains(err.Error(), "permission denied to read from file") {
			t.Errorf("%s: message %q", tc.path, err)
		}
	}
}

// A link swapped after CREATE SOURCE is checked again when the reader
// opens the file: it must not lead out of the allowed directory.
func TestReaderRechecksAtOpen(t *testing.T) {
	allowed := t.TempDir()
	secret := writeFile(t, "secret.csv", "root:x:0\n")
	link := filepath.Join(allowed, "data.csv")
	good := filepath.Join(allowed, "good.csv")
	if err := os.WriteFile(good, []byte("fine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	acc, err := NewAccess(allowed)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenAccess(cols(t, "line text"), map[string]string{"path": link}, "CSV", acc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	var got []arrow.RecordBatch
	err = s.NewReader(ReaderOptions{}).Run(context.Background(), func(b arrow.RecordBatch) error {
		got = append(got, b)
		return nil
	})
	wantCode(t, err, pgerr.InsufficientPrivilege)
	if len(got) != 0 {
		t.Fatalf("read %d batches of the secret", len(got))
	}
	// A FIFO put in the file's place is refused without blocking.
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(link, 0o600); err != nil {
		t.Fatal(err)
	}
	err = s.NewReader(ReaderOptions{}).Run(context.Background(), func(arrow.RecordBatch) error { return nil })
	wantCode(t, err, pgerr.WrongObjectType)
}

// A record longer than max_line_bytes is skipped and counted; the reader's
// memory stays bounded and the records after it are read.
func TestMaxLineBytes(t *testing.T) {
	long := strings.Repeat("x", 3*readSize) // several reads without a newline
	p := writeFile(t, "long.csv", "a\n"+long+"\nb\n\"q\nq"+long+"\"\nc\n"+strings.Repeat("y", 40)+"\nd\n"+long)
	s := mustOpen(t, cols(t, "line text"), map[string]string{"path": p, "max_line_bytes": "32"}, "")
	rows, _, errs := readAll(t, s)
	if strings.Join(rows, ",") != "a,b,c,d" {
		t.Fatalf("rows %v", rows)
	}
	if len(errs) != 4 {
		t.Fatalf("errors %v", errs)
	}
	for _, e := range errs {
		if pgerr.CodeOf(e) != pgerr.ProgramLimitExceeded || !strings.Contains(e.Error(), "max_line_bytes") {
			t.Fatalf("error %v (%s)", e, pgerr.CodeOf(e))
		}
	}
	for i, line := range []string{"line 2:", "line 4:", "line 7:", "line 9:"} {
		if !strings.Contains(errs[i].Error(), line) {
			t.Errorf("error %d = %v, want %s", i, errs[i], line)
		}
	}
	if s.MaxLineBytes() != 32 {
		t.Fatal(s.MaxLineBytes())
	}
	for _, v := range []string{"0", "-1", "x", "2000000000"} {
		_, err := Open(cols(t, "line text"), map[string]string{"path": p, "max_line_bytes": v}, "")
		wantCode(t, err, pgerr.InvalidParameterValue)
	}
	d := mustOpen(t, cols(t, "line text"), map[string]string{"path": p}, "")
	if d.MaxLineBytes() != DefaultMaxLineBytes {
		t.Fatal(d.MaxLineBytes())
	}
}

// A file of one endless line (what /dev/zero would give) is read with a
// buffer bounded by max_line_bytes, not by the file's size.
func TestMaxLineBytesBoundsMemory(t *testing.T) {
	p := writeFile(t, "zeros.csv", strings.Repeat("\x00", 16<<20))
	s := mustOpen(t, cols(t, "line text"), map[string]string{"path": p, "max_line_bytes": "1024"}, "")
	var errs []error
	r := s.NewReader(ReaderOptions{Errors: func(err error) { errs = append(errs, err) }})
	if err := r.Run(context.Background(), func(arrow.RecordBatch) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if len(errs) != 1 || r.Skipped() != 1 {
		t.Fatalf("errors %v", errs)
	}
	if c := cap(r.buf); c > 4*readSize {
		t.Fatalf("buffer grew to %d bytes for a 16 MiB line", c)
	}
}
