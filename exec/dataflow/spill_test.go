package dataflow

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
)

// spillFiles lists the files in dir.
func spillFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// drainValues reads the updates ready now as "op v" strings, checking
// that epochs go up.
func drainValues(t *testing.T, sub *Subscription, last *uint64) []string {
	t.Helper()
	var out []string
	for {
		u, ok, err := sub.TryNext()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		if u.Epoch <= *last {
			t.Fatalf("epoch %d after %d", u.Epoch, *last)
		}
		*last = u.Epoch
		out = append(out, updateValues(u)...)
	}
}

func updateValues(u Update) []string {
	var out []string
	row := 0
	for _, r := range u.Rows {
		for _, v := range r.Column(0).(*array.Int64).Int64Values() {
			op := stream.Insert
			if u.Ops != nil {
				op = u.Ops[row]
			}
			out = append(out, fmt.Sprintf("%s %d", op, v))
			row++
		}
	}
	return out
}

// A subscriber of a query past its memory bound spills: in memory, then
// on disk, then (caught up) in memory again, it reads every change once,
// in order; the spill file goes when it has caught up and when it ends.
func TestSpillKeepsEveryChangeInOrder(t *testing.T) {
	tbl := &fakeTable{}
	dir := t.TempDir()
	rt := New(Config{BarrierInterval: -1, SubscribeBufferBytes: 200, SubscribeSpill: dir}, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	defer rt.Close()
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	sub, err := rt.SubscribeQuery(JobSpec{ID: 1000, Name: "q", Plan: scan, Cols: cols}, SubOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	next := int64(0)
	write := func(epochs int) {
		for i := 0; i < epochs; i++ {
			tbl.insert(next, next+1000)
			want = append(want, fmt.Sprintf("insert %d", next), fmt.Sprintf("insert %d", next+1000))
			if next%3 == 2 {
				tbl.delete(next - 1)
				want = append(want, fmt.Sprintf("delete %d", next-1))
			}
			next++
			flush(t, rt)
		}
	}
	var last uint64
	write(10)
	if f := spillFiles(t, dir); len(f) != 1 {
		t.Fatalf("after 10 unread epochs: spill files %v, want 1", f)
	}
	if m := rt.SubscribeMemory(); m > 200 {
		t.Fatalf("subscriber holds %d bytes in memory, bound 200", m)
	}
	got = append(got, drainValues(t, sub, &last)...)
	if f := spillFiles(t, dir); len(f) != 0 {
		t.Fatalf("caught up: spill files %v, want none", f)
	}
	write(2) // in memory again
	if f := spillFiles(t, dir); len(f) != 0 {
		t.Fatalf("within the bound: spill files %v", f)
	}
	write(10) // and spilling again
	got = append(got, drainValues(t, sub, &last)...)
	read := len(want)
	write(10) // unread at the end
	sub.Close()
	if f := spillFiles(t, dir); len(f) != 0 {
		t.Fatalf("closed: spill files %v, want none", f)
	}
	if strings.Join(got, ",") != strings.Join(want[:read], ",") {
		t.Fatalf("got\n%v\nwant\n%v", got, want)
	}
	if rt.SubscribeMemory() != 0 {
		t.Fatalf("closed subscriber still counts %d bytes", rt.SubscribeMemory())
	}
}

// The same with the writer and the reader on their own goroutines (run
// with -race): the subscriber moves between memory and its spill while
// the view pushes.
func TestSpillConcurrentReader(t *testing.T) {
	tbl := &fakeTable{}
	dir := t.TempDir()
	rt := New(Config{BarrierInterval: -1, SubscribeBufferBytes: 100, SubscribeSpill: dir}, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	defer rt.Close()
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	sub, err := rt.SubscribeQuery(JobSpec{ID: 1000, Name: "q", Plan: scan, Cols: cols}, SubOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n = 300
	errc := make(chan error, 1)
	go func() {
		for i := int64(0); i < n; i++ {
			tbl.insert(i)
			if err := rt.Flush(ctx); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	var got []string
	for len(got) < n {
		u, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("after %d rows: %v", len(got), err)
		}
		got = append(got, updateValues(u)...)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	for i, g := range got {
		if g != fmt.Sprintf("insert %d", i) {
			t.Fatalf("row %d is %q", i, g)
		}
	}
}

// Past its spill's bound a subscription ends with 53400 naming the flag,
// after the changes it kept.
func TestSpillBound(t *testing.T) {
	tbl := &fakeTable{}
	dir := t.TempDir()
	rt := New(Config{BarrierInterval: -1, SubscribeBufferBytes: 100, SubscribeSpill: dir, SubscribeSpillBytes: 200}, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	defer rt.Close()
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	sub, err := rt.SubscribeQuery(JobSpec{ID: 1000, Name: "q", Plan: scan, Cols: cols}, SubOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for i := int64(0); i < 20; i++ {
		tbl.insert(i)
		flush(t, rt)
	}
	var got []string
	for {
		u, ok, err := sub.TryNext()
		if err != nil {
			var pe *pgerr.Error
			if !errors.As(err, &pe) || pe.Code != pgerr.ConfigurationLimitExceeded || !strings.Contains(pe.Message, "(--subscribe-spill-limit)") {
				t.Fatalf("end: %v", err)
			}
			break
		}
		if !ok {
			t.Fatalf("no end after %v", got)
		}
		got = append(got, updateValues(u)...)
	}
	if len(got) == 0 || len(got) >= 20 || got[0] != "insert 0" || got[len(got)-1] != fmt.Sprintf("insert %d", len(got)-1) {
		t.Fatalf("kept before the end: %v", got)
	}
}

// Without a spill directory, a subscriber of a query past its bound, or
// past all subscribers' bound, ends with 53400 naming the flag.
func TestOverflowWithoutSpillNamesTheBound(t *testing.T) {
	tbl := &fakeTable{}
	rt := New(Config{BarrierInterval: -1, SubscribeBufferBytes: 1000, SubscribeMemoryLimit: 1000}, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	defer rt.Close()
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	a, err := rt.SubscribeQuery(JobSpec{ID: 1000, Name: "q", Plan: scan, Cols: cols}, SubOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := rt.SubscribeQuery(JobSpec{ID: 1001, Name: "q", Plan: scan, Cols: cols}, SubOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := int64(0); i < 20; i++ {
		tbl.insert(i, i+100, i+200)
		flush(t, rt)
	}
	flags := map[string]bool{}
	for _, sub := range []*Subscription{a, b} {
		for {
			_, ok, err := sub.TryNext()
			if err != nil {
				var pe *pgerr.Error
				if !errors.As(err, &pe) || pe.Code != pgerr.ConfigurationLimitExceeded {
					t.Fatalf("end: %v", err)
				}
				for _, f := range []string{"--subscribe-buffer-bytes", "--subscribe-memory-limit"} {
					if strings.Contains(pe.Message, "("+f+")") {
						flags[f] = true
					}
				}
				break
			}
			if !ok {
				t.Fatal("no end")
			}
		}
	}
	if !flags["--subscribe-memory-limit"] {
		t.Fatalf("no subscriber was ended by the limit of all: %v", flags)
	}
	if rt.SubscribeMemory() > 1000 {
		t.Fatalf("subscribers hold %d bytes, limit 1000", rt.SubscribeMemory())
	}
}
