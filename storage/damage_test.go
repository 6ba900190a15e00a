package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// openDamaged writes log as table 7's log in a fresh store directory and
// opens it with opts (DamagedDir set to a fresh directory); it returns
// the store (nil on error), the error, the log's path and the damaged dir.
func openDamaged(t *testing.T, log []byte, recover bool) (*Store, error, string, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "tables", "7.log")
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, log, 0o644); err != nil {
		t.Fatal(err)
	}
	var logged []string
	damaged := filepath.Join(dir, "damaged")
	s, err := OpenWith(filepath.Dir(path), Options{RecoverDamaged: recover, DamagedDir: damaged,
		Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	if s != nil {
		t.Cleanup(func() { s.Close() })
	}
	if recover && err == nil {
		t.Logf("log: %s", strings.Join(logged, "\n"))
	}
	return s, err, path, damaged
}

// checkRefused checks that opening log fails with a DamagedError at off
// that names the table, and leaves the file as it was.
func checkRefused(t *testing.T, what string, log []byte, off int64) {
	t.Helper()
	_, err, path, _ := openDamaged(t, log, false)
	var d *DamagedError
	if !errors.As(err, &d) {
		t.Fatalf("%s: open: %v, want a DamagedError", what, err)
	}
	if d.Offset != off || d.OID != 7 || d.Table != "t" || d.Path != path {
		t.Fatalf("%s: %+v, want offset %d", what, d, off)
	}
	msg := err.Error()
	for _, w := range []string{`table "t" (OID 7)`, path, fmt.Sprintf("byte offset %d", off), "--recover-damaged"} {
		if !strings.Contains(msg, w) {
			t.Fatalf("%s: message %q lacks %q", what, msg, w)
		}
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, log) {
		t.Fatalf("%s: a refused Open changed the log (%d bytes, was %d)", what, len(got), len(log))
	}
}

// checkMovedAside opens log with RecoverDamaged and checks the rows are
// want, the log is its first off bytes and damaged/7.log.<off> the rest.
func checkMovedAside(t *testing.T, what string, log []byte, off int64, want []string) {
	t.Helper()
	s, err, path, damaged := openDamaged(t, log, true)
	if err != nil {
		t.Fatalf("%s: open with RecoverDamaged: %v", what, err)
	}
	if rows := dump(s.Table(7).Snapshot()); strings.Join(rows, " ") != strings.Join(want, " ") {
		t.Fatalf("%s: rows %v, want %v", what, rows, want)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, log[:off]) {
		t.Fatalf("%s: log is %d bytes, want its first %d", what, len(got), off)
	}
	moved, err := os.ReadFile(filepath.Join(damaged, fmt.Sprintf("7.log.%d", off)))
	if err != nil || !bytes.Equal(moved, log[off:]) {
		t.Fatalf("%s: damaged part: %d bytes, %v; want the log's last %d", what, len(moved), err, int64(len(log))-off)
	}
}

// A flipped byte in any record but the last: later records are valid, so
// this is damage, not a torn tail; nothing may be cut silently.
func TestDamagedFlipInTheMiddle(t *testing.T) {
	log, ends, states := crashLog(t)
	for i := 1; i < len(ends)-1; i++ {
		start, end := ends[i-1], ends[i]
		for _, off := range []int64{start, start + 3, start + 6, start + 8, (start + end) / 2, end - 1} {
			bad := append([]byte(nil), log...)
			bad[off] ^= 0x40
			what := fmt.Sprintf("flip at %d (record %d, %d..%d)", off, i, start, end)
			checkRefused(t, what, bad, start)
			checkMovedAside(t, what, bad, start, states[i-1])
		}
	}
}

// A zeroed region (as a filesystem may leave after a crash) in the middle
// is damage; at the end, where nothing valid follows, it is a torn tail.
func TestDamagedZeroedRegion(t *testing.T) {
	log, ends, states := crashLog(t)
	bad := append([]byte(nil), log...)
	from, to := ends[2]+5, ends[4]-3
	clear(bad[from:to])
	checkRefused(t, "zeros in the middle", bad, ends[2])
	checkMovedAside(t, "zeros in the middle", bad, ends[2], states[2])

	last := len(ends) - 1
	tail := append(append([]byte(nil), log[:ends[last-1]]...), make([]byte, 4096)...)
	rows, ok, size := reopenWith(t, tail)
	if !ok || strings.Join(rows, " ") != strings.Join(states[last-1], " ") || size != ends[last-1] {
		t.Fatalf("zeroed tail: rows %v (ok %v), size %d, want %v and %d", rows, ok, size, states[last-1], ends[last-1])
	}
}

// retainedLog is crashLog's log of table 7 with a Retain mark at the
// write before the last (a checkpoint recorded it): the log, the end of
// each write and the rows after each.
func retainedLog(t *testing.T) ([]byte, []int64, [][]string) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, err := s.CreateTable(kvDef(7, true))
	if err != nil {
		t.Fatal(err)
	}
	ends := []int64{tb.log.size.Load()}
	states := [][]string{nil}
	for i := 0; i < 4; i++ {
		if _, err := tb.Insert(ctx, seq(int64(10*i), int64(10*i+3))); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, tb.log.size.Load())
		states = append(states, dump(tb.Snapshot()))
		if i == 2 {
			if err := tb.Retain(tb.LSN()); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.Close()
	log, err := os.ReadFile(filepath.Join(dir, "7.log"))
	if err != nil {
		t.Fatal(err)
	}
	return log, ends, states
}

// Cutting the log at every byte of its last two writes: the last write,
// which no checkpoint recorded, may go (a torn tail); a cut into the write
// a checkpoint recorded loses acknowledged rows and is refused.
func TestDamagedCutBeforeCheckpoint(t *testing.T) {
	log, ends, states := retainedLog(t)
	n := len(ends) - 1 // writes; write n-1 (LSN 3) is retained
	for cut := ends[n-2]; cut < ends[n]; cut++ {
		what := fmt.Sprintf("cut at %d", cut)
		if cut >= ends[n-1] {
			rows, ok, size := reopenWith(t, log[:cut])
			if !ok || strings.Join(rows, " ") != strings.Join(states[n-1], " ") || size != ends[n-1] {
				t.Fatalf("%s: rows %v, size %d; want %v, %d", what, rows, size, states[n-1], ends[n-1])
			}
			continue
		}
		_, err, path, _ := openDamaged(t, log[:cut], false)
		var d *DamagedError
		if !errors.As(err, &d) || d.Offset != ends[n-2] || !strings.Contains(err.Error(), "a checkpoint recorded write 3") {
			t.Fatalf("%s: open: %v, want a DamagedError at %d", what, err, ends[n-2])
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, log[:cut]) {
			t.Fatalf("%s: a refused Open changed the log (%d bytes, was %d)", what, len(got), cut)
		}
	}
	// Starting anyway keeps writes 1 and 2 and clears the marks, so a
	// reader resuming from write 3 rebuilds; the next start is clean.
	s, err, path, damaged := openDamaged(t, log[:ends[n-1]-1], true)
	if err != nil {
		t.Fatal(err)
	}
	// What is left of the acknowledged write is moved aside, not cut.
	moved, err := os.ReadFile(filepath.Join(damaged, fmt.Sprintf("7.log.%d", ends[n-2])))
	if err != nil || !bytes.Equal(moved, log[ends[n-2]:ends[n-1]-1]) {
		t.Fatalf("damaged part: %d bytes, %v", len(moved), err)
	}
	tb := s.Table(7)
	if rows := dump(tb.Snapshot()); strings.Join(rows, " ") != strings.Join(states[n-2], " ") {
		t.Fatalf("rows %v, want %v", rows, states[n-2])
	}
	if _, err := tb.FeedFrom(3); !errors.Is(err, ErrPositionGone) {
		t.Fatalf("FeedFrom(3) after recovery: %v", err)
	}
	s.Close()
	s, err = Open(filepath.Dir(path))
	if err != nil {
		t.Fatalf("second start: %v", err)
	}
	s.Close()
}

// Every damaged log is reported at once, not one per start.
func TestDamagedReportsEveryTable(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	for oid := uint32(1); oid <= 3; oid++ {
		tb, err := s.CreateTable(kvDef(oid, true))
		if err != nil {
			t.Fatal(err)
		}
		for i := int64(0); i < 5; i++ {
			if _, err := tb.Insert(ctx, seq(10*i, 10*i+5)); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.Close()
	for _, oid := range []int{1, 3} {
		path := filepath.Join(dir, fmt.Sprintf("%d.log", oid))
		b, _ := os.ReadFile(path)
		b[len(b)/2] ^= 1
		os.WriteFile(path, b, 0o644)
	}
	_, err := OpenWith(dir, Options{DamagedDir: filepath.Join(t.TempDir(), "damaged")})
	var d *DamagedError
	if !errors.As(err, &d) || !strings.Contains(err.Error(), "(OID 1)") || !strings.Contains(err.Error(), "(OID 3)") ||
		strings.Contains(err.Error(), "(OID 2)") {
		t.Fatalf("open: %v", err)
	}
	s = mustOpen(t, t.TempDir()) // the lock was released: nothing leaked
	s.Close()
	if s, err = OpenWith(dir, Options{RecoverDamaged: true, DamagedDir: filepath.Join(t.TempDir(), "damaged")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// BenchmarkFindFrame measures the resync scan over bytes holding no frame
// (the worst case: a damaged or zeroed tail scanned to its end).
func BenchmarkFindFrame(b *testing.B) {
	for _, kind := range []string{"random", "zeros"} {
		b.Run(kind, func(b *testing.B) {
			buf := make([]byte, 16<<20)
			if kind == "random" {
				for i := range buf {
					buf[i] = byte(uint32(i) * 2654435761 >> 13)
				}
			}
			path := filepath.Join(b.TempDir(), "x")
			os.WriteFile(path, buf, 0o644)
			f, _ := os.Open(path)
			defer f.Close()
			b.SetBytes(int64(len(buf)))
			for i := 0; i < b.N; i++ {
				if at, err := findFrame(f, 0, int64(len(buf))); err != nil || at >= 0 {
					b.Fatal(at, err)
				}
			}
		})
	}
}

// A damaged header with the table's writes after it is refused, with or
// without RecoverDamaged (the definition is gone), and the log stays put;
// a header torn at creation (nothing after it) is a table never created.
func TestDamagedHeader(t *testing.T) {
	log, ends, _ := crashLog(t)
	bad := append([]byte(nil), log...)
	bad[20] ^= 0x08
	for _, recover := range []bool{false, true} {
		_, err, path, _ := openDamaged(t, bad, recover)
		var d *DamagedError
		if !errors.As(err, &d) || !d.NoHeader || d.OID != 7 || !strings.Contains(err.Error(), "Restore the data directory") {
			t.Fatalf("recover %v: open: %v", recover, err)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, bad) {
			t.Fatalf("recover %v: the log changed", recover)
		}
	}
	torn := append([]byte(nil), log[:ends[0]]...)
	torn[20] ^= 0x08
	if _, ok, _ := reopenWith(t, torn); ok {
		t.Fatal("a table with a torn header was recovered")
	}
}
