package exprfuzz

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/tests/harness"
)

// answer is what one server said to a query: its rows' text, or the
// SQLSTATE of its error.
type answer struct {
	rows  [][]string
	state string
	msg   string
}

func (a answer) String() string {
	if a.state != "" {
		return "ERROR " + a.state + ": " + a.msg
	}
	return fmt.Sprint(a.rows)
}

func ask(ctx context.Context, c *pgx.Conn, q string) answer {
	rows, err := harness.TextRows(ctx, c, q)
	if err != nil {
		return errAnswer(err)
	}
	return answer{rows: rows}
}

func errAnswer(err error) answer {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return answer{state: pe.Code, msg: pe.Message}
	}
	return answer{state: "?????", msg: err.Error()}
}

// same compares two answers: equal text, or floats within 1e-12
// relative (the last bits of transcendental functions), or the same
// SQLSTATE.
func same(a, b answer) bool {
	if a.state != "" || b.state != "" {
		return a.state == b.state
	}
	if len(a.rows) != len(b.rows) {
		return false
	}
	for i := range a.rows {
		if len(a.rows[i]) != len(b.rows[i]) {
			return false
		}
		for j := range a.rows[i] {
			x, y := a.rows[i][j], b.rows[i][j]
			if x == y {
				continue
			}
			fx, e1 := strconv.ParseFloat(x, 64)
			fy, e2 := strconv.ParseFloat(y, 64)
			if e1 != nil || e2 != nil || math.Abs(fx-fy) > 1e-12*math.Max(1, math.Abs(fx)) {
				return false
			}
		}
	}
	return true
}

func connect(ctx context.Context, url string) (*pgx.Conn, error) {
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	for _, s := range []string{"SET timezone = 'UTC'", "SET datestyle = 'ISO, MDY'", "SET intervalstyle = 'postgres'", "SET extra_float_digits = 1"} {
		if _, err := c.Exec(ctx, s); err != nil {
			c.Close(ctx)
			return nil, fmt.Errorf("%s: %w", s, err)
		}
	}
	return c, nil
}

// TestExpressionsMatchPostgres evaluates seeded random scalar expressions
// (arithmetic, string, date and time functions, casts, CASE, COALESCE,
// comparisons) over a table of edge values on streamsql and on
// PostgreSQL 15, and requires the same text for every row, or the same
// SQLSTATE where either fails. A row whose expression fails is asked
// alone, so that which row fails first does not matter.
//
// EXPRFUZZ_N sets the expressions (default 2000), EXPRFUZZ_SEED the first
// seed. Skipped when PostgreSQL is unreachable, except under CI=true.
func TestExpressionsMatchPostgres(t *testing.T) {
	ctx := context.Background()
	pg, ss := servers(t, createSQL())

	n := harness.EnvInt(t, "EXPRFUZZ_N", 2000)
	seed := uint64(harness.EnvInt(t, "EXPRFUZZ_SEED", 1))
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x5eed))}
	bad, planErrs := 0, 0
	for k := 0; k < n; k++ {
		typ := typ(g.r.IntN(int(nTypes)))
		e := g.expr(typ, 1+g.r.IntN(4))
		q := "SELECT " + e + " FROM fz ORDER BY id"
		want, got := ask(ctx, pg, q), ask(ctx, ss, q)
		if want.state == "" && same(want, got) {
			continue
		}
		if failsInPlanner(ctx, pg, q, want) {
			// PostgreSQL failed while planning: it evaluates constant
			// subexpressions then, even in branches never taken (its
			// documentation's CASE caveat); streamsql leaves a constant
			// that fails for run time, where it is not reached.
			planErrs++
			continue
		}
		// Ask each row alone: which row fails first is not specified.
		for id := 1; id <= len(table.rows); id++ {
			q := fmt.Sprintf("SELECT %s FROM fz WHERE id = %d", e, id)
			want, got := ask(ctx, pg, q), ask(ctx, ss, q)
			if !same(want, got) {
				bad++
				t.Errorf("expression %d (%s) at row %d:\n  %s\n  postgres: %s\n  streamsql: %s", k, typName[typ], id, q, want, got)
				break
			}
		}
		if bad >= 20 {
			t.Fatalf("stopping after %d differences", bad)
		}
	}
	t.Logf("%d expressions, seed %d: %d differences; %d failed in PostgreSQL's planner (constants folded), not compared", n, seed, bad, planErrs)
}

// failsInPlanner reports whether PostgreSQL's failure want of q is one of
// its planner's, evaluating a constant (EXPLAIN fails the same way), other
// than a syntax or semantic error (class 42, 0A), which must be compared.
func failsInPlanner(ctx context.Context, pg *pgx.Conn, q string, want answer) bool {
	if want.state == "" || strings.HasPrefix(want.state, "42") || strings.HasPrefix(want.state, "0A") {
		return false
	}
	return ask(ctx, pg, "EXPLAIN "+q).state == want.state
}

// servers connects to PostgreSQL (a schema of its own, dropped at the end)
// and to an in-process streamsql, and runs ddl on both. It skips the test
// when PostgreSQL is unreachable, except under CI=true.
func servers(t *testing.T, ddl []string) (pg, ss *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	url := os.Getenv("STREAMSQL_ORACLE_URL")
	if url == "" {
		url = "postgres://postgres:postgres@127.0.0.1:5432/postgres"
	}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	pg, err := connect(cctx, url)
	cancel()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no PostgreSQL oracle at %s: %v", url, err)
		}
		t.Skipf("no PostgreSQL oracle: %v", err)
	}
	t.Cleanup(func() { pg.Close(ctx) })
	schema := fmt.Sprintf("exprfuzz_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	for _, s := range []string{"CREATE SCHEMA " + schema, "SET search_path = " + schema} {
		if _, err := pg.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { pg.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE") })
	srv := harness.Start(t, t.TempDir())
	if ss, err = connect(ctx, srv.ConnString()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close(ctx) })
	for _, s := range ddl {
		for _, c := range []*pgx.Conn{pg, ss} {
			if _, err := c.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	return pg, ss
}
