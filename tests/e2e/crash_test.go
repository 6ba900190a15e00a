package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestKillDuringInserts inserts rows from several connections at once, kills
// the server with SIGKILL while they are still inserting, restarts it on the
// same data directory and checks that every row whose INSERT returned
// success is there, once, with its payload, and that nothing else is there
// except at most the one insert each writer had in flight.
func TestKillDuringInserts(t *testing.T) {
	const (
		writers   = 4
		killAfter = 400 // acknowledged inserts before the kill
	)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	s := startServer(t, dir)
	setup := s.connect(ctx)
	if _, err := setup.Exec(ctx, "CREATE TABLE kv (writer integer NOT NULL, seq integer NOT NULL, payload text)"); err != nil {
		t.Fatalf("create table: %v", err)
	}

	var (
		mu       sync.Mutex
		acked    = map[[2]int]string{} // (writer, seq) -> payload
		inflight = make([]int, writers)
		errs     []error // errors before the kill
		killed   atomic.Bool
		reached  = make(chan struct{})
		once     sync.Once
		wg       sync.WaitGroup
	)
	for w := 0; w < writers; w++ {
		c := s.connect(ctx)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; ; seq++ {
				payload := fmt.Sprintf("w%d-s%d-%s", w, seq, strings.Repeat("x", seq%37))
				mu.Lock()
				inflight[w] = seq
				mu.Unlock()
				_, err := c.Exec(ctx, "INSERT INTO kv (writer, seq, payload) VALUES ($1, $2, $3)", w, seq, payload)
				if err != nil {
					if !killed.Load() {
						mu.Lock()
						errs = append(errs, fmt.Errorf("writer %d, insert %d: %w", w, seq, err))
						mu.Unlock()
					}
					return
				}
				mu.Lock()
				acked[[2]int{w, seq}] = payload
				n := len(acked)
				mu.Unlock()
				if n >= killAfter {
					once.Do(func() { close(reached) })
				}
			}
		}()
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()

	select {
	case <-reached:
	case <-allDone:
		t.Fatalf("every writer stopped before %d inserts were acknowledged: %v", killAfter, errors.Join(errs...))
	case <-ctx.Done():
		t.Fatalf("%d inserts were not acknowledged in time", killAfter)
	}
	killed.Store(true)
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill: %v", err)
	}
	<-s.exited
	<-allDone
	if len(errs) > 0 {
		t.Errorf("inserts failed before the kill: %v", errors.Join(errs...))
	}
	t.Logf("killed the server after %d acknowledged inserts", len(acked))

	s2 := startServer(t, dir)
	c := s2.connect(ctx)
	rows, err := c.Query(ctx, "SELECT writer, seq, payload FROM kv")
	if err != nil {
		t.Fatalf("select after restart: %v", err)
	}
	seen := map[[2]int]bool{}
	for rows.Next() {
		var w, seq int
		var payload string
		if err := rows.Scan(&w, &seq, &payload); err != nil {
			t.Fatalf("scan: %v", err)
		}
		k := [2]int{w, seq}
		if seen[k] {
			t.Errorf("row (%d, %d) is there twice", w, seq)
		}
		seen[k] = true
		want, ok := acked[k]
		switch {
		case ok && payload != want:
			t.Errorf("row (%d, %d) has payload %q, want %q", w, seq, payload, want)
		case !ok && (w < 0 || w >= writers || seq != inflight[w]):
			t.Errorf("row (%d, %d) was never inserted", w, seq)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("select after restart: %v", err)
	}
	lost := 0
	for k := range acked {
		if !seen[k] {
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged row (%d, %d) is missing after the crash", k[0], k[1])
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged rows are missing after the crash", lost, len(acked))
	}

	// The recovered server still takes writes, and they survive a clean
	// shutdown too.
	if _, err := c.Exec(ctx, "INSERT INTO kv VALUES (-1, -1, 'after recovery')"); err != nil {
		t.Fatalf("insert after recovery: %v", err)
	}
	c.Close(ctx)
	stop(t, s2)
	s3 := startServer(t, dir)
	c3 := s3.connect(ctx)
	var n int
	if err := c3.QueryRow(ctx, "SELECT count(*) FROM kv WHERE writer = -1").Scan(&n); err != nil || n != 1 {
		t.Errorf("row inserted after recovery: count = %d, err = %v; want 1", n, err)
	}
}

// stop shuts the server down with SIGTERM and checks it exits cleanly.
func stop(t *testing.T, s *server) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-s.exited:
	case <-time.After(time.Minute):
		t.Fatalf("streamsqld did not exit within a minute of SIGTERM")
	}
	if !s.cmd.ProcessState.Success() {
		t.Errorf("streamsqld exited with %v after SIGTERM\n%s", s.cmd.ProcessState, s.out.String())
	}
}
