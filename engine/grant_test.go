package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
)

// session opens a session of user on e.
func session(t *testing.T, e *Engine, user string) *Session {
	t.Helper()
	s, err := e.NewSession(user, "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// denied runs text on s and wants 42501 with msg.
func denied(t *testing.T, s *Session, text, msg string) {
	t.Helper()
	_, _, err := run(t, s, text)
	wantErr(t, err, pgerr.InsufficientPrivilege, msg)
	// PostgreSQL checks privileges after parse analysis: no LINE/caret
	var pe *pgerr.Error
	if errors.As(err, &pe) && pe.Position != 0 {
		t.Errorf("%s: error has position %d, PostgreSQL prints none", text, pe.Position)
	}
}

// TestTablePrivileges: a relation belongs to the role that created it;
// other roles may use it only as GRANTed (PostgreSQL 15's messages), and
// only its owner (or a superuser) may drop, alter or grant on it.
func TestTablePrivileges(t *testing.T) {
	dir := t.TempDir()
	e, su := open(t, dir)
	mustRun(t, su, "CREATE USER alice")
	mustRun(t, su, "CREATE USER bob")
	alice, bob := session(t, e, "alice"), session(t, e, "bob")

	mustRun(t, alice, "CREATE TABLE t (a int, b text)")
	mustRun(t, alice, "INSERT INTO t VALUES (1, 'x')")
	if got := mustRun(t, su, "SELECT tableowner FROM pg_tables WHERE tablename = 't'"); got[0] != "alice" {
		t.Errorf("tableowner %v", got)
	}
	if got := mustRun(t, su, "SELECT pg_get_userbyid(relowner), relacl IS NULL FROM pg_class WHERE relname = 't'"); got[0] != "alice|t" {
		t.Errorf("relowner, relacl: %v", got)
	}

	denied(t, bob, "SELECT * FROM t", "permission denied for table t")
	denied(t, bob, "TABLE t", "permission denied for table t")
	denied(t, bob, "EXPLAIN SELECT * FROM t", "permission denied for table t")
	denied(t, bob, "SELECT 1 WHERE EXISTS (SELECT 1 FROM t)", "permission denied for table t")
	denied(t, bob, "WITH c AS (SELECT * FROM t) SELECT * FROM c", "permission denied for table t")
	denied(t, bob, "BEGIN; DECLARE c CURSOR FOR SELECT * FROM t", "permission denied for table t")
	mustRun(t, bob, "ROLLBACK")
	denied(t, bob, "CREATE TABLE copy AS SELECT * FROM t", "permission denied for table t")
	denied(t, bob, "INSERT INTO t VALUES (2, 'y')", "permission denied for table t")
	denied(t, bob, "UPDATE t SET a = 2", "permission denied for table t")
	denied(t, bob, "DELETE FROM t", "permission denied for table t")
	denied(t, bob, "TRUNCATE t", "permission denied for table t")
	denied(t, bob, "DROP TABLE t", "must be owner of table t")
	denied(t, bob, "ALTER TABLE t ADD COLUMN c int", "must be owner of table t")
	denied(t, bob, "ALTER TABLE t RENAME TO u", "must be owner of table t")
	denied(t, bob, "GRANT SELECT ON t TO bob", "permission denied for table t")
	denied(t, bob, "CREATE MATERIALIZED VIEW bm AS SELECT a FROM t", "permission denied for table t")
	// A view is checked when read (with its owner's rights), not created.
	mustRun(t, bob, "CREATE VIEW bv0 AS SELECT a FROM t")
	denied(t, bob, "SELECT * FROM bv0", "permission denied for table t")
	mustRun(t, bob, "DROP VIEW bv0")
	// System catalogs stay readable.
	if got := mustRun(t, bob, "SELECT count(*) FROM pg_class WHERE relname = 't'"); got[0] != "1" {
		t.Errorf("pg_class for bob: %v", got)
	}

	// GRANT SELECT: bob reads, but still may not write.
	mustRun(t, alice, "GRANT SELECT ON TABLE t TO bob")
	if got := mustRun(t, bob, "SELECT a, b FROM t"); strings.Join(got, ",") != "1|x" {
		t.Errorf("bob reads %v", got)
	}
	denied(t, bob, "INSERT INTO t VALUES (2, 'y')", "permission denied for table t")
	denied(t, bob, "DELETE FROM t WHERE a = 1", "permission denied for table t")
	if got := mustRun(t, su, "SELECT relacl FROM pg_class WHERE relname = 't'"); got[0] != "{alice=arwdDxt/alice,bob=r/alice}" {
		t.Errorf("relacl %v", got)
	}
	if got := mustRun(t, bob, "SELECT has_table_privilege('t', 'SELECT'), has_table_privilege('t', 'INSERT'), has_table_privilege('alice', 't', 'insert, select')"); got[0] != "t|f|t" {
		t.Errorf("has_table_privilege: %v", got)
	}
	// A prepared statement planned with the grant is planned again after
	// the REVOKE.
	mustRun(t, bob, "PREPARE q AS SELECT a FROM t")
	mustRun(t, bob, "EXECUTE q")
	got := mustRun(t, bob, "SELECT (aclexplode(relacl)).privilege_type FROM pg_class WHERE relname = 't'")
	if strings.Join(got, ",") != "INSERT,SELECT,UPDATE,DELETE,TRUNCATE,REFERENCES,TRIGGER,SELECT" {
		t.Errorf("aclexplode: %v", got)
	}
	got = mustRun(t, bob, "SELECT pg_get_userbyid(grantor), pg_get_userbyid(grantee), privilege_type, is_grantable FROM aclexplode((SELECT relacl FROM pg_class WHERE relname = 't')) WHERE privilege_type = 'SELECT'")
	if strings.Join(got, ",") != "alice|alice|SELECT|f,alice|bob|SELECT|f" {
		t.Errorf("aclexplode: %v", got)
	}
	if got := mustRun(t, bob, "SELECT acldefault('r', oid), acldefault('f', oid) FROM pg_roles WHERE rolname = 'alice'"); got[0] != "{alice=arwdDxt/alice}|{=X/alice,alice=X/alice}" {
		t.Errorf("acldefault: %v", got)
	}
	mustRun(t, alice, "REVOKE SELECT ON t FROM bob")
	denied(t, bob, "EXECUTE q", "permission denied for table t")
	denied(t, bob, "SELECT * FROM t", "permission denied for table t")

	// A superuser's prepared statement is checked again once it is not one.
	mustRun(t, su, "CREATE USER root SUPERUSER")
	root := session(t, e, "root")
	mustRun(t, root, "PREPARE r AS SELECT a FROM t")
	mustRun(t, root, "EXECUTE r")
	mustRun(t, su, "ALTER USER root NOSUPERUSER")
	denied(t, root, "EXECUTE r", "permission denied for table t")

	// PUBLIC.
	mustRun(t, alice, "GRANT INSERT, SELECT ON t TO PUBLIC")
	mustRun(t, bob, "INSERT INTO t VALUES (2, 'y')")
	denied(t, bob, "UPDATE t SET a = 3 WHERE a = 2", "permission denied for table t")
	if got := mustRun(t, su, "SELECT relacl FROM pg_class WHERE relname = 't'"); got[0] != "{alice=arwdDxt/alice,=ar/alice}" {
		t.Errorf("relacl %v", got)
	}
	got = mustRun(t, bob, "SELECT grantor, grantee, table_name, privilege_type, is_grantable, with_hierarchy FROM information_schema.table_privileges")
	if strings.Join(got, ",") != "alice|PUBLIC|t|INSERT|NO|NO,alice|PUBLIC|t|SELECT|NO|YES" {
		t.Errorf("table_privileges for bob: %v", got)
	}
	if got := mustRun(t, su, "SELECT count(*) FROM information_schema.table_privileges"); got[0] != "9" { // alice's 7 and PUBLIC's 2
		t.Errorf("table_privileges for the superuser: %v", got)
	}
	mustRun(t, alice, "REVOKE ALL ON t FROM PUBLIC")
	denied(t, bob, "SELECT * FROM t", "permission denied for table t")

	// A view owned by alice reads t with alice's rights: bob needs SELECT
	// on the view only.
	mustRun(t, alice, "CREATE VIEW v AS SELECT a FROM t")
	denied(t, bob, "SELECT * FROM v", "permission denied for view v")
	mustRun(t, alice, "GRANT SELECT ON v TO bob")
	if got := mustRun(t, bob, "SELECT a FROM v ORDER BY a"); strings.Join(got, ",") != "1,2" {
		t.Errorf("bob reads the view: %v", got)
	}
	denied(t, bob, "SELECT * FROM t", "permission denied for table t")
	// bob's own view over alice's view reads it with bob's rights.
	mustRun(t, bob, "CREATE VIEW bv AS SELECT a FROM v")
	if got := mustRun(t, bob, "SELECT count(*) FROM bv"); got[0] != "2" {
		t.Errorf("bob's view: %v", got)
	}
	mustRun(t, alice, "REVOKE SELECT ON v FROM bob")
	denied(t, bob, "SELECT * FROM bv", "permission denied for view v")
	denied(t, alice, "DROP VIEW bv", "must be owner of view bv")
	mustRun(t, bob, "DROP VIEW bv")

	// Materialized views, subscriptions and the other DDL.
	mustRun(t, alice, "CREATE MATERIALIZED VIEW mv AS SELECT a FROM t")
	denied(t, bob, "SELECT * FROM mv", "permission denied for materialized view mv")
	denied(t, bob, "REFRESH MATERIALIZED VIEW mv", "must be owner of materialized view mv")
	denied(t, bob, "ALTER MATERIALIZED VIEW mv RENAME TO mv2", "must be owner of materialized view mv")
	_, err := execOne(t, bob, "SUBSCRIBE TO mv")
	wantErr(t, err, pgerr.InsufficientPrivilege, "permission denied for materialized view mv")
	_, err = execOne(t, bob, "SUBSCRIBE (SELECT a FROM t)")
	wantErr(t, err, pgerr.InsufficientPrivilege, "permission denied for table t")
	_, err = execOne(t, bob, "COPY t FROM STDIN")
	wantErr(t, err, pgerr.InsufficientPrivilege, "permission denied for table t")
	denied(t, bob, "COPY t TO STDOUT", "permission denied for table t")
	denied(t, bob, "DROP MATERIALIZED VIEW mv", "must be owner of materialized view mv")
	denied(t, bob, "ALTER MATERIALIZED VIEW mv OWNER TO bob", "must be owner of materialized view mv")
	denied(t, bob, "COMMENT ON TABLE t IS 'mine'", "must be owner of table t")
	denied(t, bob, "COMMENT ON COLUMN t.a IS 'mine'", "must be owner of relation t")
	denied(t, bob, "CREATE UNIQUE INDEX ON t (a)", "must be owner of table t")
	denied(t, bob, "CREATE OR REPLACE VIEW v AS SELECT a FROM t", "must be owner of view v")
	mustRun(t, alice, "GRANT SELECT ON mv TO bob")
	if got := mustRun(t, bob, "SELECT count(*) FROM mv"); got[0] != "2" {
		t.Errorf("bob reads mv: %v", got)
	}
	mustRun(t, alice, "DROP MATERIALIZED VIEW mv")

	// Grant options: bob may pass on what he holds WITH GRANT OPTION.
	mustRun(t, alice, "GRANT SELECT ON t TO bob WITH GRANT OPTION")
	mustRun(t, su, "CREATE USER carol")
	mustRun(t, bob, "GRANT SELECT ON t TO carol")
	res, err := execOne(t, bob, "GRANT INSERT ON t TO carol")
	if err != nil || len(res.Notices) != 1 || res.Notices[0].Message != `no privileges were granted for "t"` {
		t.Errorf("GRANT without the option: %+v %v", res, err)
	}
	if got := mustRun(t, su, "SELECT relacl FROM pg_class WHERE relname = 't'"); got[0] != "{alice=arwdDxt/alice,bob=r*/alice,carol=r/bob}" {
		t.Errorf("relacl %v", got)
	}

	// Ownership transfer: only the owner (who must be the new owner) or a
	// superuser; the ACL follows the owner as PostgreSQL's aclnewowner.
	denied(t, bob, "ALTER TABLE t OWNER TO bob", "must be owner of table t")
	denied(t, alice, "ALTER TABLE t OWNER TO bob", `must be member of role "bob"`)
	mustRun(t, su, "ALTER TABLE t OWNER TO bob")
	if got := mustRun(t, su, "SELECT tableowner FROM pg_tables WHERE tablename = 't'"); got[0] != "bob" {
		t.Errorf("tableowner %v", got)
	}
	if got := mustRun(t, su, "SELECT relacl FROM pg_class WHERE relname = 't'"); got[0] != "{bob=ar*wdDxt/bob,carol=r/bob}" { // as PostgreSQL 15
		t.Errorf("relacl after OWNER TO: %v", got)
	}
	denied(t, alice, "SELECT * FROM t", "permission denied for table t")
	mustRun(t, bob, "INSERT INTO t VALUES (3, 'z')")
	_, _, err = run(t, su, "DROP ROLE bob")
	wantErr(t, err, pgerr.DependentObjectsStillExist, `role "bob" cannot be dropped because some objects depend on it`)

	// DROP SCHEMA would drop others' relations: refused.
	mustRun(t, su, "CREATE SCHEMA s")
	mustRun(t, alice, "CREATE TABLE s.at (a int)")
	denied(t, bob, "DROP SCHEMA s CASCADE", "must be owner of schema s")
	denied(t, bob, "DROP SCHEMA public CASCADE", "must be owner of schema public")
	mustRun(t, alice, "DROP SCHEMA s CASCADE")

	// Refused by name rather than ignored.
	_, _, err = run(t, bob, "GRANT SELECT (a) ON t TO alice")
	wantErr(t, err, pgerr.FeatureNotSupported, "")
	_, _, err = run(t, su, "GRANT USAGE ON SCHEMA public TO bob")
	wantErr(t, err, pgerr.FeatureNotSupported, "")
	_, _, err = run(t, su, "GRANT SELECT ON SEQUENCE t TO bob")
	wantErr(t, err, pgerr.WrongObjectType, `"t" is not a sequence`)
	_, _, err = run(t, su, "ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO bob")
	wantErr(t, err, pgerr.FeatureNotSupported, "ALTER DEFAULT PRIVILEGES is not supported")
	_, _, err = run(t, bob, "REVOKE SELECT ON t FROM carol CASCADE")
	wantErr(t, err, pgerr.FeatureNotSupported, "")
	_, _, err = run(t, bob, "GRANT USAGE ON t TO alice")
	wantErr(t, err, "0LP01", "invalid privilege type USAGE for table")
	_, _, err = run(t, bob, "GRANT SELECT ON t TO nosuch")
	wantErr(t, err, pgerr.UndefinedObject, `role "nosuch" does not exist`)

	// ALL TABLES IN SCHEMA: every relation of the schema (a non-owner
	// without privileges on one of them is refused, as in PostgreSQL).
	mustRun(t, su, "CREATE SCHEMA s2")
	mustRun(t, bob, "CREATE TABLE s2.x (a int)")
	mustRun(t, bob, "CREATE VIEW s2.y AS SELECT 1 AS one")
	mustRun(t, alice, "CREATE VIEW s2.z AS SELECT 2 AS two")
	denied(t, bob, "GRANT SELECT ON ALL TABLES IN SCHEMA s2 TO alice", "permission denied for view z")
	denied(t, alice, "SELECT * FROM s2.x", "permission denied for table x") // nothing was granted
	mustRun(t, alice, "DROP VIEW s2.z")
	mustRun(t, bob, "GRANT SELECT ON ALL TABLES IN SCHEMA s2 TO alice")
	if got := mustRun(t, alice, "SELECT count(*) FROM s2.x, s2.y"); got[0] != "0" {
		t.Errorf("alice after ALL TABLES: %v", got)
	}
	mustRun(t, bob, "REVOKE SELECT ON ALL TABLES IN SCHEMA s2 FROM alice")
	denied(t, alice, "SELECT * FROM s2.y", "permission denied for view y")

	// Owners and ACLs survive a restart.
	e.Close()
	e, su = open(t, dir)
	defer e.Close()
	if got := mustRun(t, su, "SELECT tablename, tableowner FROM pg_tables WHERE schemaname = 'public'"); got[0] != "t|bob" {
		t.Errorf("after restart: %v", got)
	}
	alice = session(t, e, "alice")
	denied(t, alice, "SELECT * FROM t", "permission denied for table t")
	// alice's view reads t with her rights, which she no longer has.
	denied(t, alice, "SELECT * FROM v", "permission denied for table t")
}

// TestLateRowsIntoNeedsInsert: a materialized view that writes its late
// rows into a table needs INSERT on it, as its creator would.
func TestLateRowsIntoNeedsInsert(t *testing.T) {
	e, su := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, su, "CREATE USER alice")
	mustRun(t, su, "CREATE USER bob")
	alice, bob := session(t, e, "alice"), session(t, e, "bob")
	mustRun(t, alice, "CREATE TABLE late (k int, ts timestamp, view_name text, watermark timestamptz)")
	mustRun(t, bob, "CREATE TABLE ev (k int, ts timestamp, WATERMARK FOR ts AS ts) APPEND ONLY")
	q := "CREATE MATERIALIZED VIEW w AS SELECT window_start, count(*) AS n FROM TUMBLE(ev, ts, INTERVAL '10' SECOND) GROUP BY window_start EMIT ON WINDOW CLOSE LATE ROWS INTO late"
	denied(t, bob, q, "permission denied for table late")
	mustRun(t, alice, "GRANT INSERT ON late TO bob")
	mustRun(t, bob, q)
}

// TestSourcePrivileges: sources have owners too; a materialized view over
// another role's source needs SELECT on it.
func TestSourcePrivileges(t *testing.T) {
	e, su := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, su, "CREATE USER alice")
	mustRun(t, su, "CREATE USER bob")
	alice, bob := session(t, e, "alice"), session(t, e, "bob")
	mustRun(t, alice, "CREATE SOURCE bid WITH (connector = 'nexmark', table = 'bid', events = 10)")
	q := "CREATE MATERIALIZED VIEW n AS SELECT count(*) FROM bid"
	denied(t, bob, q, "permission denied for source bid")
	denied(t, bob, "DROP SOURCE bid", "must be owner of source bid")
	denied(t, bob, "DROP FOREIGN TABLE bid", "must be owner of source bid")
	denied(t, bob, "ALTER SOURCE bid RENAME TO bid2", "must be owner of source bid")
	denied(t, bob, "ALTER FOREIGN TABLE bid OWNER TO bob", "must be owner of source bid")
	mustRun(t, alice, "GRANT SELECT ON bid TO bob")
	mustRun(t, bob, q)
	mustRun(t, su, "ALTER FOREIGN TABLE bid OWNER TO bob")
	if got := mustRun(t, su, "SELECT pg_get_userbyid(relowner) FROM pg_class WHERE relname = 'bid'"); got[0] != "bob" {
		t.Errorf("owner of bid: %v", got)
	}
}

