package engine

import (
	"strings"
	"sync"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// TestSelectForUpdateBlocksWriters: a block's SELECT ... FOR UPDATE keeps
// other sessions' writes of the table waiting until it ends, so its
// read-modify-write loses no update (the lost update it exists to
// prevent); NOWAIT fails at once with 55P03 while the lock is held, and
// succeeds once it is released; two blocks locking two tables in opposite
// orders end in 40P01 for one of them.
func TestSelectForUpdateBlocksWriters(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	s2, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "CREATE TABLE acct (id int PRIMARY KEY, bal int)")
	mustRun(t, s, "CREATE TABLE other (id int)")
	mustRun(t, s, "INSERT INTO acct VALUES (1, 100)")

	// Two sessions each add 10 to the balance, 20 times, by reading it
	// FOR UPDATE and writing what they read plus 10: no add is lost.
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, ses := range []*Session{s, s2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if _, _, err := run(t, ses, "BEGIN"); err != nil {
					errs <- err
					return
				}
				rows, _, err := run(t, ses, "SELECT bal FROM acct WHERE id = 1 FOR UPDATE")
				if err != nil {
					errs <- err
					return
				}
				if _, _, err := run(t, ses, "UPDATE acct SET bal = "+rows[0]+" + 10 WHERE id = 1"); err != nil {
					errs <- err
					return
				}
				if _, _, err := run(t, ses, "COMMIT"); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := mustRun(t, s, "SELECT bal FROM acct"); strings.Join(got, ",") != "500" {
		t.Fatalf("balance after 40 locked adds of 10 to 100: %v, want 500", got)
	}

	// NOWAIT while another block holds the lock, then after it ends.
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "SELECT * FROM acct FOR SHARE")
	if _, _, err := run(t, s2, "SELECT * FROM acct FOR UPDATE NOWAIT"); pgerr.CodeOf(err) != pgerr.LockNotAvailable ||
		!strings.Contains(err.Error(), `could not obtain lock on row in relation "acct"`) {
		t.Fatalf("NOWAIT against a held lock: %v", err)
	}
	mustRun(t, s2, "SELECT * FROM other FOR UPDATE NOWAIT") // another table: free
	mustRun(t, s, "COMMIT")
	if got := mustRun(t, s2, "SELECT bal FROM acct FOR UPDATE NOWAIT"); strings.Join(got, ",") != "500" {
		t.Fatalf("NOWAIT after the block ended: %v", got)
	}

	// A statement's own lock (outside a block) is released with its rows.
	mustRun(t, s, "SELECT * FROM acct FOR UPDATE")
	mustRun(t, s2, "UPDATE acct SET bal = 0") // would wait forever if still held

	// Opposite orders: one of the two blocks fails with 40P01. Its
	// client rolls it back (a failed block keeps its locks until then),
	// and the other goes on.
	mustRun(t, s, "BEGIN")
	mustRun(t, s2, "BEGIN")
	mustRun(t, s, "SELECT * FROM acct FOR UPDATE")
	mustRun(t, s2, "SELECT * FROM other FOR UPDATE")
	lockThenEnd := func(ses *Session, table string, res chan<- error) {
		_, _, err := run(t, ses, "SELECT * FROM "+table+" FOR UPDATE")
		end := "COMMIT"
		if err != nil {
			end = "ROLLBACK"
		}
		if _, _, e := run(t, ses, end); e != nil && err == nil {
			err = e
		}
		res <- err
	}
	r1, r2 := make(chan error, 1), make(chan error, 1)
	go lockThenEnd(s, "other", r1)
	go lockThenEnd(s2, "acct", r2)
	err1, err2 := <-r1, <-r2
	dead1, dead2 := pgerr.CodeOf(err1) == "40P01", pgerr.CodeOf(err2) == "40P01"
	if dead1 == dead2 || dead1 && err2 != nil || dead2 && err1 != nil {
		t.Fatalf("opposite lock orders: %v and %v, want one 40P01 and one success", err1, err2)
	}
}
