package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

func mustRun(t *testing.T, s *Session, text string) []string {
	t.Helper()
	rows, _, err := run(t, s, text)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return rows
}

func prepare(t *testing.T, s *Session, text string) *Prepared {
	t.Helper()
	stmts, err := sql.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Prepare(context.Background(), stmts[0], nil)
	if err != nil {
		t.Fatalf("prepare %s: %v", text, err)
	}
	return p
}

// execute runs a prepared statement and renders its rows as run does.
func execute(t *testing.T, s *Session, p *Prepared, params ...types.Value) ([]string, error) {
	t.Helper()
	res, err := s.Execute(context.Background(), p, params)
	if err != nil {
		return nil, err
	}
	var lines []string
	if res.Rows != nil {
		defer res.Rows.Close()
		for {
			b, err := res.Rows.Next()
			if err != nil {
				return nil, err
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
	}
	return lines, nil
}

// Statements prepared before an ALTER are planned again; one whose result
// columns would change fails as PostgreSQL's does (0A000 "cached plan must
// not change result type").
func TestAlterReplansPreparedStatements(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE t (a int, b text, c int)")
	mustRun(t, s, "INSERT INTO t VALUES (1, 'x', 10)")

	star := prepare(t, s, "SELECT * FROM t")
	ac := prepare(t, s, "SELECT a, c FROM t")
	ins := prepare(t, s, "INSERT INTO t (a, c) VALUES (2, 20)")

	mustRun(t, s, "ALTER TABLE t DROP COLUMN b, ADD COLUMN d int DEFAULT 5")

	if _, err := execute(t, s, star); pgerr.CodeOf(err) != pgerr.FeatureNotSupported ||
		!strings.Contains(err.Error(), "cached plan must not change result type") {
		t.Fatalf("SELECT * after ALTER: got %v, want 0A000 cached plan must not change result type", err)
	}
	if _, err := execute(t, s, ins); err != nil {
		t.Fatalf("prepared INSERT after ALTER: %v", err)
	}
	got, err := execute(t, s, ac)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1|10", "2|20"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("SELECT a, c after ALTER = %v, want %v", got, want)
	}
	if got := mustRun(t, s, "SELECT * FROM t ORDER BY a"); strings.Join(got, ",") != "1|10|5,2|20|5" {
		t.Fatalf("rows after ALTER = %v", got)
	}
}

// ALTERs run while other sessions read and write the table: every
// statement either succeeds or fails with a clean SQL error, and the table
// ends with every committed row.
func TestAlterConcurrentWithDML(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE t (id int, v text)")
	const writers, rows = 3, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers*rows*2+50)
	for w := 0; w < writers; w++ {
		ws, err := e.NewSession("tester", "db", nil)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(w int, ws *Session) {
			defer wg.Done()
			for i := 0; i < rows; i++ {
				if _, _, err := run(t, ws, fmt.Sprintf("INSERT INTO t (id, v) VALUES (%d, 'w')", w*rows+i)); err != nil {
					errs <- fmt.Errorf("insert: %w", err)
				}
				if _, _, err := run(t, ws, "SELECT * FROM t WHERE id >= 0"); err != nil && pgerr.As(err) == nil {
					errs <- fmt.Errorf("select: %w", err)
				}
			}
		}(w, ws)
	}
	for i := 0; i < 10; i++ {
		mustRun(t, s, fmt.Sprintf("ALTER TABLE t ADD COLUMN x%d int DEFAULT %d", i, i))
		if i%2 == 1 {
			mustRun(t, s, fmt.Sprintf("ALTER TABLE t DROP COLUMN x%d", i-1))
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if pe := pgerr.As(err); pe == nil || pe.Code == pgerr.InternalError {
			t.Errorf("concurrent statement failed uncleanly: %v", err)
		}
	}
	if got := mustRun(t, s, "SELECT count(*), count(DISTINCT id) FROM t"); len(got) != 1 || got[0] != fmt.Sprintf("%d|%d", writers*rows, writers*rows) {
		t.Fatalf("rows after concurrent ALTERs = %v, want %d distinct", got, writers*rows)
	}
}

// While ALTER TABLE has stopped the views reading the table, reading one
// names it (not its OID) and says what to do.
func TestReadViewStoppedForAlter(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE t (a int)")
	mustRun(t, s, "INSERT INTO t VALUES (1)")
	mustRun(t, s, "CREATE MATERIALIZED VIEW v AS SELECT count(*) AS n FROM t")
	var table uint32
	for _, rel := range e.cat.Relations() {
		if rel.Name == "t" {
			table = rel.OID
		}
	}
	stopped := e.stopViewsOn(table) // what ALTER TABLE does before rewriting t
	if len(stopped) != 1 {
		t.Fatalf("stopped %d views", len(stopped))
	}
	oid := fmt.Sprint(stopped[0].OID)
	for _, q := range []string{"SELECT n FROM v", "COPY (SUBSCRIBE TO v) TO STDOUT"} {
		_, _, err := run(t, s, q)
		if pgerr.CodeOf(err) != pgerr.ObjectNotInPrerequisiteState || !strings.Contains(err.Error(), `materialized view "v" is not running`) ||
			strings.Contains(err.Error(), oid) {
			t.Fatalf("%s while stopped: %v", q, err)
		}
	}
	e.restartViews(stopped)
	if rows := mustRun(t, s, "SELECT n FROM v"); strings.Join(rows, ",") != "1" {
		t.Fatalf("after restart: %v", rows)
	}
}
