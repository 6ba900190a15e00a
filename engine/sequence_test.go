package engine

import (
	"strconv"
	"sync"
	"testing"
)

// Concurrent sessions calling nextval never get the same value, and a
// reopened engine continues after every value handed out before (values
// are logged ahead, so some are skipped). Run with -race.
func TestSequenceConcurrentAndReopen(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	if _, _, err := run(t, s, "CREATE SEQUENCE cs"); err != nil {
		t.Fatal(err)
	}
	const workers, each = 4, 50
	var (
		mu   sync.Mutex
		seen = map[int64]bool{}
		max  int64
		wg   sync.WaitGroup
	)
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		ws, err := e.NewSession("tester", "db", nil)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ws.Close()
			for i := 0; i < each; i++ {
				rows, _, err := run(t, ws, "SELECT nextval('cs')")
				if err != nil {
					errs <- err
					return
				}
				v, _ := strconv.ParseInt(rows[0], 10, 64)
				mu.Lock()
				if seen[v] {
					errs <- strconv.ErrRange
				}
				seen[v] = true
				if v > max {
					max = v
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("nextval: %v (duplicate values give ErrRange)", err)
	}
	if len(seen) != workers*each || max != workers*each {
		t.Fatalf("got %d distinct values, max %d; want %d and %d", len(seen), max, workers*each, workers*each)
	}
	// A rolled-back nextval is not given back.
	if _, _, err := run(t, s, "BEGIN; SELECT nextval('cs'); ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	max++
	s.Close()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, s = open(t, dir)
	defer e.Close()
	rows, _, err := run(t, s, "SELECT nextval('cs')")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := strconv.ParseInt(rows[0], 10, 64); v <= max {
		t.Fatalf("after reopen nextval = %d, want > %d", v, max)
	}
	if _, _, err := run(t, s, "SELECT currval('cs')"); err != nil {
		t.Fatal(err)
	}
}
