package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// A view follows its table through inserts, updates and deletes, survives
// a restart (rebuilt from the table), and reports its row errors.
func TestMaterializedViewLifecycle(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	mustRun(t, s, "CREATE TABLE t (id int PRIMARY KEY, g int, v int)")
	mustRun(t, s, "INSERT INTO t VALUES (1, 1, 10), (2, 1, 0), (3, 2, 5)")
	mustRun(t, s, "CREATE MATERIALIZED VIEW agg AS SELECT g, count(*) AS n, sum(v) AS s FROM t GROUP BY g")
	mustRun(t, s, "CREATE MATERIALIZED VIEW inv AS SELECT id, 100 / v AS q FROM t")
	mustRun(t, s, "CREATE MATERIALIZED VIEW big AS SELECT g, n FROM agg WHERE n > 1")
	check := func(when string) {
		t.Helper()
		mustRun(t, s, "FLUSH")
		for _, q := range []string{"agg", "inv", "big"} {
			got := strings.Join(mustRun(t, s, "SELECT * FROM "+q+" ORDER BY 1"), ",")
			var want string
			switch q {
			case "agg":
				want = strings.Join(mustRun(t, s, "SELECT g, count(*), sum(v) FROM t GROUP BY g ORDER BY 1"), ",")
			case "inv":
				want = strings.Join(mustRun(t, s, "SELECT id, CASE WHEN v <> 0 THEN 100 / v END FROM t ORDER BY 1"), ",")
			case "big":
				want = strings.Join(mustRun(t, s, "SELECT g, count(*) FROM t GROUP BY g HAVING count(*) > 1 ORDER BY 1"), ",")
			}
			if got != want {
				t.Errorf("%s: view %s = %q, batch query = %q", when, q, got, want)
			}
		}
	}
	check("after backfill")
	mustRun(t, s, "INSERT INTO t VALUES (4, 2, 7); UPDATE t SET g = 3 WHERE id = 1; DELETE FROM t WHERE id = 3")
	check("after changes")
	if got := mustRun(t, s, "SELECT viewname, status, row_errors FROM streamsql_views ORDER BY 1"); strings.Join(got, ",") != "agg|running|0,big|running|0,inv|running|1" {
		t.Errorf("streamsql_views: %v", got)
	}
	e.Close()

	e, s = open(t, dir)
	defer e.Close()
	check("after restart")
	mustRun(t, s, "BEGIN; INSERT INTO t VALUES (5, 3, 1); UPDATE t SET v = v + 1; COMMIT")
	mustRun(t, s, "BEGIN; DELETE FROM t; ROLLBACK")
	check("after transactions")

	// Dependencies: DROP is refused while a view reads the object.
	if _, _, err := run(t, s, "DROP MATERIALIZED VIEW agg"); pgerr.CodeOf(err) != pgerr.DependentObjectsStillExist {
		t.Fatalf("drop agg: %v", err)
	}
	mustRun(t, s, "DROP TABLE t CASCADE")
	if n := len(e.flow.Jobs()); n != 0 {
		t.Fatalf("%d jobs still running after DROP ... CASCADE", n)
	}
	if got := mustRun(t, s, "SHOW MATERIALIZED VIEWS"); len(got) != 0 {
		t.Fatalf("views after drop: %v", got)
	}
}

// Bad views fail at CREATE with a clear error and leave nothing behind.
func TestMaterializedViewErrors(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE t (a int)")
	for q, code := range map[string]pgerr.Code{
		"CREATE MATERIALIZED VIEW v AS SELECT * FROM nope":                        pgerr.UndefinedTable,
		"CREATE MATERIALIZED VIEW v AS SELECT a + 'x' FROM t":                     pgerr.InvalidTextRepresentation,
		"CREATE MATERIALIZED VIEW v AS SELECT * FROM generate_series(1, 2000000)": pgerr.ProgramLimitExceeded,
		"CREATE MATERIALIZED VIEW v AS SELECT a, random() FROM t":                 pgerr.FeatureNotSupported,
		"CREATE SOURCE s WITH (connector = 'nexmark')":                            pgerr.InvalidParameterValue,
		"CREATE SOURCE s WITH (connector = 'nexmark', table = 'bid', x = 1)":      pgerr.InvalidParameterValue,
	} {
		if _, _, err := run(t, s, q); pgerr.CodeOf(err) != code {
			t.Errorf("%s: got %v, want %s", q, err, code)
		}
	}
	if got := mustRun(t, s, "SHOW MATERIALIZED VIEWS"); len(got) != 0 {
		t.Fatalf("views after failed creates: %v", got)
	}
}

