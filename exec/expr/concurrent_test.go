package expr

import (
	"sync"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// Expr trees are shared between executions: evaluating one tree from many
// goroutines (each with its own Context) must be safe. Run with -race.
func TestConcurrentEval(t *testing.T) {
	b := batch(t, col{types.TText, []types.Value{"abc", "xbz", nil, "ab"}}, col{types.TInt4, []types.Value{int64(1), int64(0), int64(3), nil}})
	like, err := NewLike(ref(0, types.TText), lit("a%c"), nil, false, false, false)
	if err != nil {
		t.Fatal(err)
	}
	x := ref(1, types.TInt4)
	cs, err := NewCase([]When{{Cond: mustBinary(t, "=", x, i4(0)), Result: i4(0)}}, mustBinary(t, "/", i4(6), x))
	if err != nil {
		t.Fatal(err)
	}
	sub := &Subquery{Kind: ScalarSubquery, Plan: &fakePlan{t: types.TInt4, rows: []types.Value{int64(5)}}, T: types.TInt4}
	e := &And{Args: []Expr{like, mustBinary(t, ">", cs, sub)}}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				a, err := e.Eval(testCtx(), b)
				if err != nil {
					t.Error(err)
					return
				}
				got := rowsOf(a, types.TBool)
				if got[0] != true || got[1] != false || got[2] != false || got[3] != false {
					t.Errorf("got %v", got)
				}
				a.Release()
			}
		}()
	}
	wg.Wait()
}
