package exec

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// runBudget runs n with a statement budget of limit bytes, work_mem
// workMem and temporary directory dir; it returns the rows and the
// partitions a HashAgg at the root spilled.
func runBudget(t *testing.T, n Node, limit, workMem int64, dir string) ([][]any, int, error) {
	t.Helper()
	q := membudget.NewQuery(nil, limit, workMem)
	ctx := &Context{Eval: &expr.Context{Ctx: context.Background(), Budget: q}, BatchSize: 256, TempDir: dir}
	it, err := n.Open(ctx)
	if err != nil {
		return nil, 0, err
	}
	bs, err := Drain(it)
	spilled := 0
	switch h := it.(type) {
	case *hashAggIter:
		spilled = h.spilled
	case *graceJoinIter:
		if h.spilled {
			spilled = 1
		}
	}
	if err != nil {
		return nil, spilled, err
	}
	if q.Used() != 0 {
		t.Errorf("statement still holds %d bytes after Close", q.Used())
	}
	return rows(bs), spilled, nil
}

// spillInput makes n rows (k int8, s text, v int4) with NULL keys, many
// groups and, with skew, most rows on a few keys.
func spillInput(r *rand.Rand, n, groups int, skew bool) *srcNode {
	ks, ss, vs := make([]any, n), make([]any, n), make([]any, n)
	for i := 0; i < n; i++ {
		k := r.Intn(groups)
		if skew && r.Intn(4) != 0 {
			k = r.Intn(3)
		}
		ks[i] = k
		ss[i] = fmt.Sprintf("key-%d-%d", k%97, k)
		if r.Intn(30) == 0 {
			ks[i] = nil
		}
		if r.Intn(40) == 0 {
			ss[i] = nil
		}
		vs[i] = r.Intn(20)
		if r.Intn(10) == 0 {
			vs[i] = nil
		}
	}
	return src(cols(types.TInt8, types.TText, types.TInt4), 256, ks, ss, vs)
}

// spillAggs is every aggregate kind: plain, DISTINCT, ORDER BY, FILTER,
// state-keeping (string_agg, array_agg) and ordered-set.
func spillAggs(t *testing.T) []AggCall {
	v := col(2, types.TInt4)
	cnt := agg(t, "count", false, v)
	cnt.Distinct = true
	sa := agg(t, "string_agg", false, col(1, types.TText), konst(types.TText, ","))
	sa.OrderBy = []SortKey{{E: v}, {E: col(1, types.TText)}}
	aa := agg(t, "array_agg", false, v) // input order within the group
	aa.Filter = &fnExpr{t: types.TBool, f: func(r []any) any { return r[2] != nil && r[2].(int64) >= 10 }}
	f := &fnExpr{t: types.TFloat8, name: "v", f: func(r []any) any {
		if r[2] == nil {
			return nil
		}
		return float64(r[2].(int64))
	}}
	pc := agg(t, "percentile_disc", false, konst(types.TFloat8, 0.5), f)
	pc.OrderBy = []SortKey{{E: f}}
	md := agg(t, "mode", false, f)
	md.OrderBy = []SortKey{{E: f}}
	return []AggCall{agg(t, "count", true), agg(t, "sum", false, v), agg(t, "avg", false, v),
		agg(t, "min", false, col(1, types.TText)), agg(t, "max", false, v), cnt, sa, aa, pc, md}
}

// TestHashAggSpillMatchesMemory: at a 64kB work_mem the aggregation spills
// and returns exactly the in-memory result, for integer, text and
// two-column keys, uniform and skewed, with NULL keys.
func TestHashAggSpillMatchesMemory(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	dir := t.TempDir()
	keySets := map[string][]expr.Expr{
		"int":     {col(0, types.TInt8)},
		"text":    {col(1, types.TText)},
		"int,txt": {col(0, types.TInt8), col(1, types.TText)},
	}
	for _, skew := range []bool{false, true} {
		in := spillInput(r, 20000, 5000, skew)
		for name, keys := range keySets {
			h := aggNode(in, keys, spillAggs(t)...)
			want, _, err := runBudget(t, h, 0, 0, "")
			if err != nil {
				t.Fatal(err)
			}
			got, spilled, err := runBudget(t, h, 0, 64<<10, dir)
			if err != nil {
				t.Fatalf("%s skew=%v: %v", name, skew, err)
			}
			if spilled == 0 {
				t.Fatalf("%s skew=%v: nothing spilled", name, skew)
			}
			wantSameRows(t, got, want)
		}
	}
}

// TestHashAggSpillBounded: a statement limit of 8 x work_mem that the
// in-memory aggregation passes (53200, as without a temporary directory)
// is enough when it spills; the budget's accounting is the measure.
func TestHashAggSpillBounded(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	in := spillInput(r, 60000, 50000, false)
	h := aggNode(in, []expr.Expr{col(1, types.TText)}, agg(t, "count", true), agg(t, "sum", false, col(2, types.TInt4)))
	const work = 64 << 10
	_, _, err := runBudget(t, h, 8*work, work, "")
	if e := pgerr.As(err); e == nil || e.Code != pgerr.OutOfMemory {
		t.Fatalf("without a temporary directory: %v, want 53200", err)
	}
	want, _, err := runBudget(t, h, 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	got, spilled, err := runBudget(t, h, 8*work, work, t.TempDir())
	if err != nil {
		t.Fatalf("spilling: %v", err)
	}
	if spilled < aggSpillParts {
		t.Fatalf("spilled %d partitions, want re-partitioning (> %d)", spilled, aggSpillParts)
	}
	wantSameRows(t, got, want)
}

// TestHashAggSpillBigGroup: one group whose state alone passes work_mem
// (string_agg of every row) cannot be split; it grows against the
// statement limit and the others spill around it.
func TestHashAggSpillBigGroup(t *testing.T) {
	n := 30000
	ks, ss := make([]any, n), make([]any, n)
	for i := range ks {
		ks[i] = i % 2000
		if i%2 == 0 {
			ks[i] = -1
		}
		ss[i] = fmt.Sprintf("value-%06d", i)
	}
	in := src(cols(types.TInt8, types.TText), 256, ks, ss)
	h := aggNode(in, []expr.Expr{col(0, types.TInt8)}, agg(t, "string_agg", false, col(1, types.TText), konst(types.TText, ",")))
	want, _, err := runBudget(t, h, 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	got, spilled, err := runBudget(t, h, 0, 16<<10, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if spilled == 0 {
		t.Fatal("nothing spilled")
	}
	wantSameRows(t, got, want)
}

// TestHashAggNoGroupsSpill: no input rows, and no GROUP BY, are unchanged.
func TestHashAggNoGroupsSpill(t *testing.T) {
	in := src(cols(types.TInt8, types.TText, types.TInt4), 256, []any{}, []any{}, []any{})
	got, _, err := runBudget(t, aggNode(in, []expr.Expr{col(0, types.TInt8)}, agg(t, "count", true)), 0, 1, t.TempDir())
	if err != nil || len(got) != 0 {
		t.Fatalf("group by over no rows: %v %v", got, err)
	}
	got, _, err = runBudget(t, aggNode(in, nil, agg(t, "count", true)), 0, 1, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, got, [][]any{{int64(0)}})
}
