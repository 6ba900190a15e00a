package nexmark

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/connector/internal/position"
	"github.com/streamsql/streamsql/pgerr"
)

// A generator set to event n yields what one from 0 yields after n events:
// every event is seeded by its own id.
func TestGeneratorSetPosition(t *testing.T) {
	cfg := Config{Events: 20000, Seed: 5, FirstEventID: 7}
	rng := rand.New(rand.NewPCG(1, 2))
	rest := func(g *Generator) (s stream) {
		for {
			b, err := g.Next(int(rng.Int64N(700)) + 1)
			if errors.Is(err, io.EOF) {
				return s
			}
			if err != nil {
				t.Fatal(err)
			}
			s.person = append(s.person, rowsOf(b.Person)...)
			s.auction = append(s.auction, rowsOf(b.Auction)...)
			s.bid = append(s.bid, rowsOf(b.Bid)...)
			s.events += b.Events
		}
	}
	for _, n := range []int64{0, 1, 49, 50, 19999, 20000, rng.Int64N(20000), rng.Int64N(20000), rng.Int64N(20000)} {
		from0 := New(cfg)
		if n > 0 {
			if b, err := from0.Next(int(n)); err != nil || b.Events != n { // all tables: a row per event
				t.Fatalf("Next(%d): %d events, %v", n, b.Events, err)
			}
		}
		at := New(cfg)
		at.SetPosition(n)
		want, got := rest(from0), rest(at)
		if !reflect.DeepEqual(got, want) || got.events != 20000-n {
			t.Fatalf("from event %d: %d events, want %d, or rows differ", n, got.events, 20000-n)
		}
	}
}

// step is one emitted batch's rows and the reader's position paired with it.
type step struct {
	rows [][]string
	pos  []byte
}

