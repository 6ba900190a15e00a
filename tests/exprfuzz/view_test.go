package exprfuzz

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/tests/harness"
)

// viewRows are rows the view test writes into fz: the fixture's edge
// values except floats so large that a running sum loses what a retraction
// takes back out (1e300 + 2.5 - 1e300 is 0 in float8, in any engine that
// keeps a sum).
var viewRows = []string{
	"(%d, 0, 0, 0, 0, '', true, '2024-01-31', '2024-02-29 12:00:00', '0')",
	"(%d, -1, -7, -2.5, -0.5, 'abc', false, '1999-12-31', '2000-01-01 00:00:00.5', '1 day 02:03:04')",
	"(%d, 2147483647, 9223372036854775807, 123456789.123456789, 1e10, 'Hello World', NULL, '0044-03-15 BC', '1970-01-01', '-3 mons -2 days')",
	"(%d, -2147483648, -9223372036854775808, 1e-20, 'NaN', ' a,b;c ', true, '2000-02-29', '2024-12-31 23:59:59.999999', '1 year 2 months')",
	"(%d, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
	"(%d, 7, 3, 0.5, 2.5, '12', false, '2024-03-10', '2024-03-10 02:30:00', '36:00:00')",
}

// TestViewsMatchQueries creates materialized views of the random queries
// of TestQueriesMatchPostgres that the streaming planner takes, then
// inserts, updates and deletes rows of both tables at random; after every
// step (FLUSH) each view must hold what its query returns as a batch
// query over the tables then (rows in any order, floats to 1e-12). The
// views run at parallelism 1, 3 or 8 by seed, and the server restarts half
// way (the views resume from their checkpoints). A step whose batch query
// fails is not compared for that view. No PostgreSQL is needed.
//
// EXPRFUZZ_VIEWS sets the views (default 40), EXPRFUZZ_STEPS the writes
// (default 30), EXPRFUZZ_SEED the seed.
func TestViewsMatchQueries(t *testing.T) {
	ctx := context.Background()
	srv := harness.Start(t, t.TempDir())
	c, err := connect(ctx, srv.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close(ctx) }()
	ddl := append([]string{"CREATE TABLE fz (" + strings.Join(table.cols, ", ") + ")"}, joinTable...)
	for _, s := range ddl {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	seed := uint64(harness.EnvInt(t, "EXPRFUZZ_SEED", 1))
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x71e5))}
	nextID := 1
	insert := func() string {
		var vals []string
		for n := 1 + g.r.IntN(3); n > 0; n-- {
			vals = append(vals, fmt.Sprintf(viewRows[g.r.IntN(len(viewRows))], nextID))
			nextID++
		}
		return "INSERT INTO fz VALUES " + strings.Join(vals, ", ")
	}
	for range 3 {
		if _, err := c.Exec(ctx, insert()); err != nil {
			t.Fatal(err)
		}
	}

	par := []int{1, 3, 8}[seed%3]
	if _, err := c.Exec(ctx, fmt.Sprintf("SET streaming_parallelism = %d", par)); err != nil {
		t.Fatal(err)
	}
	want := harness.EnvInt(t, "EXPRFUZZ_VIEWS", 40)
	var views []string // their queries; view k is v<k>
	refused := 0
	for tries := 0; len(views) < want && tries < want*20; tries++ {
		q := g.query()
		if _, err := c.Exec(ctx, fmt.Sprintf("CREATE MATERIALIZED VIEW v%d AS %s", len(views), q)); err != nil {
			refused++
			if testing.Verbose() && refused <= 12 {
				t.Logf("refused: %v\n    %s", err, q)
			}
			continue
		}
		views = append(views, q)
	}
	t.Logf("%d views at parallelism %d (%d queries refused or failing)", len(views), par, refused)

	steps := harness.EnvInt(t, "EXPRFUZZ_STEPS", 30)
	bad, compared, skipped := 0, 0, 0
	for step := 0; step < steps && bad < 10; step++ {
		if step == steps/2 { // the views restart from their checkpoints
			c.Close(ctx)
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			if c, err = connect(ctx, srv.ConnString()); err != nil {
				t.Fatal(err)
			}
		}
		var w string
		switch g.r.IntN(6) {
		case 0, 1:
			w = insert()
		case 2:
			w = fmt.Sprintf("DELETE FROM fz WHERE id %% 5 = %d", g.r.IntN(5))
		case 3:
			w = g.pick("UPDATE fz SET i4 = i4 + 1 WHERE i4 < 100", "UPDATE fz SET s = s || 'a', b = NOT b", "UPDATE fz SET n = n * 2, f = f - 1 WHERE id % 2 = 0", "UPDATE fz SET d = d + 1, ts = ts + interval '1 hour'")
		case 4:
			w = fmt.Sprintf("INSERT INTO fy VALUES (%d, %d, %d.5, '%s', %d)", 100+step, g.r.IntN(nextID), g.r.IntN(20)-10, g.pick("x", "y", "w"), g.r.IntN(4))
		default:
			w = g.pick("DELETE FROM fy WHERE k % 3 = 0", "UPDATE fy SET v = v + 1, g = g + 1 WHERE k % 2 = 1", "UPDATE fy SET fid = fid + 1")
		}
		if _, err := c.Exec(ctx, w); err != nil {
			continue // a write that fails (an overflow) changes nothing
		}
		if _, err := c.Exec(ctx, "FLUSH"); err != nil {
			t.Fatalf("FLUSH after %s: %v", w, err)
		}
		for k, q := range views {
			batch := ask(ctx, c, q)
			if batch.state != "" {
				skipped++
				continue
			}
			compared++
			view := ask(ctx, c, fmt.Sprintf("SELECT * FROM v%d", k))
			if !same(sorted(batch), sorted(view)) {
				bad++
				t.Errorf("step %d (%s), view v%d:\n  %s\n  query: %s\n  view:  %s", step, w, k, q, sorted(batch), sorted(view))
			}
		}
	}
	t.Logf("%d comparisons of a view with its query, %d differences; %d skipped (the batch query failed)", compared, bad, skipped)
	if compared == 0 {
		t.Fatal("nothing compared")
	}
}