// execOne runs one statement and returns its whole result.
func execOne(t *testing.T, s *Session, text string) (*Result, error) {
	t.Helper()
	stmts, err := sql.Parse(text)
	if err != nil {
		return nil, err
	}
	p, err := s.Prepare(context.Background(), stmts[0], nil)
	if err != nil {
		return nil, err
	}
	return s.Execute(context.Background(), p, nil)
}

// BenchmarkPlanChecked compares planning and running a one-row SELECT as
// a superuser (no checks) and as a role that reads through a GRANT.
func BenchmarkPlanChecked(b *testing.B) {
	e, err := Open(Config{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	su, err := e.NewSession("tester", "db", nil)
	if err != nil {
		b.Fatal(err)
	}
	t := &testing.T{} // run only calls its Helper
	for _, q := range []string{"CREATE USER bob", "CREATE TABLE t (a int PRIMARY KEY, b text)",
		"INSERT INTO t VALUES (1, 'x')", "GRANT SELECT ON t TO bob"} {
		if _, _, err := run(t, su, q); err != nil {
			b.Fatal(err)
		}
	}
	bob, err := e.NewSession("bob", "db", nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		s    *Session
	}{{"superuser", su}, {"grantee", bob}} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, _, err := run(t, tc.s, "SELECT b FROM t WHERE a = 1"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPrivilegesThroughMembership: a group's ACL entries and ownership apply
// to its members (through roles with INHERIT), and end when the membership
// is revoked; NOINHERIT members do not get them.
func TestPrivilegesThroughMembership(t *testing.T) {
	e, su := open(t, t.TempDir())
	mustRun(t, su, "CREATE USER alice")
	mustRun(t, su, "CREATE USER bob")
	mustRun(t, su, "CREATE USER nina NOINHERIT")
	mustRun(t, su, "CREATE ROLE readers")
	mustRun(t, su, "CREATE ROLE team")
	alice, bob, nina := session(t, e, "alice"), session(t, e, "bob"), session(t, e, "nina")

	mustRun(t, alice, "CREATE TABLE t (a int)")
	mustRun(t, alice, "INSERT INTO t VALUES (1)")
	mustRun(t, alice, "GRANT SELECT ON t TO readers")
	denied(t, bob, "SELECT * FROM t", "permission denied for table t")
	mustRun(t, su, "GRANT readers TO bob")
	mustRun(t, su, "GRANT readers TO nina")
	if got := mustRun(t, bob, "SELECT a FROM t"); strings.Join(got, ",") != "1" {
		t.Errorf("bob through readers: %v", got)
	}
	denied(t, nina, "SELECT * FROM t", "permission denied for table t")
	denied(t, bob, "INSERT INTO t VALUES (2)", "permission denied for table t")
	mustRun(t, su, "REVOKE readers FROM bob")
	denied(t, bob, "SELECT * FROM t", "permission denied for table t")

	// Ownership by a group: its members act as the owner.
	mustRun(t, su, "GRANT team TO alice")
	mustRun(t, su, "GRANT team TO bob")
	mustRun(t, alice, "ALTER TABLE t OWNER TO team")
	mustRun(t, bob, "INSERT INTO t VALUES (2)")
	mustRun(t, bob, "ALTER TABLE t RENAME TO u")
	mustRun(t, su, "REVOKE team FROM bob")
	denied(t, bob, "DROP TABLE u", "must be owner of table u")
	denied(t, nina, "ALTER TABLE u OWNER TO nina", "must be owner of table u")
	mustRun(t, alice, "DROP TABLE u")
}
