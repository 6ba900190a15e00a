package exec

import (
	"math/rand"
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// TestSharedSumStates: sum and avg of one integer column, computed
// together (one shared state), give per group what each computed alone
// gives, serially and with 2 workers, with NULL arguments, a FILTERed
// call (which does not share) and calls over another column; and the
// sharing does happen.
func TestSharedSumStates(t *testing.T) {
	withProcs(t, 2)
	r := rand.New(rand.NewSource(13))
	in := parInput(r, 30000, 500, 1000)
	k, v := col(0, types.TInt8), col(2, types.TInt8)
	filt, err := expr.NewBinary(">", v, k)
	if err != nil {
		t.Fatal(err)
	}
	sumF := agg(t, "sum", false, v)
	sumF.Filter = filt
	calls := []AggCall{agg(t, "sum", false, v), agg(t, "avg", false, v), sumF, agg(t, "avg", false, k), agg(t, "sum", false, k), agg(t, "avg", false, v)}
	together := aggNode(in, []expr.Expr{k}, calls...)
	run, err := newRun(nil, together)
	if err != nil {
		t.Fatal(err)
	}
	shared := 0
	for _, st := range run.states {
		if _, ok := st.(*sharedSum); ok {
			shared++
		}
	}
	if shared != 3 { // avg(v), sum(k), avg(v): the FILTERed sum does not share
		t.Fatalf("%d shared states, want 3", shared)
	}
	for _, w := range []int{1, 2} {
		all, _ := runWorkers(t, together, w, 1000, 0)
		for i, c := range calls {
			alone, _ := runWorkers(t, aggNode(in, []expr.Expr{k}, c), w, 1000, 0)
			var got [][]any
			for _, row := range all {
				got = append(got, []any{row[0], row[1+i]})
			}
			wantSameRows(t, got, alone)
		}
	}
}
