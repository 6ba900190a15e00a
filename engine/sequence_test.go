package engine

import (
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
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

// TestSequencePrivileges: a sequence's owner holds USAGE, SELECT and
// UPDATE; others what GRANT gives them, checked as PostgreSQL 15 does
// (results and messages taken from it): nextval needs USAGE or UPDATE,
// currval and lastval USAGE or SELECT, setval UPDATE, SELECT * FROM s
// SELECT; pg_sequences hides last_value and information_schema.sequences
// the row from roles without any.
func TestSequencePrivileges(t *testing.T) {
	e, su := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, su, "CREATE USER alice")
	mustRun(t, su, "CREATE USER bob")
	alice, bob := session(t, e, "alice"), session(t, e, "bob")
	mustRun(t, alice, "CREATE SEQUENCE aseq")
	mustRun(t, alice, "CREATE TABLE pt (id serial, v int)")
	if got := mustRun(t, alice, "SELECT nextval('aseq')"); got[0] != "1" {
		t.Fatalf("owner nextval = %v", got)
	}
	if got := mustRun(t, su, "SELECT nextval('aseq'), sequenceowner FROM pg_sequences WHERE sequencename = 'aseq'"); got[0] != "2|alice" {
		t.Fatalf("superuser nextval, owner = %v", got)
	}
	if got := mustRun(t, su, "SELECT pg_get_userbyid(relowner) FROM pg_class WHERE relname = 'pt_id_seq'"); got[0] != "alice" {
		t.Fatalf("a serial column's sequence belongs to the table's owner: %v", got)
	}
	for _, q := range []string{"SELECT nextval('aseq')", "SELECT currval('aseq')", "SELECT setval('aseq', 5)", "SELECT * FROM aseq", "SELECT pg_sequence_last_value('aseq')"} {
		denied(t, bob, q, "permission denied for sequence aseq")
	}
	if got := mustRun(t, bob, "SELECT last_value IS NULL FROM pg_sequences WHERE sequencename = 'aseq'"); got[0] != "t" {
		t.Fatalf("pg_sequences.last_value without privileges: %v", got)
	}
	if got := mustRun(t, bob, "SELECT count(*) FROM information_schema.sequences WHERE sequence_name = 'aseq'"); got[0] != "0" {
		t.Fatalf("information_schema.sequences without privileges: %v", got)
	}
	denied(t, bob, "ALTER SEQUENCE aseq RESTART", "must be owner of sequence aseq")
	denied(t, bob, "DROP SEQUENCE aseq", "must be owner of sequence aseq")
	denied(t, bob, "GRANT USAGE ON SEQUENCE aseq TO bob", "permission denied for sequence aseq")

	acl := func(rel string) string {
		t.Helper()
		return mustRun(t, su, "SELECT coalesce(array_to_string(relacl, ','), 'NULL') FROM pg_class WHERE relname = '"+rel+"'")[0]
	}
	mustRun(t, alice, "GRANT SELECT ON SEQUENCE aseq TO bob")
	mustRun(t, alice, "GRANT USAGE ON SEQUENCE aseq TO bob WITH GRANT OPTION")
	if got := acl("aseq"); got != "alice=rwU/alice,bob=rU*/alice" {
		t.Fatalf("relacl %q", got)
	}
	_, _, err := run(t, alice, "GRANT INSERT ON SEQUENCE aseq TO bob")
	wantErr(t, err, "0LP01", "invalid privilege type INSERT for sequence")
	_, _, err = run(t, alice, "GRANT USAGE ON TABLE pt TO bob")
	wantErr(t, err, "0LP01", "invalid privilege type USAGE for table")
	_, _, err = run(t, alice, "GRANT SELECT ON SEQUENCE pt TO bob")
	wantErr(t, err, pgerr.WrongObjectType, `"pt" is not a sequence`)
	// ON TABLE may name a sequence: it keeps USAGE, SELECT and UPDATE.
	mustRun(t, alice, "GRANT ALL ON TABLE aseq TO bob")
	res, err := execOne(t, alice, "GRANT INSERT, SELECT ON TABLE aseq TO bob")
	if err != nil || len(res.Notices) != 1 || res.Notices[0].Message != `sequence "aseq" only supports USAGE, SELECT, and UPDATE privileges` || res.Notices[0].Code != "0LP01" {
		t.Fatalf("GRANT INSERT, SELECT ON TABLE aseq: %v %+v", err, res)
	}
	if got := acl("aseq"); got != "alice=rwU/alice,bob=rwU*/alice" {
		t.Fatalf("relacl %q", got)
	}
	mustRun(t, alice, "REVOKE ALL ON SEQUENCE aseq FROM bob")
	if got := mustRun(t, su, "SELECT has_sequence_privilege('bob', 'aseq', 'usage'), has_sequence_privilege('alice', 'aseq', 'select,update'), has_table_privilege('alice', 'aseq', 'select')"); got[0] != "f|t|t" {
		t.Fatalf("has_sequence_privilege: %v", got)
	}
	if got := mustRun(t, alice, "SELECT has_sequence_privilege('aseq', 'USAGE WITH GRANT OPTION')"); got[0] != "t" {
		t.Fatalf("has_sequence_privilege of the owner: %v", got)
	}
	_, _, err = run(t, su, "SELECT has_sequence_privilege('bob', 'pt', 'usage')")
	wantErr(t, err, pgerr.WrongObjectType, `"pt" is not a sequence`)
	_, _, err = run(t, su, "SELECT has_sequence_privilege('bob', 'aseq', 'insert')")
	wantErr(t, err, pgerr.InvalidParameterValue, `unrecognized privilege type: "insert"`)
	_, _, err = run(t, su, "SELECT has_table_privilege('bob', 'aseq', 'usage')")
	wantErr(t, err, pgerr.InvalidParameterValue, `unrecognized privilege type: "usage"`)

	// UPDATE: nextval and setval, not currval, lastval or SELECT * FROM.
	mustRun(t, alice, "GRANT UPDATE ON SEQUENCE aseq TO bob")
	if got := mustRun(t, bob, "SELECT nextval('aseq')"); got[0] != "3" {
		t.Fatalf("bob's nextval %v", got)
	}
	denied(t, bob, "SELECT currval('aseq')", "permission denied for sequence aseq")
	mustRun(t, bob, "SELECT setval('aseq', 5)")
	denied(t, bob, "SELECT lastval()", "permission denied for sequence aseq")
	denied(t, bob, "SELECT * FROM aseq", "permission denied for sequence aseq")
	// ALL SEQUENCES IN SCHEMA reaches the serial column's sequence, not
	// the tables; ALL TABLES the tables, not the sequences.
	mustRun(t, alice, "GRANT SELECT ON ALL SEQUENCES IN SCHEMA public TO bob")
	if got := acl("aseq") + " " + acl("pt") + " " + acl("pt_id_seq"); got != "alice=rwU/alice,bob=rw/alice NULL alice=rwU/alice,bob=r/alice" {
		t.Fatalf("after ALL SEQUENCES: %s", got)
	}
	mustRun(t, alice, "GRANT SELECT ON ALL TABLES IN SCHEMA public TO bob")
	if got := acl("pt") + " " + acl("pt_id_seq"); got != "alice=arwdDxt/alice,bob=r/alice alice=rwU/alice,bob=r/alice" {
		t.Fatalf("after ALL TABLES: %s", got)
	}
	if got := mustRun(t, bob, "SELECT lastval(), currval('aseq')"); got[0] != "5|5" {
		t.Fatalf("lastval, currval after setval: %v", got)
	}
	if got := mustRun(t, bob, "SELECT last_value, log_cnt, is_called FROM aseq"); got[0] != "5|0|t" {
		t.Fatalf("SELECT FROM aseq: %v", got)
	}
	// INSERT into a table with a serial column needs the sequence too.
	mustRun(t, alice, "GRANT INSERT ON pt TO bob")
	denied(t, bob, "INSERT INTO pt (v) VALUES (1)", "permission denied for sequence pt_id_seq")
	mustRun(t, alice, "GRANT USAGE ON SEQUENCE pt_id_seq TO bob")
	mustRun(t, bob, "INSERT INTO pt (v) VALUES (1)")
	// A table's new owner gets its serial sequences; an owned sequence's
	// owner does not change alone.
	mustRun(t, su, "ALTER TABLE pt OWNER TO bob")
	if got := mustRun(t, su, "SELECT pg_get_userbyid(relowner), array_to_string(relacl, ',') FROM pg_class WHERE relname = 'pt_id_seq'"); got[0] != "bob|bob=rwU/bob" {
		t.Fatalf("pt_id_seq after ALTER TABLE OWNER: %v", got)
	}
	_, _, err = run(t, su, "ALTER SEQUENCE pt_id_seq OWNER TO alice")
	wantErr(t, err, pgerr.FeatureNotSupported, `cannot change owner of sequence "pt_id_seq"`)
	mustRun(t, su, "ALTER SEQUENCE aseq OWNER TO bob")
	mustRun(t, bob, "ALTER SEQUENCE aseq RESTART")
}

