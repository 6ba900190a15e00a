package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// run executes every statement of text and returns the last result's rows
// rendered as text lines ("a|b"), and its tag.
func run(t *testing.T, s *Session, text string) ([]string, string, error) {
	t.Helper()
	stmts, err := sql.Parse(text)
	if err != nil {
		return nil, "", err
	}
	var lines []string
	var tag string
	for _, st := range stmts {
		p, err := s.Prepare(context.Background(), st, nil)
		if err != nil {
			return nil, "", err
		}
		res, err := s.Execute(context.Background(), p, make([]types.Value, len(p.ParamTypes)))
		if err != nil {
			return nil, "", err
		}
		tag, lines = res.Tag, nil
		if res.Rows != nil {
			for {
				b, err := res.Rows.Next()
				if err != nil {
					res.Rows.Close() // as the wire does
					return nil, "", err
				}
				if b == nil {
					break
				}
				for r := 0; r < int(b.NumRows()); r++ {
					var f []string
					for c := 0; c < int(b.NumCols()); c++ {
						v := types.ValueAt(b.Column(c), r, res.Columns[c].Type)
						if v == nil {
							f = append(f, "NULL")
						} else {
							f = append(f, types.FormatText(v, res.Columns[c].Type, &types.DefaultFormat))
						}
					}
					lines = append(lines, strings.Join(f, "|"))
				}
			}
			res.Rows.Close()
		}
	}
	return lines, tag, nil
}

