package e2e

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestKillDuringNextval calls nextval from several connections, kills the
// server with SIGKILL while they run, restarts it and checks that no value
// was handed out twice and that nextval after the restart is greater than
// every value returned before the kill.
func TestKillDuringNextval(t *testing.T) {
	const writers, killAfter = 3, 300
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := startServer(t, dir)
	mustExec(t, ctx, s.connect(ctx), "CREATE SEQUENCE ks")

	var (
		mu      sync.Mutex
		got     = map[int64]int{}
		max     int64
		reached = make(chan struct{})
		once    sync.Once
		wg      sync.WaitGroup
	)
	for w := 0; w < writers; w++ {
		c := s.connect(ctx)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var v int64
				if err := c.QueryRow(ctx, "SELECT nextval('ks')").Scan(&v); err != nil {
					return // the kill
				}
				mu.Lock()
				got[v]++
				if v > max {
					max = v
				}
				n := len(got)
				mu.Unlock()
				if n >= killAfter {
					once.Do(func() { close(reached) })
				}
			}
		}()
	}
	select {
	case <-reached:
	case <-ctx.Done():
		t.Fatal("nextval did not reach the kill point")
	}
	s.kill()
	wg.Wait()
	for v, n := range got {
		if n > 1 {
			t.Errorf("nextval returned %d %d times", v, n)
		}
	}

	s = startServer(t, dir)
	c := s.connect(ctx)
	var after int64
	if err := c.QueryRow(ctx, "SELECT nextval('ks')").Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after <= max {
		t.Fatalf("after the kill nextval = %d, want > %d (the largest value returned before)", after, max)
	}
	t.Logf("%d values before the kill, max %d; first after restart %d", len(got), max, after)
}
