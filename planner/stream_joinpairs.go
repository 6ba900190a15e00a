package planner

import (
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// pairCompares splits a streaming join's condition for speed
// (stream.HashJoin's Compares and Residual): a conjunct
//
//	l + c1  op  r + c2
//
// with l a left and r a right column, both timestamps of one type (c1 and
// c2 constant intervals with an exact length in µs, either absent) or both
// bigints (no constants), and op one of < <= > >= = <>, is compared by the
// join on the values where they lie; the other conjuncts stay an
// expression (nil when none is left). nl is the number of left columns.
// Without such a conjunct it returns nil, nil: Cond is evaluated whole.
func pairCompares(cond expr.Expr, nl int) ([]stream.PairCompare, expr.Expr) {
	if cond == nil {
		return nil, nil
	}
	var cmps []stream.PairCompare
	var rest []expr.Expr
	for _, c := range conjuncts(cond, nil) {
		if pc, ok := pairCompare(c, nl); ok {
			cmps = append(cmps, pc)
			continue
		}
		rest = append(rest, c)
	}
	if len(cmps) == 0 {
		return nil, nil
	}
	return cmps, andOf(rest)
}

// pairCompare reads one conjunct as a stream.PairCompare.
func pairCompare(c expr.Expr, nl int) (stream.PairCompare, bool) {
	call, ok := c.(*expr.Call)
	if !ok || call.Fn == nil || len(call.Args) != 2 {
		return stream.PairCompare{}, false
	}
	op := call.Fn.Name
	symmetric := op == "=" || op == "<>"
	if !symmetric && mirrored[op] == "" {
		return stream.PairCompare{}, false
	}
	a, ok1 := int64Term(call.Args[0])
	b, ok2 := int64Term(call.Args[1])
	if !ok1 || !ok2 || a.kind != b.kind || a.min != a.max || b.min != b.max {
		return stream.PairCompare{}, false // a DST-widened offset is not exact
	}
	if a.col >= nl {
		a, b = b, a
		if !symmetric {
			op = mirrored[op]
		}
	}
	if a.col >= nl || b.col < nl {
		return stream.PairCompare{}, false // both columns on one side
	}
	// l + A op r + B  <=>  l - r op B - A
	return stream.PairCompare{L: a.col, R: b.col - nl, Op: op, D: b.min - a.min}, true
}

// int64Term reads a timestamp column plus constant intervals (linearTime)
// or a bigint column.
func int64Term(e expr.Expr) (timeTerm, bool) {
	if c, ok := e.(*expr.ColRef); ok && c.T.Kind == types.Int8 {
		return timeTerm{col: c.Idx, kind: types.Int8}, true
	}
	return linearTime(e)
}