func open(t *testing.T, dir string) (*Engine, *Session) {
	t.Helper()
	e, err := Open(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	return e, s
}

func TestTransactionStates(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	if _, _, err := run(t, s, "CREATE TABLE t (a int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if _, tag, err := run(t, s, "BEGIN"); err != nil || tag != "BEGIN" || s.TxStatus() != 'T' {
		t.Fatalf("begin: %q %v %c", tag, err, s.TxStatus())
	}
	if _, _, err := run(t, s, "INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, s, "INSERT INTO t VALUES (1)"); pgerr.CodeOf(err) != pgerr.UniqueViolation {
		t.Fatalf("duplicate: %v", err)
	}
	if s.TxStatus() != 'E' {
		t.Fatalf("status after error %c", s.TxStatus())
	}
	if _, _, err := run(t, s, "SELECT 1"); pgerr.CodeOf(err) != pgerr.InFailedSQLTransaction {
		t.Fatalf("in failed block: %v", err)
	}
	if _, tag, err := run(t, s, "COMMIT"); err != nil || tag != "ROLLBACK" || s.TxStatus() != 'I' {
		t.Fatalf("commit of failed block: %q %v %c", tag, err, s.TxStatus())
	}
	// The failed block rolled back, first insert included.
	rows, _, err := run(t, s, "SELECT a FROM t")
	if err != nil || len(rows) != 0 {
		t.Fatalf("rows %v %v", rows, err)
	}
}

func TestTransactionCommitAndRollback(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	other, err := e.NewSession("other", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE TABLE t (a int)", "BEGIN", "INSERT INTO t VALUES (1), (2)", "DELETE FROM t WHERE a = 1"} {
		if _, _, err := run(t, s, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// The block sees its own writes; another session does not.
	if rows, _, err := run(t, s, "SELECT a FROM t"); err != nil || strings.Join(rows, ",") != "2" {
		t.Fatalf("inside: %v %v", rows, err)
	}
	if rows, _, err := run(t, other, "SELECT count(*) FROM t"); err != nil || rows[0] != "0" {
		t.Fatalf("outside: %v %v", rows, err)
	}
	if _, tag, err := run(t, s, "COMMIT"); err != nil || tag != "COMMIT" {
		t.Fatalf("commit: %q %v", tag, err)
	}
	if rows, _, err := run(t, other, "SELECT a FROM t"); err != nil || strings.Join(rows, ",") != "2" {
		t.Fatalf("after commit: %v %v", rows, err)
	}
	for _, q := range []string{"BEGIN", "INSERT INTO t VALUES (3)", "TRUNCATE t", "ROLLBACK"} {
		if _, _, err := run(t, s, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// An uncommitted block leaves nothing behind, across a restart too.
	if _, _, err := run(t, s, "BEGIN; INSERT INTO t VALUES (4)"); err != nil {
		t.Fatal(err)
	}
	e.Close()
	e, s = open(t, dir)
	defer e.Close()
	if rows, _, err := run(t, s, "SELECT a FROM t"); err != nil || strings.Join(rows, ",") != "2" {
		t.Fatalf("after rollback and restart: %v %v", rows, err)
	}
}

func TestCopyTextIntoTable(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	if _, _, err := run(t, s, "CREATE TABLE c (id int, name text, score float8)"); err != nil {
		t.Fatal(err)
	}
	stmts, _ := sql.Parse("COPY c FROM STDIN")
	p, err := s.Prepare(context.Background(), stmts[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Execute(context.Background(), p, nil)
	if err != nil || res.CopyIn == nil {
		t.Fatalf("copy: %v", err)
	}
	// Rows split across writes at awkward places.
	for _, chunk := range []string{"1\tann\t1.5\n2\tb", "ob\t\\N\n3\t\\N\t", "-2\n\\.\n"} {
		if err := res.CopyIn.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	tag, err := res.CopyIn.Finish()
	if err != nil || tag != "COPY 3" {
		t.Fatalf("finish: %q %v", tag, err)
	}
	e.Close()

	// The rows survive a restart.
	e, s = open(t, dir)
	defer e.Close()
	rows, _, err := run(t, s, "SELECT id, name, score FROM c ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1|ann|1.5", "2|bob|NULL", "3|NULL|-2"}
	if strings.Join(rows, ",") != strings.Join(want, ",") {
		t.Fatalf("rows %v, want %v", rows, want)
	}
}

func TestCopyBadValueWritesNothing(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	if _, _, err := run(t, s, "CREATE TABLE c (id int)"); err != nil {
		t.Fatal(err)
	}
	stmts, _ := sql.Parse("COPY c FROM STDIN")
	p, _ := s.Prepare(context.Background(), stmts[0], nil)
	res, err := s.Execute(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = res.CopyIn.Write([]byte("1\n2\nx\n"))
	if e := pgerr.As(err); e == nil || e.Code != pgerr.InvalidTextRepresentation || !strings.Contains(e.Detail, "line 3") {
		t.Fatalf("bad value: %v", err)
	}
	rows, _, err := run(t, s, "SELECT count(*) FROM c")
	if err != nil || rows[0] != "0" {
		t.Fatalf("rows after failed COPY: %v %v", rows, err)
	}
}

func TestSetShow(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	stmts, _ := sql.Parse("SET TimeZone = 'America/New_York'")
	p, _ := s.Prepare(context.Background(), stmts[0], nil)
	res, err := s.Execute(context.Background(), p, nil)
	if err != nil || res.ParamStatus["TimeZone"] != "America/New_York" {
		t.Fatalf("set: %v %v", res, err)
	}
	rows, _, err := run(t, s, "SHOW timezone")
	if err != nil || len(rows) != 1 || rows[0] != "America/New_York" {
		t.Fatalf("show: %v %v", rows, err)
	}
	if _, _, err := run(t, s, "SHOW nonsense"); pgerr.CodeOf(err) != pgerr.UndefinedObject {
		t.Fatalf("show unknown: %v", err)
	}
	// the column is headed by the setting's name as PostgreSQL spells it
	for q, want := range map[string]string{"SHOW timezone": "TimeZone", "SHOW DATESTYLE": "DateStyle", "SHOW Search_Path": "search_path"} {
		stmts, _ := sql.Parse(q)
		p, err := s.Prepare(context.Background(), stmts[0], nil)
		if err != nil || len(p.Columns) != 1 || p.Columns[0].Name != want {
			t.Fatalf("%s: columns %v, %v; want %s", q, p.Columns, err, want)
		}
	}
}

func TestStreamingStatementsAreRefusedByName(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	if _, _, err := run(t, s, "CREATE TABLE b (a int); CREATE TABLE a (x int)"); err != nil {
		t.Fatal(err)
	}
	rows, tag, err := run(t, s, "SHOW TABLES")
	if err != nil || tag != "SHOW" || strings.Join(rows, ",") != "a,b" {
		t.Fatalf("show tables: %v %q %v", rows, tag, err)
	}
	for q, want := range map[string]string{
		"CREATE TABLE w (a STRUCT<x int>)": "STRUCT types is not supported yet",
		"SELECT 1 EMIT ON UPDATE":          "EMIT ON UPDATE can only end the query of CREATE MATERIALIZED VIEW or SUBSCRIBE",
	} {
		_, _, err := run(t, s, q)
		if e := pgerr.As(err); e == nil || e.Code != pgerr.FeatureNotSupported || e.Message != want {
			t.Errorf("%s: %v", q, err)
		}
	}
	// Nothing was created by the refused statements.
	if rows, _, _ := run(t, s, "SHOW TABLES"); strings.Join(rows, ",") != "a,b" {
		t.Fatalf("tables after refusals: %v", rows)
	}
}
