package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/types"
)

// withProcs raises GOMAXPROCS for a test so that up to n workers run even
// on a small machine.
func withProcs(t *testing.T, n int) {
	old := runtime.GOMAXPROCS(n)
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

// runWorkers runs n with the given workers, batch size, work_mem (0: no
// spilling) and returns its rows; the statement must hold nothing after.
func runWorkers(t *testing.T, n Node, workers, batch int, workMem int64) ([][]any, Iterator) {
	t.Helper()
	q := membudget.NewQuery(nil, 0, workMem)
	ctx := &Context{Eval: &expr.Context{Ctx: context.Background(), Budget: q}, BatchSize: batch, Workers: workers}
	if workMem > 0 {
		ctx.TempDir = t.TempDir()
	}
	it, err := n.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := Drain(it)
	if err != nil {
		t.Fatalf("workers=%d: %v", workers, err)
	}
	if u := q.Used(); u != 0 {
		t.Errorf("workers=%d: statement still holds %d bytes after Close", workers, u)
	}
	return rows(bs), it
}

// parInput makes n rows (k int8, s text, v int8, f float8, d numeric) with
// NULLs in every column, keys drawn from groups values.
func parInput(r *rand.Rand, n, groups, per int) *srcNode {
	vals := make([][]any, 5)
	for c := range vals {
		vals[c] = make([]any, n)
	}
	for i := 0; i < n; i++ {
		k := r.Intn(groups)
		vals[0][i] = k - groups/2
		vals[1][i] = fmt.Sprintf("s%d", k%(groups/3+1))
		vals[2][i] = r.Int63n(1<<40) - 1<<39
		vals[3][i] = r.NormFloat64() * 1e6
		vals[4][i] = fmt.Sprintf("%d.%02d", r.Intn(1000), r.Intn(100))
		for c := range vals {
			if r.Intn(15) == 0 {
				vals[c][i] = nil
			}
		}
	}
	return src(cols(types.TInt8, types.TText, types.TInt8, types.TFloat8, types.TNumeric), per, vals...)
}

// TestParallelHashAggEqualsSerial runs random GROUP BY shapes serially and
// with 2-4 workers and requires the same rows (as multisets: group order is
// unspecified): both parallel paths (partial states for count/sum/avg/min/
// max of integers unless the first batches show many groups, key
// partitioning for the rest: float sums, string_agg,
// array_agg, DISTINCT and ORDER BY aggregates), NULL keys, FILTER, one- and
// two-column, integer, text and encoded keys, with and without spilling.
func TestParallelHashAggEqualsSerial(t *testing.T) {
	withProcs(t, 4)
	r := rand.New(rand.NewSource(7))
	k, s, v, f, d := col(0, types.TInt8), col(1, types.TText), col(2, types.TInt8), col(3, types.TFloat8), col(4, types.TNumeric)
	keySets := [][]expr.Expr{{k}, {s}, {k, s}, {d}, {f}, {k, v}}
	trials := 24
	if testing.Short() {
		trials = 6
	}
	for trial := 0; trial < trials; trial++ {
		n := 2000 + r.Intn(20000)
		groups := []int{3, 50, 2000, 30000}[r.Intn(4)]
		in := parInput(r, n, groups, 1+r.Intn(3000))
		keys := keySets[r.Intn(len(keySets))]
		var aggs []AggCall
		combine := trial%2 == 0 // only mergeable states: the partial-state path
		aggs = append(aggs, agg(t, "count", true), agg(t, "sum", false, v), agg(t, "min", false, v), agg(t, "max", false, k), agg(t, "avg", false, v), agg(t, "count", false, s))
		if r.Intn(2) == 0 {
			c := agg(t, "count", true)
			gt, err := expr.NewBinary(">", v, k)
			if err != nil {
				t.Fatal(err)
			}
			c.Filter = gt
			aggs = append(aggs, c)
		}
		if !combine {
			sa := agg(t, "string_agg", false, s, &expr.Const{V: ",", T: types.TText})
			so := agg(t, "string_agg", false, s, &expr.Const{V: "|", T: types.TText})
			so.OrderBy = []SortKey{{E: v, Desc: true}}
			cd := agg(t, "count", false, v)
			cd.Distinct = true
			aggs = append(aggs, agg(t, "sum", false, f), agg(t, "avg", false, f), sa, so, cd, agg(t, "array_agg", false, k), agg(t, "sum", false, d))
		}
		h := aggNode(in, keys, aggs...)
		var workMem int64
		if r.Intn(3) == 0 {
			workMem = int64(8<<10 + r.Intn(64<<10))
		}
		batch := []int{64, 1000, 4096}[r.Intn(3)]
		want, _ := runWorkers(t, h, 1, batch, workMem)
		for _, w := range []int{2, 3, 4} {
			got, it := runWorkers(t, h, w, batch, workMem)
			p, ok := it.(*parAggIter)
			if !ok {
				t.Fatalf("trial %d: workers=%d opened %T, not the parallel aggregation", trial, w, it)
			}
			_ = p
			if len(got) != len(want) {
				t.Fatalf("trial %d workers=%d keys=%v: %d groups, serial %d", trial, w, keys, len(got), len(want))
			}
			wantSameRows(t, got, want)
		}
	}
}

// TestParallelHashAggPaths checks which path each aggregate list takes,
// so that the randomized test above covers both.
func TestParallelHashAggPaths(t *testing.T) {
	withProcs(t, 2)
	r := rand.New(rand.NewSource(3))
	in := parInput(r, 10000, 100, 1000)
	k, f := col(0, types.TInt8), col(3, types.TFloat8)
	for _, c := range []struct {
		agg     AggCall
		combine bool
	}{
		{agg(t, "count", true), true},
		{agg(t, "sum", false, k), true},
		{agg(t, "sum", false, f), false},
		{agg(t, "array_agg", false, k), false},
	} {
		h := aggNode(in, []expr.Expr{k}, c.agg)
		q := &Context{Eval: &expr.Context{Ctx: context.Background()}, Workers: 2}
		it, err := h.Open(q)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := it.Next(); err != nil {
			t.Fatal(err)
		}
		p := it.(*parAggIter)
		if got := len(p.subs) == 1; got != c.combine {
			t.Errorf("%s: partial states %v, want %v", c.agg.Fn.Name, got, c.combine)
		}
		it.Close()
	}
}

// TestParallelHashAggManyGroups: partial states give way to partitions
// when the first batches estimate groupsMany groups or more (each worker's
// partial table would hold nearly all of them), for a uniform input and
// not for one with a few thousand groups; both give the serial rows.
func TestParallelHashAggManyGroups(t *testing.T) {
	withProcs(t, 2)
	for _, c := range []struct {
		groups  int
		combine bool
	}{{1 << 21, false}, {groupsMany * 4, false}, {groupsMany / 16, true}, {3000, true}} {
		in := benchSource(40_000, c.groups, int64(c.groups))
		h := aggNode(in, []expr.Expr{col(0, types.TInt8)}, agg(t, "count", true), agg(t, "sum", false, col(1, types.TInt8)))
		it, err := h.Open(&Context{Eval: &expr.Context{Ctx: context.Background()}, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := it.Next(); err != nil {
			t.Fatal(err)
		}
		if got := len(it.(*parAggIter).subs) == 1; got != c.combine {
			t.Errorf("%d groups: partial states %v, want %v", c.groups, got, c.combine)
		}
		it.Close()
		want, _ := runWorkers(t, h, 1, DefaultBatchSize, 0)
		got, _ := runWorkers(t, h, 2, DefaultBatchSize, 0)
		wantSameRows(t, got, want)
	}
}

// TestParallelHashAggStops: a canceled statement stops the parallel
// aggregation with the cancellation error and leaves no goroutine behind.
func TestParallelHashAggStops(t *testing.T) {
	withProcs(t, 2)
	before := runtime.NumGoroutine()
	k := col(0, types.TInt8)
	for _, aggs := range [][]AggCall{{agg(t, "count", true)}, {agg(t, "array_agg", false, k)}} {
		ctx, cancel := context.WithCancel(context.Background())
		in := &endlessNode{cols: cols(types.TInt8), afterN: 50, onN: cancel}
		h := aggNode(in, []expr.Expr{k}, aggs...)
		it, err := h.Open(&Context{Eval: &expr.Context{Ctx: ctx}, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		_, err = it.Next()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: got %v, want the cancellation", aggs[0].Fn.Name, err)
		}
		it.Close()
		cancel()
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines left, %d before", n, before)
	}
}

// endlessNode produces 4096-row batches of one int8 column forever,
// calling onN after afterN batches.
type endlessNode struct {
	cols   []types.Column
	afterN int
	onN    func()
}

func (e *endlessNode) Columns() []types.Column { return e.cols }
func (e *endlessNode) Children() []Node        { return nil }
func (e *endlessNode) Explain() string         { return "Endless" }
func (e *endlessNode) Open(*Context) (Iterator, error) {
	a := arr(types.TInt8)
	vals := make([]any, 4096)
	for i := range vals {
		vals[i] = i % 97
	}
	a = arr(types.TInt8, vals...)
	b := newBatch(e.cols, []arrow.Array{a}, 4096)
	n := 0
	return funcIter(func() (arrow.RecordBatch, error) {
		n++
		if n == e.afterN {
			e.onN()
		}
		return b, nil
	}), nil
}
