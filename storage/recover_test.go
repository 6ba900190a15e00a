package storage

import (
	"fmt"
	"github.com/apache/arrow-go/v18/arrow"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// crashLog runs a sequence of writes and returns the final log bytes, the
// log size after the header and after each write, and the rows after each.
func crashLog(t *testing.T) (log []byte, ends []int64, states [][]string) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, err := s.CreateTable(kvDef(7, true))
	if err != nil {
		t.Fatal(err)
	}
	ends = append(ends, tb.log.size.Load())
	states = append(states, nil)
	ops := []func() error{
		func() error { _, err := tb.Insert(ctx, seq(0, 3)); return err },
		func() error { _, err := tb.Insert(ctx, kvBatch(row(3, "x"), kv{id: ptr(int64(4))})); return err },
		func() error { _, err := tb.Delete(ctx, []int64{1}); return err },
		func() error {
			_, err := tb.Update(ctx, []int64{0, 3}, kvBatch(row(100, "u"), row(103, "w")))
			return err
		},
		func() error { return tb.Truncate(ctx) },
		func() error { // one write of three frames
			_, err := tb.InsertBatches(ctx, []arrow.RecordBatch{seq(20, 22), seq(22, 23), seq(23, 25)})
			return err
		},
		func() error { _, err := tb.Insert(ctx, seq(10, 12)); return err },
	}
	for i, op := range ops {
		if err := op(); err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
		ends = append(ends, tb.log.size.Load())
		states = append(states, dump(tb.Snapshot()))
	}
	s.Close()
	log, err = os.ReadFile(filepath.Join(dir, "7.log"))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(log)) != ends[len(ends)-1] {
		t.Fatalf("log is %d bytes, size says %d", len(log), ends[len(ends)-1])
	}
	return log, ends, states
}

func ptr[T any](v T) *T { return &v }

// reopenWith writes log as table 7's log in a fresh store and returns the
// recovered rows, whether the table exists, and the log size afterwards.
func reopenWith(t *testing.T, log []byte) ([]string, bool, int64) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "7.log")
	if err := os.WriteFile(path, log, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	tb := s.Table(7)
	if tb == nil {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("headerless log not moved aside: %v", err)
		}
		return nil, false, 0
	}
	fi, _ := os.Stat(path)
	return dump(tb.Snapshot()), true, fi.Size()
}

func TestRecoverTornTail(t *testing.T) {
	log, ends, states := crashLog(t)
	// Every byte of the last two records (and the header); a few offsets of
	// each record before them: its frame header, its kind, its middle and end.
	var cuts []int64
	for i := 1; i < len(ends); i++ {
		start, end := ends[i-1], ends[i]
		for c := start; c < end; c++ {
			if i >= len(ends)-2 || c-start < 10 || c == (start+end)/2 || c == end-1 {
				cuts = append(cuts, c)
			}
		}
	}
	for c := int64(0); c < ends[0]; c++ {
		cuts = append(cuts, c)
	}
	cuts = append(cuts, int64(len(log)))
	for _, cut := range cuts {
		// The committed prefix is every record that ends at or before cut.
		k := -1
		for i, e := range ends {
			if e <= cut {
				k = i
			}
		}
		rows, ok, size := reopenWith(t, log[:cut])
		if k < 0 {
			if ok {
				t.Fatalf("cut %d inside the header: table recovered", cut)
			}
			continue
		}
		if !ok {
			t.Fatalf("cut %d: table lost", cut)
		}
		if strings.Join(rows, " ") != strings.Join(states[k], " ") {
			t.Fatalf("cut %d: rows %v, want %v", cut, rows, states[k])
		}
		if size != ends[k] {
			t.Fatalf("cut %d: log is %d bytes after recovery, want %d", cut, size, ends[k])
		}
	}
}

func TestRecoverCorruptLastRecord(t *testing.T) {
	log, ends, states := crashLog(t)
	last := len(ends) - 1
	for off := ends[last-1]; off < ends[last]; off++ {
		bad := append([]byte(nil), log...)
		bad[off] ^= 0x40
		rows, ok, _ := reopenWith(t, bad)
		if !ok || strings.Join(rows, " ") != strings.Join(states[last-1], " ") {
			t.Fatalf("flip at %d: rows %v (ok %v), want %v", off, rows, ok, states[last-1])
		}
	}
}

func TestRecoverWritesAfterRepair(t *testing.T) {
	log, ends, states := crashLog(t)
	dir := t.TempDir()
	// A torn half of the last record, then more writes, then a reopen.
	cut := (ends[len(ends)-2] + ends[len(ends)-1]) / 2
	os.WriteFile(filepath.Join(dir, "7.log"), log[:cut], 0o644)
	s := mustOpen(t, dir)
	tb := s.Table(7)
	if _, err := tb.Insert(ctx, seq(50, 51)); err != nil {
		t.Fatal(err)
	}
	want := dump(tb.Snapshot())
	if fmt.Sprint(want) != fmt.Sprint(append(states[len(states)-2], "12:50,v50")) {
		t.Fatalf("rows after repair and insert: %v", want)
	}
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	checkRows(t, s.Table(7), want)
}

func TestOpenRemovesLeftovers(t *testing.T) {
	dir := t.TempDir()
	tdir := dir
	os.WriteFile(filepath.Join(tdir, "9.log.tmp"), []byte("half a compaction"), 0o644)
	os.WriteFile(filepath.Join(tdir, "8.log"), nil, 0o644)              // created, nothing written
	os.WriteFile(filepath.Join(tdir, "10.log"), []byte{1, 2, 3}, 0o644) // torn header
	s := mustOpen(t, dir)
	defer s.Close()
	if len(s.Tables()) != 0 {
		t.Fatalf("tables: %v", s.Tables())
	}
	var names []string
	ents, _ := os.ReadDir(tdir)
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "10.log.broken LOCK" {
		t.Fatalf("files after Open: %v", names)
	}
}
