package datagen

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/connector/internal/position"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// step is one emitted batch's rows and the reader's position paired with it.
type step struct {
	rows [][]types.Value
	pos  []byte
}

// runSteps runs r to its end, recording each batch with Position() taken
// inside emit; last is the position after Run returned.
func runSteps(t *testing.T, r *Reader, cols []types.Column) (steps []step, last []byte) {
	t.Helper()
	err := r.Run(context.Background(), func(rec arrow.RecordBatch) error {
		var s step
		for i := range int(rec.NumRows()) {
			row := make([]types.Value, len(cols))
			for c := range cols {
				row[c] = types.ValueAt(rec.Column(c), i, cols[c].Type)
			}
			s.rows = append(s.rows, row)
		}
		s.pos = r.Position()
		steps = append(steps, s)
		return nil
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return steps, r.Position()
}

// A reader resumed at any position a reader reported yields exactly the
// rows after it, ends at the same place, and restarts the pacing schedule.
func TestResumeAtPositions(t *testing.T) {
	cols := []types.Column{col(t, "id", "bigint"), col(t, "v", "integer"), col(t, "s", "text"), col(t, "ts", "timestamp")}
	cfg := mustConfig(t, cols, map[string]string{"rows": "495", "rows_per_second": "100", "seed": "11",
		"fields.v.null_rate": "0.3", "fields.ts.max_past": "5 seconds"})
	clock := &fakeClock{now: time.Unix(0, 0)}
	r := NewReaderWithClock(cfg, clock)
	start := r.Position()
	steps, end := runSteps(t, r, cols)
	if len(steps) != 50 {
		t.Fatalf("%d batches, want 50 of 10 rows (the last 5)", len(steps))
	}
	var all [][]types.Value
	for _, s := range steps {
		all = append(all, s.rows...)
	}
	if want := drain(t, cfg, 1000, 77); !reflect.DeepEqual(all, want) {
		t.Fatal("reader rows differ from the generator's")
	}
	// Every split point: the start, after each batch, the end.
	positions := [][]byte{start}
	for _, s := range steps {
		positions = append(positions, s.pos)
	}
	done := 0
	for i, pos := range positions {
		c := &fakeClock{now: time.Unix(100, 0)}
		rr := NewReaderWithClock(cfg, c)
		if err := rr.Seek(pos); err != nil {
			t.Fatalf("Seek(%x): %v", pos, err)
		}
		got, last := runSteps(t, rr, cols)
		var rows [][]types.Value
		for _, s := range got {
			rows = append(rows, s.rows...)
		}
		if !reflect.DeepEqual(rows, all[done:]) && len(rows)+len(all[done:]) > 0 {
			t.Fatalf("resumed after batch %d: %d rows differ from the %d after it", i, len(rows), len(all)-done)
		}
		if !reflect.DeepEqual(last, end) {
			t.Fatalf("resumed after batch %d: ends at %x, want %x", i, last, end)
		}
		// The schedule starts at the resume point: the first batch leaves
		// at once, each later one 10 ms per row after the previous.
		if len(got) > 0 {
			var slept time.Duration
			for _, d := range c.sleeps {
				slept += d
			}
			if want := time.Duration(len(rows)-len(got[0].rows)) * 10 * time.Millisecond; len(c.sleeps) != len(got)-1 || (slept-want).Abs() > time.Microsecond {
				t.Fatalf("resumed after batch %d: sleeps %v for %d batches, want %v in all", i, c.sleeps, len(got), want)
			}
		}
		if i < len(steps) {
			done += len(steps[i].rows)
		}
	}
}

// Seek takes any row, not only batch boundaries.
func TestSeekAnyRow(t *testing.T) {
	cols := []types.Column{col(t, "id", "bigint"), col(t, "s", "varchar(5)")}
	cfg := mustConfig(t, cols, map[string]string{"seed": "3", "fields.id.kind": "sequence"}) // unbounded
	want := drain(t, cfg, 10000, 4096)
	for _, row := range []uint64{0, 1, 4095, 4096, 5000, 9999} {
		r := NewReader(cfg)
		if err := r.Seek(position.Encode(position.DatagenV1, row)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var got [][]types.Value
		err := r.Run(ctx, func(rec arrow.RecordBatch) error {
			for i := range int(rec.NumRows()) {
				got = append(got, []types.Value{types.ValueAt(rec.Column(0), i, cols[0].Type), types.ValueAt(rec.Column(1), i, cols[1].Type)})
			}
			cancel()
			return nil
		})
		if err != context.Canceled {
			t.Fatalf("Run: %v", err)
		}
		n := min(len(got), len(want)-int(row))
		if !reflect.DeepEqual(got[:n], want[row:int(row)+n]) {
			t.Fatalf("from row %d: rows differ", row)
		}
		if got[0][0] != int64(row+1) {
			t.Fatalf("from row %d: first id %v", row, got[0][0])
		}
	}
}

func TestSeekErrors(t *testing.T) {
	cols := []types.Column{col(t, "id", "bigint")}
	cfg := mustConfig(t, cols, map[string]string{"rows": "10"})
	for _, tc := range []struct {
		pos  []byte
		code pgerr.Code
	}{
		{[]byte{}, pgerr.DataCorrupted},
		{position.Encode(position.NexmarkV1, 3), pgerr.DataCorrupted},
		{position.Encode(position.DatagenV1, 11), pgerr.ObjectNotInPrerequisiteState},
		{position.Encode(position.DatagenV1, 1<<63), pgerr.ObjectNotInPrerequisiteState},
	} {
		wantCode(t, NewReader(cfg).Seek(tc.pos), tc.code)
	}
	// At the end: no rows, and Run ends at once.
	r := NewReader(cfg)
	if err := r.Seek(position.Encode(position.DatagenV1, 10)); err != nil {
		t.Fatal(err)
	}
	if steps, _ := runSteps(t, r, cols); len(steps) != 0 {
		t.Fatalf("%d batches after the end", len(steps))
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
	cols := []types.Column{col(t, "id", "bigint")}
	cfg := mustConfig(t, cols, map[string]string{"rows_per_second": "100"})
	ctx, cancel := context.WithCancel(context.Background())
	r := NewReaderWithClock(cfg, &cancelClock{fakeClock{now: time.Unix(0, 0)}, cancel})
	var last []byte
	err := r.Run(ctx, func(rec arrow.RecordBatch) error {
		last = r.Position()
		return nil
	})
	if err != context.Canceled || last == nil {
		t.Fatalf("Run: %v, emitted %x", err, last)
	}
	if got := r.Position(); !reflect.DeepEqual(got, last) || !reflect.DeepEqual(got, position.Encode(position.DatagenV1, 10)) {
		t.Fatalf("position after the canceled run %x, last emitted %x", got, last)
	}
}
