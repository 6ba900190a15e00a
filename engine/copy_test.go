package engine

import (
	"context"
	"reflect"
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
)

func TestCopySplitText(t *testing.T) {
	c := &copyIn{opts: copyOptions{format: "text", delimiter: "\t", null: `\N`}}
	if err := c.splitText([]byte("1\ta\\tb\t\\N\t\\\\N\t\\101\\x41")); err != nil {
		t.Fatal(err)
	}
	want := []string{"1", "a\tb", "N", `\N`, "AA"}
	wantNull := []bool{false, false, true, false, false}
	if !reflect.DeepEqual(c.fields, want) || !reflect.DeepEqual(c.isNull, wantNull) {
		t.Fatalf("fields %q nulls %v", c.fields, c.isNull)
	}
}

func TestCopySplitCSV(t *testing.T) {
	c := &copyIn{rel: &catalog.Relation{Name: "t"}, opts: copyOptions{format: "csv", delimiter: ",", null: "", quote: `"`, escape: `"`}}
	if err := c.splitCSV([]byte(`1,"a,b","say ""hi""",,""`)); err != nil {
		t.Fatal(err)
	}
	want := []string{"1", "a,b", `say "hi"`, "", ""}
	wantNull := []bool{false, false, false, true, false}
	if !reflect.DeepEqual(c.fields, want) || !reflect.DeepEqual(c.isNull, wantNull) {
		t.Fatalf("fields %q nulls %v", c.fields, c.isNull)
	}
	if err := c.splitCSV([]byte(`"open`)); err == nil {
		t.Fatal("unterminated quote accepted")
	}
}

func TestCopyCSVLineEnd(t *testing.T) {
	c := &copyIn{opts: copyOptions{format: "csv", quote: `"`, escape: `"`}}
	data := []byte("1,\"two\nlines\"\n2,x\n")
	if got := c.lineEnd(data); got != 13 {
		t.Fatalf("line end %d", got)
	}
}

// COPY with a column list fills the columns it leaves out with their
// defaults (NULL without one), as PostgreSQL does; a default that fails
// fails the COPY.
func TestCopyFillsDefaults(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE cpd (id int, b int DEFAULT 7, c text DEFAULT 'x' || 'y', d int, z int DEFAULT 1 / 0)")
	copyIn := func(q, data string) error { t.Helper(); return copyFromStdin(t, s, q, data) }
	if err := copyIn("COPY cpd (id, d, z) FROM STDIN", "1\t10\t0\n2\t\\N\t0\n"); err != nil {
		t.Fatal(err)
	}
	if err := copyIn("COPY cpd (d, id, z) FROM STDIN (FORMAT csv)", "5,3,0\n"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(mustRun(t, s, "SELECT id, b, c, d FROM cpd ORDER BY id"), ","); got != "1|7|xy|10,2|7|xy|NULL,3|7|xy|5" {
		t.Fatalf("rows %q", got)
	}
	if err := copyIn("COPY cpd (id) FROM STDIN", "4\n"); pgerr.CodeOf(err) != pgerr.DivisionByZero {
		t.Fatalf("a failing default: %v", err)
	}
	if got := mustRun(t, s, "SELECT count(*) FROM cpd"); strings.Join(got, "") != "3" {
		t.Fatalf("rows after the failed COPY: %v", got)
	}
}

// TestCopyGeneratedColumns: COPY FROM computes a generated column and
// leaves it out of the default column list (COPY TO too); naming it is
// 42P10, as in PostgreSQL.
func TestCopyGeneratedColumns(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE cpg (a int, b int GENERATED ALWAYS AS (a * 2) STORED, c text)")
	if err := copyFromStdin(t, s, "COPY cpg FROM STDIN", "1\tx\n2\ty\n"); err != nil {
		t.Fatal(err)
	}
	if err := copyFromStdin(t, s, "COPY cpg (c, a) FROM STDIN (FORMAT csv)", "z,3\n"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(mustRun(t, s, "SELECT a, b, c FROM cpg ORDER BY a"), ","); got != "1|2|x,2|4|y,3|6|z" {
		t.Fatalf("rows %q", got)
	}
	for _, q := range []string{"COPY cpg (a, b) FROM STDIN", "COPY cpg (b) TO STDOUT"} {
		if _, err := exec1(context.Background(), s, q); pgerr.CodeOf(err) != pgerr.InvalidColumnReference {
			t.Fatalf("%s: %v, want 42P10", q, err)
		}
	}
	res, err := exec1(context.Background(), s, "COPY cpg TO STDOUT")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.CopyOut.Columns); n != 2 {
		t.Fatalf("COPY TO has %d columns, want a and c", n)
	}
	res.CopyOut.Rows.Close()
}

// copyFromStdin runs q, a COPY ... FROM STDIN, with data as its input.
func copyFromStdin(t *testing.T, s *Session, q, data string) error {
	t.Helper()
	stmts, err := sql.Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Prepare(context.Background(), stmts[0], nil)
	if err != nil {
		return err
	}
	res, err := s.Execute(context.Background(), p, nil)
	if err != nil {
		return err
	}
	if err := res.CopyIn.Write([]byte(data)); err != nil {
		return err
	}
	_, err = res.CopyIn.Finish()
	return err
}

// TestCopyOptionsRefusedByName: a COPY option is honoured or refused by
// name, never ignored (PostgreSQL's 42601 for an unknown one).
func TestCopyOptionsRefusedByName(t *testing.T) {
	for _, c := range []struct {
		opts string
		code pgerr.Code
		msg  string
	}{
		{"(bogus 1)", pgerr.SyntaxError, `option "bogus" not recognized`},
		{"(FORMAT csv, FORCE_QUOTE (a))", "", ""},
		{"(FREEZE)", "", ""},
		{"(ENCODING 'LATIN1')", pgerr.FeatureNotSupported, `COPY ENCODING "LATIN1" is not supported: data is converted only to and from UTF8`},
		{"(ENCODING 'UTF8')", "", ""},
		{"(FORMAT csv, HEADER true)", "", ""},
	} {
		_, err := parseCopyOptions(copyOpts(t, "COPY x TO STDOUT "+c.opts), false)
		if c.code == "" {
			if err != nil {
				t.Errorf("%s: %v", c.opts, err)
			}
			continue
		}
		if e := pgerr.As(err); e == nil || e.Code != c.code || e.Message != c.msg {
			t.Errorf("%s: %v, want %s %s", c.opts, err, c.code, c.msg)
		}
	}
}

func copyOpts(t *testing.T, q string) []*pg.Node {
	t.Helper()
	stmts, err := sql.Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	return stmts[0].AST.GetCopyStmt().Options
}

// TestCopyFromUnderStatementTimeout: COPY FROM STDIN's data arrives after
// Execute returns; a statement_timeout must keep running until Finish, not
// cancel the copy as Execute returns.
func TestCopyFromUnderStatementTimeout(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	for _, q := range []string{"SET statement_timeout = '30s'", "CREATE TABLE c (id int)"} {
		if _, _, err := run(t, s, q); err != nil {
			t.Fatal(err)
		}
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
	if err := res.CopyIn.Write([]byte("1\n2\n")); err != nil {
		t.Fatal(err)
	}
	if tag, err := res.CopyIn.Finish(); err != nil || tag != "COPY 2" {
		t.Fatalf("finish: %q %v", tag, err)
	}
}
