package pace

import (
	"context"
	"errors"
	"testing"
	"time"
)

// fakeClock advances only when slept on, and records the sleeps.
type fakeClock struct {
	now    time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

func TestSchedule(t *testing.T) {
	c := &fakeClock{now: time.Unix(1000, 0)}
	p := NewWithClock(100, c) // 100 items/s: item n due at n*10ms
	ctx := context.Background()
	for _, n := range []int64{0, 9, 19, 29} {
		if err := p.Wait(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	want := []time.Duration{90 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}
	if len(c.sleeps) != len(want) {
		t.Fatalf("sleeps %v, want %v", c.sleeps, want)
	}
	for i := range want {
		if c.sleeps[i] != want[i] {
			t.Fatalf("sleeps %v, want %v", c.sleeps, want)
		}
	}
	// The consumer takes 50ms: the next wait only makes up the difference.
	c.now = c.now.Add(50 * time.Millisecond)
	c.sleeps = nil
	if err := p.Wait(ctx, 39); err != nil || len(c.sleeps) != 1 || c.sleeps[0] != 50*time.Millisecond {
		t.Fatalf("after a slow emit: sleeps %v err %v", c.sleeps, err)
	}
}

func TestStallRestartsSchedule(t *testing.T) {
	c := &fakeClock{now: time.Unix(1000, 0)}
	p := NewWithClock(10, c)
	ctx := context.Background()
	_ = p.Wait(ctx, 0)
	c.now = c.now.Add(10 * time.Second) // a 10 s stall: 100 items behind
	c.sleeps = nil
	if err := p.Wait(ctx, 1); err != nil || len(c.sleeps) != 0 {
		t.Fatalf("late item waited: %v %v", c.sleeps, err)
	}
	// The schedule restarted at item 1: item 2 is due 100ms later, not at once.
	if err := p.Wait(ctx, 2); err != nil || len(c.sleeps) != 1 || c.sleeps[0] != 100*time.Millisecond {
		t.Fatalf("after the stall: sleeps %v err %v", c.sleeps, err)
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := New(0.001) // item 1 is due in 1000 s
	if err := p.Wait(ctx, 0); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- p.Wait(ctx, 1) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestBatch(t *testing.T) {
	for _, tc := range []struct {
		rate  float64
		limit int
		want  int
	}{{0.5, 4096, 1}, {10, 4096, 1}, {1000, 4096, 100}, {1e9, 4096, 4096}, {1e300, 4096, 4096}} {
		if got := Batch(tc.rate, tc.limit); got != tc.want {
			t.Errorf("Batch(%g, %d) = %d, want %d", tc.rate, tc.limit, got, tc.want)
		}
	}
}