func runSteps(t *testing.T, r *Reader) (steps []step, last []byte) {
	t.Helper()
	err := r.Run(context.Background(), func(rec arrow.RecordBatch) error {
		steps = append(steps, step{rowsOf(rec), r.Position()})
		return nil
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return steps, r.Position()
}

// For each table, a reader resumed at a position a reader reported yields
// exactly the rows after it, ends at the same place, and restarts its
// pacing schedule there.
func TestReaderResume(t *testing.T) {
	all := collect(t, Config{Events: 5000, Seed: 9, EventsPerSecond: 2000}, 333)
	for table, want := range map[string][][]string{"person": all.person, "auction": all.auction, "bid": all.bid} {
		cfg := Config{Events: 5000, Seed: 9, EventsPerSecond: 2000, Paced: true, Table: table}
		r := NewReaderWithClock(cfg, &fakeClock{now: time.Unix(0, 0)})
		positions := [][]byte{r.Position()}
		steps, end := runSteps(t, r)
		var rows [][]string
		for _, s := range steps {
			rows = append(rows, s.rows...)
			positions = append(positions, s.pos)
		}
		if !reflect.DeepEqual(rows, want) || len(steps) < 10 {
			t.Fatalf("%s: %d rows in %d batches differ from the stream's %d", table, len(rows), len(steps), len(want))
		}
		done := 0
		for i, pos := range positions {
			c := &fakeClock{now: time.Unix(50, 0)}
			rr := NewReaderWithClock(cfg, c)
			if err := rr.Seek(pos); err != nil {
				t.Fatal(err)
			}
			got, last := runSteps(t, rr)
			var rest [][]string
			for _, s := range got {
				rest = append(rest, s.rows...)
			}
			if len(rest) != len(rows)-done || len(rest) > 0 && !reflect.DeepEqual(rest, rows[done:]) {
				t.Fatalf("%s after batch %d: %d rows, want the %d after it", table, i, len(rest), len(rows)-done)
			}
			if !reflect.DeepEqual(last, end) {
				t.Fatalf("%s after batch %d: ends at %x, want %x", table, i, last, end)
			}
			// A fresh schedule: the first batch leaves at once, and all the
			// batches take the event time they span, not the time since 0.
			var slept time.Duration
			for _, d := range c.sleeps {
				slept += d
			}
			if len(got) > 1 {
				first, lastEv := decodeEvent(t, got[0].pos), decodeEvent(t, got[len(got)-1].pos)
				span := time.Duration(float64(lastEv-first) / cfg.EventsPerSecond * float64(time.Second))
				if (slept-span).Abs() > time.Millisecond || len(c.sleeps) != len(got)-1 {
					t.Fatalf("%s after batch %d: slept %v in %d sleeps, want %v", table, i, slept, len(c.sleeps), span)
				}
			}
			if i < len(steps) {
				done += len(steps[i].rows)
			}
		}
	}
}

// decodeEvent is the event number in a reader's position (a split
// reader's records its groups too).
func decodeEvent(t *testing.T, pos []byte) int64 {
	t.Helper()
	v, err := position.Decode(pos, position.NexmarkV1, 1, "nexmark")
	if len(pos) > 0 && pos[0] == position.NexmarkV2 {
		v, err = position.Decode(pos, position.NexmarkV2, 2, "nexmark")
	}
	if err != nil {
		t.Fatal(err)
	}
	return int64(v[0])
}

func TestSeekErrors(t *testing.T) {
	cfg := Config{Events: 100, Table: "bid"}
	for _, tc := range []struct {
		pos  []byte
		code pgerr.Code
	}{
		{[]byte{position.NexmarkV1}, pgerr.DataCorrupted},
		{position.Encode(position.DatagenV1, 3), pgerr.DataCorrupted},
		{position.Encode(position.NexmarkV1, 101), pgerr.ObjectNotInPrerequisiteState},
	} {
		if err := NewReader(cfg).Seek(tc.pos); pgerr.CodeOf(err) != tc.code {
			t.Fatalf("Seek(%x) = %v, want %s", tc.pos, err, tc.code)
		}
	}
	r := NewReader(cfg)
	if err := r.Seek(position.Encode(position.NexmarkV1, 100)); err != nil {
		t.Fatal(err)
	}
	if steps, _ := runSteps(t, r); len(steps) != 0 {
		t.Fatalf("%d batches after the end", len(steps))
	}
	// Unbounded: any event number.
	r = NewReader(Config{Table: "person"})
	if err := r.Seek(position.Encode(position.NexmarkV1, 1<<40)); err != nil {
		t.Fatal(err)
	}
	// A split reader's position records its groups: one of another layout
	// (an unsplit reader's, one of other groups) is refused, so a view
	// resumed with other readers' steps is rebuilt rather than skipping or
	// repeating events.
	split := func() *Reader {
		r := NewReader(Config{Events: 1000, Table: "bid"})
		if err := r.Split(1, 2); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, pos := range [][]byte{position.Encode(position.NexmarkV1, 100), position.Encode(position.NexmarkV2, 100, 7)} {
		if err := split().Seek(pos); pgerr.CodeOf(err) == "" {
			t.Fatalf("a split reader resumed at %x", pos)
		}
	}
	if err := split().Seek(position.Encode(position.NexmarkV2, 100, DefaultBatchRows/46)); err != nil {
		t.Fatal(err)
	}
}

// cancelClock cancels the run when slept on, as a shutdown during a pause.
type cancelClock struct {
	fakeClock
	cancel context.CancelFunc
}

func (c *cancelClock) Sleep(ctx context.Context, d time.Duration) error {
	c.cancel()
	return ctx.Err()
}

// A run canceled while pacing holds a generated batch it never emitted:
// the position stays after the last batch emitted.
func TestPositionAfterCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cfg := Config{Table: "auction", EventsPerSecond: 1000, Paced: true}
	r := NewReaderWithClock(cfg, &cancelClock{fakeClock{now: time.Unix(0, 0)}, cancel})
	var last []byte
	err := r.Run(ctx, func(rec arrow.RecordBatch) error {
		last = r.Position()
		return nil
	})
	if err != context.Canceled || last == nil {
		t.Fatalf("Run: %v, emitted %x", err, last)
	}
	if got := r.Position(); !reflect.DeepEqual(got, last) {
		t.Fatalf("position after the canceled run %x, last emitted %x", got, last)
	}
}
