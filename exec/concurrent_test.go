package exec

import (
	"fmt"
	"sync"
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// TestConcurrentOpen runs one immutable plan from several goroutines at once
// (run with -race): every execution must give the same rows.
func TestConcurrentOpen(t *testing.T) {
	l := src(cols(types.TInt8, types.TText), 5, []any{1, 2, 3, 2, nil, 4, 1}, []any{"a", "b", "c", "d", "e", "f", "g"})
	r := src(cols(types.TInt8, types.TInt8), 5, []any{1, 2, 2, 9}, []any{10, 20, 30, 40})
	j := &HashJoin{Left: l, Right: r, Kind: LeftJoin, LeftKeys: []expr.Expr{col(0, types.TInt8)}, RightKeys: []expr.Expr{col(0, types.TInt8)},
		Cols: cols(types.TInt8, types.TText, types.TInt8, types.TInt8)}
	sum, _ := ResolveAggregate("sum", []types.T{types.TInt8}, false)
	sa, _ := ResolveAggregate("string_agg", []types.T{types.TText, types.TText}, false)
	h := &HashAgg{Input: j, GroupBy: []expr.Expr{col(0, types.TInt8)},
		Aggs: []AggCall{{Fn: sum, Args: []expr.Expr{col(3, types.TInt8)}}, {Fn: sa, Args: []expr.Expr{col(1, types.TText), konst(types.TText, ",")}, OrderBy: []SortKey{{E: col(1, types.TText)}}}},
		Cols: cols(types.TInt8, types.TNumeric, types.TText)}
	rn, _ := ResolveWindow("row_number", nil, false)
	w := &Window{Input: h, Calls: []WindowCall{{Fn: rn, OrderBy: []SortKey{{E: col(0, types.TInt8)}}, Frame: defaultFrame}},
		Cols: cols(types.TInt8, types.TNumeric, types.TText, types.TInt8)}
	plan := &Sort{Input: w, Keys: []SortKey{{E: col(3, types.TInt8)}}}
	want := fmt.Sprint(run(t, plan))
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := runErr(plan)
			if err != nil || fmt.Sprint(got) != want {
				errs <- fmt.Sprintf("got %v, %v; want %s", got, err, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if want != "[[1 20 a,g 1] [2 100 b,b,d,d 2] [3 <nil> c 3] [4 <nil> f 4] [<nil> <nil> e 5]]" {
		t.Fatalf("rows %s", want)
	}
}
