package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
)

// shareFilters makes the aggregates of each HashAgg and WindowAgg of a
// streaming plan whose FILTERs are the same expression (the same text,
// calling no volatile function) share one expr.Expr: the operator
// evaluates a FILTER once per chunk for all the aggregates holding it
// (stream.updateAggs). Nexmark q16 repeats each of its three price ranges
// over count(*), count(DISTINCT bidder) and count(DISTINCT auction).
func shareFilters(n stream.Node) {
	switch x := n.(type) {
	case *stream.HashAgg:
		shareSpecFilters(x.Aggs)
	case *stream.WindowAgg:
		shareSpecFilters(x.Aggs)
	}
	for _, in := range n.Inputs() {
		shareFilters(in)
	}
}

func shareSpecFilters(specs []stream.AggSpec) {
	seen := map[string]expr.Expr{}
	for i, sp := range specs {
		if sp.Filter == nil || callsVolatileExpr(sp.Filter) {
			continue
		}
		k := filterKey(sp.Filter)
		if f, ok := seen[k]; ok {
			specs[i].Filter = f
		} else {
			seen[k] = sp.Filter
		}
	}
}

// filterKey identifies a FILTER expression: its text, and the positions
// and types of the columns it reads (a text names a column by its name,
// which two columns of a join may share).
func filterKey(e expr.Expr) string {
	var b strings.Builder
	b.WriteString(e.String())
	walk(e, func(x expr.Expr) bool {
		if c, ok := x.(*expr.ColRef); ok {
			fmt.Fprintf(&b, "|%d:%s", c.Idx, c.T)
		}
		return true
	})
	return b.String()
}
