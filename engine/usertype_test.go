package engine

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
)

// TestUserTypesWireAndRestart: a client sees an enum's and a composite
// type's own OIDs (pg_type's) as result column types; enums (with labels
// added and renamed by ALTER TYPE), composite types and the table columns
// of them survive a restart, sorting and printing as before; DROP TYPE
// still refuses a used type afterwards.
func TestUserTypesWireAndRestart(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	mustRun(t, s, "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')")
	mustRun(t, s, "CREATE TYPE pair AS (a int, m mood)")
	mustRun(t, s, "CREATE TABLE tu (id int, m mood, p pair, ms mood[])")
	mustRun(t, s, "INSERT INTO tu VALUES (1, 'happy', ROW(1, 'ok'), ARRAY['sad', 'happy']::mood[]), (2, 'sad', NULL, NULL)")
	mustRun(t, s, "ALTER TYPE mood ADD VALUE 'meh' BEFORE 'ok'")
	mustRun(t, s, "ALTER TYPE mood RENAME VALUE 'sad' TO 'blue'")
	mustRun(t, s, "INSERT INTO tu VALUES (3, 'meh', ROW(3, 'meh'), NULL)")

	oidOf := func(name string) uint32 {
		t.Helper()
		rows := mustRun(t, s, "SELECT oid FROM pg_type WHERE typname = '"+name+"'")
		if len(rows) != 1 {
			t.Fatalf("pg_type rows of %s: %q", name, rows)
		}
		n, err := strconv.ParseUint(rows[0], 10, 32)
		if err != nil {
			t.Fatal(err)
		}
		return uint32(n)
	}
	stmts, err := sql.Parse("SELECT m, p, ms FROM tu")
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Prepare(context.Background(), stmts[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"mood", "pair", "_mood"} {
		if got, want := p.Columns[i].Type.OID(), oidOf(name); got != want || want < 16384 {
			t.Fatalf("column %d: type OID %d, pg_type says %s is %d", i, got, name, want)
		}
	}
	want := "2|blue|NULL|NULL,3|meh|(3,meh)|NULL,1|happy|(1,ok)|{blue,happy}"
	if got := strings.Join(mustRun(t, s, "SELECT id, m, p, ms FROM tu ORDER BY m"), ","); got != want {
		t.Fatalf("rows %q", got)
	}
	e.Close()

	e, s = open(t, dir)
	defer e.Close()
	if got := strings.Join(mustRun(t, s, "SELECT id, m, p, ms FROM tu ORDER BY m"), ","); got != want {
		t.Fatalf("after restart, rows %q, want %q", got, want)
	}
	if got := strings.Join(mustRun(t, s, "SELECT enum_range(NULL::mood), (p).m FROM tu WHERE id = 3"), ","); got != "{blue,meh,ok,happy}|meh" {
		t.Fatalf("after restart, labels %q", got)
	}
	mustRun(t, s, "ALTER TYPE mood ADD VALUE 'ecstatic'")
	mustRun(t, s, "INSERT INTO tu VALUES (4, 'ecstatic', ROW(4, 'ecstatic'), NULL)")
	if got := strings.Join(mustRun(t, s, "SELECT max(m), count(p) FROM tu WHERE p > ROW(1, 'happy')::pair"), ","); got != "ecstatic|2" {
		t.Fatalf("after restart, max %q", got)
	}
	if _, _, err := run(t, s, "DROP TYPE mood"); pgerr.CodeOf(err) != pgerr.DependentObjectsStillExist {
		t.Fatalf("after restart, DROP TYPE of a used enum: %v", err)
	}
	if _, _, err := run(t, s, "SELECT 'sad'::mood"); pgerr.CodeOf(err) != pgerr.InvalidTextRepresentation {
		t.Fatalf("a renamed label: %v", err)
	}
}
