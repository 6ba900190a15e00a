package engine

import (
	"slices"
	"strings"
	"testing"
)

// TestDefaultParallelismSpread: a view created without SET
// streaming_parallelism spreads the server's default over its keyed
// operators (planner's spreadOver): one keyed operator gets all 4
// instances, a join under a GROUP BY (two) gets 2 each, and SET
// streaming_parallelism = 4 gives every keyed operator 4. The catalog
// keeps the parallelism the view runs at.
func TestDefaultParallelismSpread(t *testing.T) {
	e, err := Open(Config{DataDir: t.TempDir(), StreamingParallelism: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string) []string {
		t.Helper()
		rows, _, err := run(t, s, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return rows
	}
	exec("CREATE TABLE bid (auction int, bidder int, price bigint)")
	exec("CREATE TABLE auction (id int, category int)")
	const (
		one = "SELECT auction, count(*) AS n FROM bid GROUP BY auction"
		two = "SELECT a.category, count(*) AS n FROM bid b JOIN auction a ON a.id = b.auction GROUP BY a.category"
	)
	// instances is the largest "(N instances)" of the plan's EXPLAIN.
	instances := func(q string) int {
		t.Helper()
		plan := strings.Join(exec("EXPLAIN CREATE MATERIALIZED VIEW x AS "+q), "\n")
		most := 1
		for _, n := range []int{2, 3, 4} {
			if strings.Contains(plan, "over "+string(rune('0'+n))+" instances") {
				most = n
			}
		}
		return most
	}
	if got := instances(one); got != 4 {
		t.Fatalf("one keyed operator at the default 4: %d instances", got)
	}
	if got := instances(two); got != 2 {
		t.Fatalf("two keyed operators at the default 4: %d instances each, want 2", got)
	}
	// EXPLAIN says why, only when the rule lowered the parallelism
	const why = "Parallelism: 2 (streaming_parallelism 4, not SET, spread over 2 stateful operators)"
	if plan := exec("EXPLAIN CREATE MATERIALIZED VIEW x AS " + two); !slices.Contains(plan, why) {
		t.Fatalf("EXPLAIN of two keyed operators at the default 4 does not say %q:\n%s", why, strings.Join(plan, "\n"))
	}
	if plan := strings.Join(exec("EXPLAIN CREATE MATERIALIZED VIEW x AS "+one), "\n"); strings.Contains(plan, "Parallelism:") {
		t.Fatalf("EXPLAIN of one keyed operator names a parallelism:\n%s", plan)
	}
	exec("CREATE MATERIALIZED VIEW v2 AS " + two)
	exec("SET streaming_parallelism = 4")
	if got := instances(two); got != 4 {
		t.Fatalf("two keyed operators at SET streaming_parallelism = 4: %d instances each", got)
	}
	exec("CREATE MATERIALIZED VIEW v4 AS " + two)
	for name, want := range map[string]int{"v2": 2, "v4": 4} {
		oid, err := e.cat.RelationOID(name, []string{"public"})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.cat.Relation(oid).Parallelism; got != want {
			t.Errorf("view %s: catalog parallelism %d, want %d", name, got, want)
		}
	}
}
