package stream

import (
	"math"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Watermarks through monotone expressions. A projection passes a
// watermark on a timestamp column c to an output column computed from c
// by a function that never decreases as c grows, the other arguments
// constant: date_trunc('minute', c), date_bin(stride, c, origin),
// c + interval, c - interval, and compositions of those. Every later row
// has c >= W, so its output value is >= f(W): f(W) is the output column's
// watermark (`GROUP BY date_trunc('minute', ts)` closes its groups under
// EMIT ON WINDOW CLOSE as windows do).

// MonotoneInput returns the input column a timestamp expression e grows
// with (ok false when e is not such an expression of one column).
// A plain column reference is one.
func MonotoneInput(e expr.Expr) (col int, ok bool) {
	if !isTimestamp(e.Type()) {
		return 0, false
	}
	switch x := e.(type) {
	case *expr.ColRef:
		return x.Idx, true
	case *expr.Call:
		switch x.Fn.Name {
		case "date_trunc": // (unit, c [, zone])
			if len(x.Args) >= 2 && constant(x.Args[0]) && (len(x.Args) == 2 || constant(x.Args[2])) {
				return MonotoneInput(x.Args[1])
			}
		case "date_bin": // (stride, c, origin)
			if len(x.Args) == 3 && constant(x.Args[0]) && constant(x.Args[2]) {
				return MonotoneInput(x.Args[1])
			}
		case "+":
			if len(x.Args) == 2 && constant(x.Args[1]) && x.Args[1].Type().Kind == types.Interval {
				return MonotoneInput(x.Args[0])
			}
			if len(x.Args) == 2 && constant(x.Args[0]) && x.Args[0].Type().Kind == types.Interval {
				return MonotoneInput(x.Args[1])
			}
		case "-":
			if len(x.Args) == 2 && constant(x.Args[1]) && x.Args[1].Type().Kind == types.Interval {
				return MonotoneInput(x.Args[0])
			}
		}
	}
	return 0, false
}

// MarkSource returns the input column whose watermark e carries: a
// plain column reference (of any type), or a MonotoneInput expression.
func MarkSource(e expr.Expr) (col int, ok bool) {
	if c, isRef := e.(*expr.ColRef); isRef {
		return c.Idx, true
	}
	return MonotoneInput(e)
}

func isTimestamp(t types.T) bool { return t.Kind == types.Timestamp || t.Kind == types.TimestampTZ }

func constant(e expr.Expr) bool {
	_, ok := e.(*expr.Const)
	return ok
}

// markAt is e's value (a MonotoneInput expression of column col) where col
// holds the watermark v: the output column's watermark. ok is false when
// it cannot be computed (an overflow, a NULL): no watermark then.
func markAt(ctx *expr.Context, e expr.Expr, col int, v int64) (int64, bool) {
	if c, isRef := e.(*expr.ColRef); isRef && c.Idx == col {
		return v, true
	}
	at := substituteCol(e, col, &expr.Const{V: types.TimestampValue(v), T: colType(e, col)})
	k, err := expr.Fold(ctx, at)
	if err != nil {
		return 0, false
	}
	c, isConst := k.(*expr.Const)
	if !isConst {
		return 0, false
	}
	tv, isTS := c.V.(types.TimestampValue)
	if !isTS || int64(tv) == math.MinInt64 {
		return 0, false
	}
	return int64(tv), true
}

// colType is the type of e's reference to col (e a MonotoneInput
// expression).
func colType(e expr.Expr, col int) types.T {
	switch x := e.(type) {
	case *expr.ColRef:
		if x.Idx == col {
			return x.T
		}
	case *expr.Call:
		for _, a := range x.Args {
			if t := colType(a, col); t.Kind != 0 {
				return t
			}
		}
	}
	return types.T{}
}

// substituteCol is a copy of e (a MonotoneInput expression: calls over one
// column reference and constants) with the reference to col replaced by k.
func substituteCol(e expr.Expr, col int, k *expr.Const) expr.Expr {
	switch x := e.(type) {
	case *expr.ColRef:
		if x.Idx == col {
			return k
		}
	case *expr.Call:
		args := make([]expr.Expr, len(x.Args))
		for i, a := range x.Args {
			args[i] = substituteCol(a, col, k)
		}
		c := *x
		c.Args = args
		return &c
	}
	return e
}
