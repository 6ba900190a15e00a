package changelog

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

type frame struct {
	epoch   uint64
	payload []byte
}

// readAll reads every committed frame after after.
func readAll(t *testing.T, l *Log, after uint64) []frame {
	t.Helper()
	c, err := l.NewCursor(after)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out []frame
	for {
		e, p, ok, err := c.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, frame{e, p})
	}
}

func equalFrames(a, b []frame) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].epoch != b[i].epoch || !bytes.Equal(a[i].payload, b[i].payload) {
			return false
		}
	}
	return true
}

// TestRandomLog appends random frames over several segments, commits,
// reopens, trims, and checks every cursor position against a model.
func TestRandomLog(t *testing.T) {
	defer func(n int64) { SegmentBytes = n }(SegmentBytes)
	SegmentBytes = 300
	for seed := int64(0); seed < 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		dir := t.TempDir()
		l, err := Open(dir, 10)
		if err != nil {
			t.Fatal(err)
		}
		var model []frame // committed
		var pend []frame
		epoch := uint64(10)
		for i := 0; i < 200; i++ {
			switch r := rng.Intn(10); {
			case r < 6:
				if rng.Intn(3) > 0 || len(pend) == 0 {
					epoch += uint64(1 + rng.Intn(3))
				}
				p := make([]byte, rng.Intn(60))
				rng.Read(p)
				if err := l.Append(epoch, p); err != nil {
					t.Fatal(err)
				}
				pend = append(pend, frame{epoch, p})
			case r < 8:
				if err := l.Commit(rng.Intn(2) == 0); err != nil {
					t.Fatal(err)
				}
				model = append(model, pend...)
				pend = nil
			case r < 9:
				// reopen: uncommitted frames written to the file survive a
				// kill -9 (they are in the page cache) but were never
				// visible; this test only checks committed ones.
				if err := l.Commit(true); err != nil {
					t.Fatal(err)
				}
				model = append(model, pend...)
				pend = nil
				l.Close()
				if l, err = Open(dir, 0); err != nil {
					t.Fatal(err)
				}
			default:
				if len(model) > 0 {
					keep := model[rng.Intn(len(model))].epoch
					before := l.From()
					if err := l.Trim(keep); err != nil {
						t.Fatal(err)
					}
					if l.From() > max(keep, before) {
						t.Fatalf("seed %d: Trim(%d) raised From to %d", seed, keep, l.From())
					}
				}
			}
			from := l.From()
			var want []frame
			for _, f := range model {
				if f.epoch > from {
					want = append(want, f)
				}
			}
			if got := readAll(t, l, from); !equalFrames(got, want) {
				t.Fatalf("seed %d step %d: read %d frames after %d, want %d", seed, i, len(got), from, len(want))
			}
			if len(model) > 0 {
				after := model[rng.Intn(len(model))].epoch
				if after >= from {
					var w []frame
					for _, f := range model {
						if f.epoch > after {
							w = append(w, f)
						}
					}
					if got := readAll(t, l, after); !equalFrames(got, w) {
						t.Fatalf("seed %d step %d: after %d: got %d frames, want %d", seed, i, after, len(got), len(w))
					}
				}
			}
		}
		l.Close()
	}
}

