package nexmark

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/pgerr"
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

func runRows(t *testing.T, r *Reader) (sizes []int, rows [][]string) {
	t.Helper()
	err := r.Run(context.Background(), func(rec arrow.RecordBatch) error {
		sizes = append(sizes, int(rec.NumRows()))
		rows = append(rows, rowsOf(rec)...)
		return nil
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return sizes, rows
}

func TestReaderTables(t *testing.T) {
	all := collect(t, Config{Events: 50000, Seed: 3}, 777)
	for _, tc := range []struct {
		table string
		want  int
	}{{"bid", 46000}, {"auction", 3000}, {"person", 1000}} {
		cfg := Config{Events: 50000, Seed: 3, Table: tc.table}
		sizes, rows := runRows(t, NewReader(cfg))
		if len(rows) != tc.want {
			t.Fatalf("%s: %d rows, want %d", tc.table, len(rows), tc.want)
		}
		for _, n := range sizes {
			if n == 0 || n > DefaultBatchRows {
				t.Fatalf("%s: batch of %d rows", tc.table, n)
			}
		}
		want := map[string][][]string{"bid": all.bid, "auction": all.auction, "person": all.person}[tc.table]
		if !reflect.DeepEqual(rows, want) {
			t.Fatalf("%s: reader rows differ from the combined stream's", tc.table)
		}
	}
}

func TestReaderPacing(t *testing.T) {
	cfg := Config{Events: 1000, EventsPerSecond: 1000, Table: "bid", Paced: true}
	c := &fakeClock{now: time.Unix(0, 0)}
	sizes, rows := runRows(t, NewReaderWithClock(cfg, c))
	if len(rows) != 920 {
		t.Fatalf("%d rows", len(rows))
	}
	// A tenth of a second's bids per batch (920/s -> 92), each batch leaving
	// when its last event is due, 1 ms per event after the first batch's.
	g := New(cfg)
	var last []int64
	for {
		b, err := g.Next(92)
		if err != nil {
			break
		}
		if b.Bid.NumRows() > 0 {
			last = append(last, g.Position()-1)
		}
	}
	if len(sizes) != len(last) || sizes[0] != 92 {
		t.Fatalf("batch sizes %v", sizes)
	}
	if len(c.sleeps) != len(last)-1 {
		t.Fatalf("sleeps %v for %d batches", c.sleeps, len(last))
	}
	for i, d := range c.sleeps {
		want := time.Duration(last[i+1]-last[i]) * time.Millisecond
		if diff := d - want; diff < -time.Microsecond || diff > time.Microsecond {
			t.Fatalf("sleep %d = %v, want %v", i, d, want)
		}
	}
}

func TestReaderStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := NewReader(Config{Table: "bid"}).Run(ctx, func(arrow.RecordBatch) error {
		if n++; n == 2 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 2 {
		t.Fatalf("cancel: %v after %d batches", err, n)
	}
	gone := errors.New("gone")
	if err := NewReader(Config{Table: "person"}).Run(context.Background(), func(arrow.RecordBatch) error { return gone }); !errors.Is(err, gone) {
		t.Fatalf("emit error: %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	slow := Config{Table: "bid", EventsPerSecond: 0.001, Paced: true}
	if err := NewReader(slow).Run(ctx, func(arrow.RecordBatch) error { cancel(); return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("paced cancel: %v", err)
	}
	if err := NewReader(Config{}).Run(context.Background(), nil); pgerr.CodeOf(err) != pgerr.InvalidParameterValue {
		t.Fatalf("no table: %v", err)
	}
}