// A view over a finite nexmark source is complete after FLUSH; a
// subscription sees the snapshot, then each epoch's changes.
func TestSourceViewAndSubscribe(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE SOURCE bid WITH (connector = 'nexmark', table = 'bid', events = 50000)")
	mustRun(t, s, "CREATE MATERIALIZED VIEW n AS SELECT count(*) AS bids FROM bid")
	if got := mustRun(t, s, "SELECT * FROM n"); strings.Join(got, ",") != "46000" {
		t.Fatalf("bids: %v", got)
	}
	mustRun(t, s, "CREATE TABLE t (a int)")
	mustRun(t, s, "INSERT INTO t VALUES (1)")
	mustRun(t, s, "CREATE MATERIALIZED VIEW tv AS SELECT a FROM t")

	stmts, err := sql.Parse("SUBSCRIBE TO tv")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := s.Prepare(ctx, stmts[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Columns) != 3 || p.Columns[0].Name != "op" || p.Columns[1].Name != "epoch_time" {
		t.Fatalf("columns %v", p.Columns)
	}
	res, err := s.Execute(ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Rows.Close()
	s2, err := e.NewSession("other", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, s2, "INSERT INTO t VALUES (2); DELETE FROM t WHERE a = 1; FLUSH")
	var got []string
	for len(got) < 3 {
		b, err := res.Rows.Next()
		if err != nil || b == nil {
			t.Fatalf("next: %v %v", b, err)
		}
		for r := 0; r < int(b.NumRows()); r++ {
			op := types.ValueAt(b.Column(0), r, types.TText)
			a := types.ValueAt(b.Column(2), r, types.TInt4)
			got = append(got, types.FormatText(op, types.TText, &types.DefaultFormat)+" "+types.FormatText(a, types.TInt4, &types.DefaultFormat))
		}
	}
	if strings.Join(got, ",") != "insert 1,insert 2,delete 1" {
		t.Fatalf("subscription rows: %v", got)
	}
}

// ALTER TABLE under materialized views: they restart on the new layout
// (ADD COLUMN, RENAME), and DROP COLUMN ... CASCADE drops views on views.
func TestAlterTableUnderViews(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE t (a int, b int); INSERT INTO t VALUES (1, 2)")
	mustRun(t, s, "CREATE MATERIALIZED VIEW v AS SELECT a, b FROM t")
	mustRun(t, s, "CREATE MATERIALIZED VIEW w AS SELECT count(*) FROM v")
	mustRun(t, s, "ALTER TABLE t ADD COLUMN c int")
	// The views are rebuilt when ALTER returns, not empty until an epoch ends.
	if got := mustRun(t, s, "SELECT * FROM w"); strings.Join(got, ",") != "1" {
		t.Fatalf("w right after ADD COLUMN = %v", got)
	}
	mustRun(t, s, "INSERT INTO t VALUES (3, 4, 5)")
	mustRun(t, s, "ALTER TABLE t RENAME TO t2; INSERT INTO t2 VALUES (6, 7, 8); FLUSH")
	if got := mustRun(t, s, "SELECT * FROM w"); strings.Join(got, ",") != "3" {
		t.Fatalf("w after ALTERs = %v", got)
	}
	if got := mustRun(t, s, "SELECT viewname, status FROM streamsql_views"); strings.Join(got, ",") != "v|running,w|running" {
		t.Fatalf("views after ALTERs: %v", got)
	}
	if _, _, err := run(t, s, "ALTER TABLE t2 DROP COLUMN b"); pgerr.CodeOf(err) != pgerr.DependentObjectsStillExist {
		t.Fatalf("drop column under a view: %v", err)
	}
	mustRun(t, s, "ALTER TABLE t2 DROP COLUMN b CASCADE")
	if got := mustRun(t, s, "SHOW MATERIALIZED VIEWS"); len(got) != 0 || len(e.flow.Jobs()) != 0 {
		t.Fatalf("views after DROP COLUMN CASCADE: %v, %d jobs", got, len(e.flow.Jobs()))
	}
}