// TestCursorFollows reads while appending: a cursor sees only committed
// frames and picks up new ones and new segments.
func TestCursorFollows(t *testing.T) {
	defer func(n int64) { SegmentBytes = n }(SegmentBytes)
	SegmentBytes = 100
	l, err := Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := l.NewCursor(0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for e := uint64(1); e <= 30; e++ {
		if err := l.Append(e, []byte(fmt.Sprint("frame ", e))); err != nil {
			t.Fatal(err)
		}
		if _, _, ok, err := c.Next(); ok || err != nil {
			t.Fatalf("epoch %d: an uncommitted frame was read (%v)", e, err)
		}
		if err := l.Commit(false); err != nil {
			t.Fatal(err)
		}
		got, p, ok, err := c.Next()
		if !ok || err != nil || got != e || string(p) != fmt.Sprint("frame ", e) {
			t.Fatalf("epoch %d: read %d %q %v %v", e, got, p, ok, err)
		}
	}
	if len(l.segs) < 3 {
		t.Fatalf("%d segments, want several", len(l.segs))
	}
	// Trim past the cursor's segment: the cursor reports it.
	c2, _ := l.NewCursor(0)
	defer c2.Close()
	if err := l.Trim(25); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c2.Next(); !errors.Is(err, ErrTrimmed) {
		t.Fatalf("cursor over a trimmed segment: %v", err)
	}
	if _, err := l.NewCursor(1); !errors.Is(err, ErrTrimmed) {
		t.Fatalf("NewCursor before From: %v", err)
	}
}

// TestTornTail damages the newest segment's tail in several ways: Open
// keeps exactly the intact frames before the damage and appends after it.
func TestTornTail(t *testing.T) {
	for cut := 1; cut < 40; cut++ {
		dir := t.TempDir()
		l, err := Open(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for e := uint64(1); e <= 3; e++ {
			l.Append(e, bytes.Repeat([]byte{byte(e)}, 10))
		}
		l.Commit(true)
		path := l.segs[0].path
		l.Close()
		data, _ := os.ReadFile(path)
		flip := cut%2 == 0
		if flip {
			data[len(data)-cut%26-1] ^= 0xff // corrupt inside the last frame
		} else {
			data = data[:len(data)-cut%26-1] // torn
		}
		os.WriteFile(path, data, 0o644)
		l, err = Open(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, l, 0)
		if len(got) != 2 || got[1].epoch != 2 {
			t.Fatalf("cut %d: %d frames after damage to the last", cut, len(got))
		}
		if err := l.Append(4, []byte("x")); err != nil {
			t.Fatal(err)
		}
		l.Commit(true)
		if got := readAll(t, l, 2); len(got) != 1 || got[0].epoch != 4 {
			t.Fatalf("cut %d: append after a truncated tail: %v", cut, got)
		}
		l.Close()
	}
	_ = filepath.Join
}

// TestResetAndBroken: a failed write breaks the log until Reset, which
// starts it over at the given epoch.
func TestResetAndBroken(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, 5)
	if err != nil {
		t.Fatal(err)
	}
	l.Append(6, []byte("a"))
	l.Commit(true)
	l.f.Close() // writes now fail
	if err := l.Append(7, []byte("b")); !errors.Is(err, ErrBroken) {
		t.Fatalf("append to a closed file: %v", err)
	}
	if err := l.Commit(true); !errors.Is(err, ErrBroken) {
		t.Fatalf("commit of a broken log: %v", err)
	}
	if err := l.Reset(9); err != nil {
		t.Fatal(err)
	}
	if l.From() != 9 {
		t.Fatalf("From after Reset = %d", l.From())
	}
	if err := l.Append(10, []byte("c")); err != nil {
		t.Fatal(err)
	}
	l.Commit(true)
	if got := readAll(t, l, 9); len(got) != 1 || got[0].epoch != 10 {
		t.Fatalf("after Reset: %v", got)
	}
	if _, err := l.NewCursor(6); !errors.Is(err, ErrTrimmed) {
		t.Fatalf("cursor before a Reset's from: %v", err)
	}
	l.Close()
}

// TestDamagedMiddle: a bad frame followed by valid ones is damage, not a
// torn tail: Open refuses (ErrDamaged) instead of cutting committed frames.
func TestDamagedMiddle(t *testing.T) {
	for _, zero := range []bool{false, true} {
		dir := t.TempDir()
		l, err := Open(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		var ends []int64
		for e := uint64(1); e <= 4; e++ {
			l.Append(e, bytes.Repeat([]byte{byte(e)}, 10))
			l.Commit(true)
			ends = append(ends, l.segs[0].size)
		}
		path := l.segs[0].path
		l.Close()
		data, _ := os.ReadFile(path)
		if zero {
			clear(data[ends[0]+3 : ends[2]-2])
		} else {
			data[ends[1]+20] ^= 0x01
		}
		os.WriteFile(path, data, 0o644)
		if _, err := Open(dir, 0); !errors.Is(err, ErrDamaged) {
			t.Fatalf("zero %v: open: %v, want ErrDamaged", zero, err)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
			t.Fatalf("zero %v: Open changed the damaged segment", zero)
		}
	}
}
