package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
)

// Shared transition states. sum(x) and avg(x) of one integer column keep
// the same running state (a 128-bit sum and a count per group), so an
// aggregation that computes both (TPC-H's Q1 does, as do many reports)
// updates one state and reads both results from it, as PostgreSQL shares
// the transition state of aggregates with the same transition function and
// inputs. Only plain calls share: no DISTINCT, FILTER or ORDER BY, one
// argument that is a column. The shared state is owned with the run.

// shareStates replaces the state of each call that can read another's
// (an earlier call's) by a view of it.
func shareStates(calls []AggCall, states []aggState) {
	for i := range calls {
		si, ok := states[i].(*intSum)
		if !ok || !plainColumnCall(&calls[i]) {
			continue
		}
		for j := 0; j < i; j++ {
			sj, ok := states[j].(*intSum)
			if ok && plainColumnCall(&calls[j]) && sameColumn(calls[i].Args[0], calls[j].Args[0]) {
				states[i] = &sharedSum{src: sj, view: intSum{avg: si.avg, numeric: si.numeric}}
				break
			}
		}
	}
}

// plainColumnCall reports a call of one column argument without DISTINCT,
// FILTER or ORDER BY.
func plainColumnCall(c *AggCall) bool {
	if c.Distinct || c.Filter != nil || len(c.OrderBy) > 0 || len(c.Args) != 1 {
		return false
	}
	_, ok := c.Args[0].(*expr.ColRef)
	return ok
}

func sameColumn(a, b expr.Expr) bool {
	x, y := a.(*expr.ColRef), b.(*expr.ColRef)
	return x.Idx == y.Idx && x.T.Equal(y.T)
}

// sharedSum is an integer sum or average reading the state of another call
// over the same column: that call's state is the one updated and merged.
type sharedSum struct {
	src  *intSum
	view intSum // this call's result kind, over src's slices
}

func (s *sharedSum) grow(int) {}

func (s *sharedSum) update([]arrow.Array, []int32) error { return nil }

func (s *sharedSum) mergeFrom(aggState, int, []int32) {}

func (s *sharedSum) appendResult(b array.Builder, g int) error {
	s.view.s, s.view.n = s.src.s, s.src.n
	return s.view.appendResult(b, g)
}
