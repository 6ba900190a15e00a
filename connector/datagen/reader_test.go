package datagen

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/types"
)

// fakeClock advances only when slept on.
type fakeClock struct {
	now    time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

// runAll runs r to its end and returns the batches' row counts and rows.
func runAll(t *testing.T, r *Reader, cols []types.Column) ([]int, [][]types.Value) {
	t.Helper()
	var sizes []int
	var rows [][]types.Value
	err := r.Run(context.Background(), func(rec arrow.RecordBatch) error {
		sizes = append(sizes, int(rec.NumRows()))
		for i := range int(rec.NumRows()) {
			row := make([]types.Value, len(cols))
			for c := range cols {
				row[c] = types.ValueAt(rec.Column(c), i, cols[c].Type)
			}
			rows = append(rows, row)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return sizes, rows
}

func TestReaderRows(t *testing.T) {
	cols := []types.Column{col(t, "id", "bigint"), col(t, "v", "integer")}
	cfg := mustConfig(t, cols, map[string]string{"rows": "5000", "fields.id.kind": "sequence", "fields.v.min": "1", "fields.v.max": "9", "seed": "7"})
	sizes, rows := runAll(t, NewReader(cfg), cols)
	if !reflect.DeepEqual(sizes, []int{DefaultBatchRows, 5000 - DefaultBatchRows}) {
		t.Errorf("batch sizes %v", sizes)
	}
	if want := drain(t, cfg, 1<<20, 333); !reflect.DeepEqual(rows, want) {
		t.Fatalf("reader rows differ from the generator's")
	}
	for i, r := range rows {
		if r[0] != int64(i+1) {
			t.Fatalf("row %d: id %v", i, r[0])
		}
	}
}

func TestReaderPacing(t *testing.T) {
	cols := []types.Column{col(t, "id", "bigint")}
	cfg := mustConfig(t, cols, map[string]string{"rows": "35", "rows_per_second": "100"})
	c := &fakeClock{now: time.Unix(0, 0)}
	sizes, rows := runAll(t, NewReaderWithClock(cfg, c), cols)
	// A tenth of a second's rows per batch; the first leaves at once, the
	// others when their last row is due (10ms per row after the first batch).
	if !reflect.DeepEqual(sizes, []int{10, 10, 10, 5}) || len(rows) != 35 {
		t.Fatalf("batch sizes %v", sizes)
	}
	want := []time.Duration{100 * time.Millisecond, 100 * time.Millisecond, 50 * time.Millisecond}
	if !reflect.DeepEqual(c.sleeps, want) {
		t.Fatalf("sleeps %v, want %v", c.sleeps, want)
	}
}

func TestReaderStops(t *testing.T) {
	cols := []types.Column{col(t, "id", "bigint")}
	cfg := mustConfig(t, cols, nil) // unbounded
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := NewReader(cfg).Run(ctx, func(rec arrow.RecordBatch) error {
		if n++; n == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 3 {
		t.Fatalf("canceled run: %v after %d batches", err, n)
	}

	gone := errors.New("consumer gone")
	err = NewReader(cfg).Run(context.Background(), func(arrow.RecordBatch) error { return gone })
	if !errors.Is(err, gone) {
		t.Fatalf("emit error: got %v", err)
	}

	// A paced reader waiting for its next batch returns on cancel.
	slow := mustConfig(t, cols, map[string]string{"rows_per_second": "0.001"})
	ctx, cancel = context.WithCancel(context.Background())
	err = NewReader(slow).Run(ctx, func(arrow.RecordBatch) error { cancel(); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("paced cancel: %v", err)
	}
}
