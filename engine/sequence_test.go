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

// TestSequencePrivileges: only the owner (or a superuser) may use a
// sequence's functions or ALTER or DROP it; GRANT ON SEQUENCE stays refused.
func TestSequencePrivileges(t *testing.T) {
	e, su := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, su, "CREATE USER alice")
	mustRun(t, su, "CREATE USER bob")
	alice, bob := session(t, e, "alice"), session(t, e, "bob")
	mustRun(t, alice, "CREATE SEQUENCE aseq")
	if got := mustRun(t, alice, "SELECT nextval('aseq')"); got[0] != "1" {
		t.Fatalf("owner nextval = %v", got)
	}
	if got := mustRun(t, su, "SELECT nextval('aseq'), sequenceowner FROM pg_sequences"); got[0] != "2|alice" {
		t.Fatalf("superuser nextval, owner = %v", got)
	}
	for _, q := range []string{"SELECT nextval('aseq')", "SELECT currval('aseq')", "SELECT setval('aseq', 5)"} {
		denied(t, bob, q, "permission denied for sequence aseq")
	}
	denied(t, bob, "ALTER SEQUENCE aseq RESTART", "must be owner of sequence aseq")
	denied(t, bob, "DROP SEQUENCE aseq", "must be owner of sequence aseq")
	if _, _, err := run(t, alice, "GRANT USAGE ON SEQUENCE aseq TO bob"); err == nil {
		t.Fatal("GRANT ON SEQUENCE was accepted")
	}
}

// TestSerialAndIdentitySurviveReopen: serial and identity columns keep
// their sequences, ownership and GENERATED ALWAYS rule across a restart.
func TestSerialAndIdentitySurviveReopen(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	mustRun(t, s, "CREATE TABLE ri (id serial, g int GENERATED ALWAYS AS IDENTITY, v text)")
	mustRun(t, s, "INSERT INTO ri (v) VALUES ('a'), ('b')")
	s.Close()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, s = open(t, dir)
	defer e.Close()
	mustRun(t, s, "INSERT INTO ri (v) VALUES ('c')")
	if got := mustRun(t, s, "SELECT id > 2, g > 2 FROM ri WHERE v = 'c'"); got[0] != "t|t" {
		t.Fatalf("after reopen: %v", got)
	}
	_, _, err := run(t, s, "INSERT INTO ri (g, v) VALUES (1, 'x')")
	wantErr(t, err, "428C9", `cannot insert a non-DEFAULT value into column "g"`)
	if got := mustRun(t, s, "SELECT pg_get_serial_sequence('ri', 'id'), pg_get_serial_sequence('ri', 'g')"); got[0] != "public.ri_id_seq|public.ri_g_seq" {
		t.Fatalf("serial sequences: %v", got)
	}
	mustRun(t, s, "DROP TABLE ri")
	if got := mustRun(t, s, "SELECT count(*) FROM pg_class WHERE relkind = 'S'"); got[0] != "0" {
		t.Fatalf("sequences left after DROP TABLE: %v", got)
	}
}
