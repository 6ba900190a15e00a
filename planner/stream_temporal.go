package planner

import (
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Temporal filters (streaming-sql.md section 2; docs/streaming.md): a
// condition of WHERE or HAVING that compares an expression of the row with
// one of processing time only,
//
//	lhs > | >= | < | <= now() [± interval]     (or mirrored: now() - i < lhs)
//
// becomes a stream.TemporalFilter, which reads the clock at each barrier
// and retracts (or releases) rows as the bound moves. now() and PROCTIME()
// are both processing time here. Any other use of now() in a continuous
// query stays refused by checkStream; streamPlanner.expr refuses a now()
// that an unforeseen rewrite moved out of a filter, so it is never folded
// into a constant silently.

// temporalCond is a recognised temporal condition: lhs op bound.
type temporalCond struct {
	lhs   expr.Expr
	op    string
	bound expr.Expr
}

// mirrored gives the operator with its operands swapped.
var mirrored = map[string]string{">": "<", ">=": "<=", "<": ">", "<=": ">="}

// temporal recognises a temporal condition.
func temporal(e expr.Expr) (temporalCond, bool) {
	c, ok := e.(*expr.Call)
	if !ok || len(c.Args) != 2 || mirrored[c.Fn.Name] == "" {
		return temporalCond{}, false
	}
	l, r := c.Args[0], c.Args[1]
	k := l.Type().Kind
	if (k != types.Timestamp && k != types.TimestampTZ) || r.Type().Kind != k {
		return temporalCond{}, false
	}
	switch {
	case timeBound(r) && rowSide(l):
		return temporalCond{lhs: l, op: c.Fn.Name, bound: r}, true
	case timeBound(l) && rowSide(r):
		return temporalCond{lhs: r, op: mirrored[c.Fn.Name], bound: l}, true
	}
	return temporalCond{}, false
}

// rowSide reports whether e reads a column of the row and no time.
func rowSide(e expr.Expr) bool {
	col := false
	walk(e, func(x expr.Expr) bool {
		_, ok := x.(*expr.ColRef)
		col = col || ok
		return !col
	})
	return col && !hasTimeFunc(e)
}

// isNowCall reports whether e is now() or PROCTIME().
func isNowCall(e expr.Expr) bool {
	c, ok := e.(*expr.Call)
	return ok && len(c.Args) == 0 && (c.Fn.Name == "now" || c.Fn.Name == "proctime")
}

// timeBound reports whether e is a non-decreasing function of processing
// time alone: now(), now() + i, now() - i, i + now() (i a constant
// interval), or a cast of one to timestamp or timestamptz.
func timeBound(e expr.Expr) bool {
	switch x := e.(type) {
	case *expr.Call:
		if isNowCall(x) {
			return true
		}
		if len(x.Args) != 2 || (x.Fn.Name != "+" && x.Fn.Name != "-") {
			return false
		}
		if timeBound(x.Args[0]) && constInterval(x.Args[1]) {
			return true
		}
		return x.Fn.Name == "+" && constInterval(x.Args[0]) && timeBound(x.Args[1])
	case *expr.Cast:
		k := x.To.Kind
		return (k == types.Timestamp || k == types.TimestampTZ) && timeBound(x.E)
	}
	return false
}

// constInterval reports whether e is an interval of constants only.
func constInterval(e expr.Expr) bool {
	if e.Type().Kind != types.Interval {
		return false
	}
	ok := true
	walk(e, func(x expr.Expr) bool {
		switch x := x.(type) {
		case *expr.Const, *expr.Cast:
		case *expr.Call:
			ok = ok && !x.Fn.Volatile && !timeFuncs[x.Fn.Name]
		default:
			ok = false
		}
		return ok
	})
	return ok
}

// hasTimeFunc reports whether e calls a function of the current time.
func hasTimeFunc(e expr.Expr) bool {
	found := false
	walk(e, func(x expr.Expr) bool {
		if c, ok := x.(*expr.Call); ok && (timeFuncs[c.Fn.Name] || c.Fn.Name == "proctime") {
			found = true
		}
		return !found
	})
	return found
}

// nowErr is the error for now() (or another time function, name) where a
// continuous query cannot maintain it.
func nowErr(name string) *pgerr.Error {
	return pgerr.Unsupported("%s cannot be used in a materialized view", name).
		WithHint("Only a temporal filter is allowed: a condition of WHERE or HAVING comparing a column with now() or now() - INTERVAL '...' (>, >=, <, <=), such as ts > now() - INTERVAL '1 hour'. Elsewhere its value would be frozen at the time the view is created; use a watermark instead.")
}

// filterConds puts the conditions conds over in: the ordinary ones as a
// stream.Filter, then each temporal one as a stream.TemporalFilter.
func (s *streamPlanner) filterConds(in sout, conds []expr.Expr) (sout, error) {
	var plain []expr.Expr
	var temps []temporalCond
	for _, c := range conds {
		for _, t := range conjuncts(c, nil) {
			if tc, ok := temporal(t); ok {
				temps = append(temps, tc)
			} else {
				plain = append(plain, t)
			}
		}
	}
	o := in
	if len(plain) > 0 {
		cond, err := s.expr(andOf(plain), in.lay)
		if err != nil {
			return sout{}, err
		}
		o.node = &stream.Filter{Input: o.node, Cond: cond}
	}
	for _, tc := range temps {
		lhs, err := s.expr(tc.lhs, in.lay)
		if err != nil {
			return sout{}, err
		}
		// The bound reads no column: it is evaluated as bound, unfolded.
		o.node = &stream.TemporalFilter{Input: o.node, Lhs: lhs, Op: tc.op, Bound: tc.bound}
		if tc.op == ">" || tc.op == ">=" {
			o.appendOnly = false // rows leave as time passes
		}
	}
	return o, nil
}
