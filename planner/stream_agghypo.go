package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// lowerHypothetical lowers the hypothetical-set aggregates rank,
// dense_rank, percent_rank and cume_dist (h1, ..., hn) WITHIN GROUP
// (ORDER BY x1, ..., xn), whose direct arguments are constants, to counts
// that retract exactly: of the group's rows that sort before the
// hypothetical row (b), of those that sort as it (p), of all of them (n),
// and for dense_rank of the distinct keys before it (d, one key only, a
// NULL key counted apart). Then, as PostgreSQL's final functions: rank
// b + 1, dense_rank d + 1,
// percent_rank b / n (0 over no rows), cume_dist (b + p + 1) / (n + 1).
// NULLs sort where the ORDER BY puts them. ok is false for other calls.
func lowerHypothetical(call exec.AggCall) (specs []stream.AggSpec, final func([]expr.Expr) (expr.Expr, error), ok bool, err error) {
	name := call.Fn.Name
	if !exec.IsHypothetical(name) {
		return nil, nil, false, nil
	}
	k := len(call.OrderBy)
	if k == 0 || len(call.Args) != 2*k {
		return nil, nil, true, pgerr.Internal("planner: %s with %d arguments and %d keys", name, len(call.Args), k)
	}
	if name == "dense_rank" && k > 1 {
		return nil, nil, true, pgerr.Unsupported("dense_rank() WITHIN GROUP with several ORDER BY keys is not supported in streaming queries")
	}
	var before, peer expr.Expr // over the keys, from the last one back
	for i := k - 1; i >= 0; i-- {
		h, err := expr.Fold(&expr.Context{}, call.Args[i])
		if err != nil {
			return nil, nil, true, err
		}
		c, isConst := h.(*expr.Const)
		if !isConst {
			return nil, nil, true, pgerr.Unsupported("%s in a materialized view needs constant direct arguments, not %s", name, call.Args[i])
		}
		b, p, err := hypoKey(call.OrderBy[i], c)
		if err != nil {
			return nil, nil, true, err
		}
		if before != nil {
			b = &expr.Or{Args: []expr.Expr{b, &expr.And{Args: []expr.Expr{p, before}}}}
			p = &expr.And{Args: []expr.Expr{p, peer}}
		}
		before, peer = b, p
	}
	and := func(c expr.Expr) expr.Expr {
		if call.Filter == nil {
			return c
		}
		return &expr.And{Args: []expr.Expr{call.Filter, c}}
	}
	specs = []stream.AggSpec{{Kind: stream.AggCountStar, Filter: and(before)}}
	switch name {
	case "dense_rank":
		// count(DISTINCT) skips NULL, which is one more key when NULLs
		// sort first
		x := call.OrderBy[0].E
		specs[0] = stream.AggSpec{Kind: stream.AggCount, Arg: x, Distinct: true, Filter: and(before)}
		specs = append(specs, stream.AggSpec{Kind: stream.AggCountStar, Filter: and(&expr.And{Args: []expr.Expr{&expr.IsNull{E: x}, before}})})
	case "percent_rank":
		specs = append(specs, stream.AggSpec{Kind: stream.AggCountStar, Filter: call.Filter})
	case "cume_dist":
		specs = append(specs, stream.AggSpec{Kind: stream.AggCountStar, Filter: and(peer)},
			stream.AggSpec{Kind: stream.AggCountStar, Filter: call.Filter})
	}
	one := &expr.Const{V: int64(1), T: types.TInt8}
	final = func(r []expr.Expr) (expr.Expr, error) {
		switch name {
		case "rank":
			return expr.NewBinary("+", r[0], one)
		case "dense_rank":
			null, err := expr.NewCall("least", []expr.Expr{r[1], one})
			if err != nil {
				return nil, err
			}
			d, err := expr.NewBinary("+", r[0], null)
			if err != nil {
				return nil, err
			}
			return expr.NewBinary("+", d, one)
		case "percent_rank":
			b, err := expr.NewCast(r[0], types.TFloat8, true)
			if err != nil {
				return nil, err
			}
			q, err := expr.NewBinary("/", b, r[1])
			if err != nil {
				return nil, err
			}
			none, err := expr.NewBinary("=", r[1], &expr.Const{V: int64(0), T: types.TInt8})
			if err != nil {
				return nil, err
			}
			return expr.NewCase([]expr.When{{Cond: none, Result: &expr.Const{V: 0.0, T: types.TFloat8}}}, q)
		}
		bp, err := expr.NewBinary("+", r[0], r[1])
		if err != nil {
			return nil, err
		}
		if bp, err = expr.NewBinary("+", bp, one); err != nil {
			return nil, err
		}
		if bp, err = expr.NewCast(bp, types.TFloat8, true); err != nil {
			return nil, err
		}
		n1, err := expr.NewBinary("+", r[2], one)
		if err != nil {
			return nil, err
		}
		return expr.NewBinary("/", bp, n1)
	}
	return specs, final, true, nil
}

// hypoKey returns, for one ORDER BY key and its hypothetical value h,
// whether a row's key sorts before h and whether it sorts as h (NULL,
// counted as false, where a NULL key makes the comparison unknown).
func hypoKey(key exec.SortKey, h *expr.Const) (before, peer expr.Expr, err error) {
	x := key.E
	if h.V == nil { // NULLs are peers; the others sort before them when NULLS LAST
		peer = &expr.IsNull{E: x}
		before = &expr.Const{V: false, T: types.TBool}
		if !key.NullsFirst {
			before = &expr.IsNull{E: x, Not: true}
		}
		return before, peer, nil
	}
	op := "<"
	if key.Desc {
		op = ">"
	}
	if before, err = expr.NewBinary(op, x, h); err != nil {
		return nil, nil, err
	}
	if key.NullsFirst {
		before = &expr.Or{Args: []expr.Expr{&expr.IsNull{E: x}, before}}
	}
	if peer, err = expr.NewBinary("=", x, h); err != nil {
		return nil, nil, err
	}
	return before, peer, nil
}