// TestSequenceCacheSessions: CACHE 10 gives each session its own block of
// ten values; currval and lastval are per session; a closed session's
// unused values are lost; DISCARD SEQUENCES drops a session's block.
func TestSequenceCacheSessions(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE SEQUENCE cs CACHE 10")
	a, b := session(t, e, "tester"), session(t, e, "tester")
	next := func(s *Session) string { t.Helper(); return mustRun(t, s, "SELECT nextval('cs')")[0] }
	for _, step := range []struct {
		s    *Session
		want string
	}{{a, "1"}, {b, "11"}, {a, "2"}, {a, "3"}, {b, "12"}} {
		if got := next(step.s); got != step.want {
			t.Fatalf("nextval %s, want %s", got, step.want)
		}
	}
	if got := mustRun(t, s, "SELECT last_value, cache_size FROM pg_sequences WHERE sequencename = 'cs'"); got[0] != "20|10" {
		t.Fatalf("pg_sequences: %v", got)
	}
	if got := mustRun(t, a, "SELECT currval('cs'), lastval()"); got[0] != "3|3" {
		t.Fatalf("a's currval, lastval: %v", got)
	}
	if got := mustRun(t, b, "SELECT currval('cs'), lastval()"); got[0] != "12|12" {
		t.Fatalf("b's currval, lastval: %v", got)
	}
	_, _, err := run(t, s, "SELECT currval('cs')")
	wantErr(t, err, pgerr.ObjectNotInPrerequisiteState, `currval of sequence "cs" is not yet defined in this session`)
	// b's setval leaves a's block alone.
	mustRun(t, b, "SELECT setval('cs', 100)")
	if got := next(a); got != "4" {
		t.Fatalf("a after b's setval: %s", got)
	}
	if got := next(b); got != "101" {
		t.Fatalf("b after its setval: %s", got)
	}
	// b goes away with 102..110 unused: they are lost.
	b.Close()
	if got := next(s); got != "111" {
		t.Fatalf("after b closed: %s", got)
	}
	mustRun(t, a, "DISCARD SEQUENCES")
	_, _, err = run(t, a, "SELECT lastval()")
	wantErr(t, err, pgerr.ObjectNotInPrerequisiteState, "lastval is not yet defined in this session")
	if got := next(a); got != "121" {
		t.Fatalf("a after DISCARD SEQUENCES: %s", got)
	}
	// ALTER SEQUENCE drops every session's block; OWNED BY alone does not.
	mustRun(t, s, "ALTER SEQUENCE cs OWNED BY NONE")
	if got := next(a); got != "122" {
		t.Fatalf("a after OWNED BY NONE: %s", got)
	}
	mustRun(t, s, "ALTER SEQUENCE cs CACHE 10")
	if got := next(a); got != "131" {
		t.Fatalf("a after ALTER CACHE: %s", got)
	}
	if got := mustRun(t, a, "SELECT currval('cs')"); got[0] != "131" {
		t.Fatalf("a's currval: %v", got)
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

// TestSequenceCacheConcurrent: sessions calling nextval at once on a CACHE
// 7 sequence never get the same value, each gets increasing values, and
// together they take whole blocks only (at most 8 blocks of 7 for 50
// calls each). Run with -race.
func TestSequenceCacheConcurrent(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE SEQUENCE ccs CACHE 7")
	const workers, each = 4, 50
	var (
		mu   sync.Mutex
		seen = map[int64]bool{}
		wg   sync.WaitGroup
	)
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		ws := session(t, e, "tester")
		wg.Add(1)
		go func() {
			defer wg.Done()
			prev := int64(0)
			for i := 0; i < each; i++ {
				rows, _, err := run(t, ws, "SELECT nextval('ccs')")
				if err != nil {
					errs <- err
					return
				}
				v, _ := strconv.ParseInt(rows[0], 10, 64)
				mu.Lock()
				dup := seen[v]
				seen[v] = true
				mu.Unlock()
				if dup || v <= prev {
					errs <- fmt.Errorf("value %d after %d (duplicate: %v)", v, prev, dup)
					return
				}
				prev = v
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := mustRun(t, s, "SELECT last_value FROM pg_sequences WHERE sequencename = 'ccs'")[0]
	if last, _ := strconv.ParseInt(got, 10, 64); len(seen) != workers*each || last%7 != 0 || last > workers*8*7 {
		t.Fatalf("%d distinct values, last_value %d", len(seen), last)
	}
}
