package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Aggregation and row_number() top-N for streaming plans.

// agg plans GROUP BY as a HashAgg whose group keys are the output key.
// Each aggregate is lowered onto the streaming aggregates (lowerAgg); when
// some aggregate needs finishing (a cast to PostgreSQL's result type,
// avg over integers as sum / count in numeric), a Project computes the
// final values above the HashAgg.
func (s *streamPlanner) agg(x *lAgg, need map[int]bool) (sout, error) {
	// Aggregates nobody reads are not computed (one is kept when there is
	// no group key, so that the one group has a column).
	var aggs []exec.AggCall
	var aggIDs []int
	for i, id := range x.aggIDs {
		if need[id] || (len(x.groups) == 0 && len(aggs) == 0 && i == len(x.aggIDs)-1) {
			aggs, aggIDs = append(aggs, x.aggs[i]), append(aggIDs, id)
		}
	}
	x = &lAgg{in: x.in, groupIDs: x.groupIDs, groups: x.groups, aggIDs: aggIDs, aggs: aggs}
	sub := union(nil, x.groups...)
	for _, a := range x.aggs {
		sub = union(sub, a.Args...)
		sub = union(sub, a.Filter)
	}
	in, err := s.node(x.in, sub)
	if err != nil {
		return sout{}, err
	}
	h := &stream.HashAgg{Input: in.node}
	if h.GroupBy, err = s.exprs(x.groups, in.lay); err != nil {
		return sout{}, err
	}
	for i, g := range h.GroupBy {
		h.Cols = append(h.Cols, types.Column{Name: s.b.cols[x.groupIDs[i]].name, Type: g.Type()})
	}
	finals := make([]func([]expr.Expr) (expr.Expr, error), len(x.aggs))
	first := make([]int, len(x.aggs)) // position of each aggregate's first spec
	for i, a := range x.aggs {
		call := a
		if call.Args, err = s.exprs(a.Args, in.lay); err != nil {
			return sout{}, err
		}
		if call.Filter, err = s.expr(a.Filter, in.lay); err != nil {
			return sout{}, err
		}
		specs, final, err := lowerAgg(call)
		if err != nil {
			return sout{}, err
		}
		first[i] = len(h.Cols)
		for _, sp := range specs {
			t, err := sp.ResultType()
			if err != nil {
				return sout{}, err
			}
			name := s.b.cols[x.aggIDs[i]].name
			if len(specs) > 1 {
				name = sp.String()
			}
			h.Aggs = append(h.Aggs, sp)
			h.Cols = append(h.Cols, types.Column{Name: name, Type: t})
		}
		finals[i] = final
	}
	lay := x.outIDs()
	o := sout{node: h, lay: lay, key: append([]int{}, x.groupIDs...)}
	identity := true
	for _, f := range finals {
		identity = identity && f == nil
	}
	if identity {
		return o, nil
	}
	pr := &stream.Project{Input: h, Cols: s.p.cols(lay)}
	ref := func(i int) expr.Expr { return &expr.ColRef{Idx: i, T: h.Cols[i].Type, Name: h.Cols[i].Name} }
	for i := range x.groups {
		pr.Exprs = append(pr.Exprs, ref(i))
	}
	for i, f := range finals {
		if f == nil {
			pr.Exprs = append(pr.Exprs, ref(first[i]))
			continue
		}
		end := len(h.Cols)
		if i+1 < len(first) {
			end = first[i+1]
		}
		var res []expr.Expr
		for j := first[i]; j < end; j++ {
			res = append(res, ref(j))
		}
		e, err := f(res)
		if err != nil {
			return sout{}, err
		}
		pr.Exprs = append(pr.Exprs, e)
	}
	o.node = pr
	return o, nil
}

// aggSpecFor maps one aggregate call (arguments over the HashAgg's input)
// onto a streaming aggregate, not checking its argument type; lowerAgg
// adds the casts and rewrites around it. It is a variable so that
// stream.AggSpecFor can replace it.
var aggSpecFor = func(call exec.AggCall) (stream.AggSpec, error) {
	sp := stream.AggSpec{Distinct: call.Distinct, Filter: call.Filter}
	switch call.Fn.Name {
	case "count":
		sp.Kind = stream.AggCount
		if len(call.Args) == 0 {
			sp.Kind = stream.AggCountStar
		}
	case "sum":
		sp.Kind = stream.AggSum
	case "avg":
		sp.Kind = stream.AggAvg
	case "min":
		sp.Kind = stream.AggMin
	case "max":
		sp.Kind = stream.AggMax
	default:
		return sp, notInMV("aggregate function " + call.Fn.Name + "()")
	}
	if len(call.Args) > 1 {
		return sp, notInMV("aggregate function " + call.Fn.Name + "() with several arguments")
	}
	if len(call.Args) == 1 {
		sp.Arg = call.Args[0]
	}
	return sp, nil
}

// lowerAgg returns the streaming aggregates that compute call and the
// function that finishes its value from their results (nil when the one
// aggregate's result is the value). An aggregate aggSpecFor maps with
// PostgreSQL's result type is used as is; otherwise, to give PostgreSQL's
// types with the aggregates streaming has:
//
//   - avg over integers is sum / count in numeric, as PostgreSQL divides;
//   - sum and avg over real are computed in double precision;
//   - a result of another type (sum over int8 summed as int8: 22003 beyond
//     its range, where PostgreSQL's numeric would go on) is cast.
//
// ORDER BY inside the call is ignored: none of these aggregates depends on
// the order of its input.
func lowerAgg(call exec.AggCall) ([]stream.AggSpec, func([]expr.Expr) (expr.Expr, error), error) {
	want := call.Fn.Return
	sp, err := aggSpecFor(call)
	if err != nil {
		return nil, nil, err
	}
	if got, err := sp.ResultType(); err == nil && got.Equal(want) {
		return []stream.AggSpec{sp}, nil, nil
	}
	var argT types.T
	if sp.Arg != nil {
		argT = sp.Arg.Type()
	}
	switch {
	case sp.Kind == stream.AggAvg && argT.IsInteger():
		sum, cnt := sp, sp
		sum.Kind, cnt.Kind = stream.AggSum, stream.AggCount
		if _, err := sum.ResultType(); err != nil {
			return nil, nil, err
		}
		return []stream.AggSpec{sum, cnt}, func(r []expr.Expr) (expr.Expr, error) {
			n, err := expr.NewCast(r[0], types.TNumeric, true)
			if err != nil {
				return nil, err
			}
			d, err := expr.NewCast(r[1], types.TNumeric, true)
			if err != nil {
				return nil, err
			}
			return expr.NewBinary("/", n, d)
		}, nil
	case (sp.Kind == stream.AggAvg || sp.Kind == stream.AggSum) && argT.Kind == types.Float4:
		if sp.Arg, err = expr.NewCast(sp.Arg, types.TFloat8, false); err != nil {
			return nil, nil, err
		}
	}
	got, err := sp.ResultType()
	if err != nil {
		return nil, nil, err
	}
	if got.Equal(want) {
		return []stream.AggSpec{sp}, nil, nil
	}
	return []stream.AggSpec{sp}, func(r []expr.Expr) (expr.Expr, error) {
		e, err := expr.NewCast(r[0], want, true)
		if err != nil {
			return nil, pgerr.Unsupported("%s cannot be used in a materialized view: its result type %s differs from %s", sp, got, want)
		}
		return e, nil
	}, nil
}

// window plans row_number() OVER (PARTITION BY p ORDER BY o), filtered by
// conds (the WHERE above the subquery that computes it), as a top-N per
// partition: bounds on the row number (rn <= n, rn < n, rn = k, rn >= k,
// rn > k) become its limit and offset; the number itself is the top-N's
// rank column when anything reads it; the other conditions filter the
// top-N's output. Other window functions cannot be maintained.
func (s *streamPlanner) window(w *lWindow, conds []expr.Expr, need map[int]bool) (sout, error) {
	if len(w.calls) != 1 {
		return sout{}, notInMV("several window functions")
	}
	call := w.calls[0]
	if call.Fn.Name != "row_number" || call.Fn.Agg != nil {
		return sout{}, notInMV("window function " + call.Fn.Name + "()").WithHint("Only row_number() OVER (PARTITION BY ... ORDER BY ...) filtered by rn <= n (a top-N per group) is supported.")
	}
	if call.Filter != nil {
		return sout{}, notInMV("FILTER on a window function")
	}
	rn := w.ids[0]
	lo, hi := int64(1), int64(-1) // rank bounds; hi < 0: none
	var rest []expr.Expr
	for _, c := range conds {
		if op, v, ok := rankBound(c, rn); ok {
			switch op {
			case "<=":
				hi = minBound(hi, v)
			case "<":
				hi = minBound(hi, v-1)
			case ">=":
				lo = max(lo, v)
			case ">":
				lo = max(lo, v+1)
			case "=":
				lo, hi = max(lo, v), minBound(hi, v)
			}
			continue
		}
		rest = append(rest, c)
	}
	rankUsed := need[rn]
	for _, c := range rest {
		rankUsed = rankUsed || refsOf(c)[rn]
	}
	sub := union(need, rest...)
	sub = union(sub, call.PartitionBy...)
	for _, k := range call.OrderBy {
		sub = union(sub, k.E)
	}
	delete(sub, rn)
	in, err := s.node(w.in, sub)
	if err != nil {
		return sout{}, err
	}
	if !rankUsed && lo == 1 && hi < 0 {
		return in, nil // an unbounded, unread row number changes nothing
	}
	t := &stream.TopN{Input: in.node, Limit: -1, Offset: lo - 1, RankCol: rankUsed}
	if hi >= 0 {
		t.Limit = max(hi-lo+1, 0)
	}
	if t.PartitionBy, err = s.exprs(call.PartitionBy, in.lay); err != nil {
		return sout{}, err
	}
	if t.Order, err = s.keys(call.OrderBy, in.lay); err != nil {
		return sout{}, err
	}
	t.Cols = in.node.Columns()
	lay := in.lay
	rank := -1
	if rankUsed {
		t.Cols = append(append([]types.Column(nil), t.Cols...), s.p.col(rn))
		lay = append(append([]int(nil), lay...), rn)
		rank = rn
	}
	o := sout{node: t, lay: lay, key: topNKey(t, colIDs(call.PartitionBy), in.key, rank)}
	if len(rest) > 0 {
		cond, err := s.expr(andOf(rest), lay)
		if err != nil {
			return sout{}, err
		}
		o.node = &stream.Filter{Input: t, Cond: cond}
	}
	return o, nil
}

func minBound(hi, v int64) int64 {
	if hi < 0 || v < hi {
		return max(v, 0)
	}
	return hi
}

// rankBound recognizes `rn op constant` (or `constant op rn`) and returns
// it as rn op v.
func rankBound(c expr.Expr, rn int) (string, int64, bool) {
	call, ok := c.(*expr.Call)
	if !ok || call.Fn == nil || len(call.Args) != 2 {
		return "", 0, false
	}
	op := call.Fn.Name
	a, b := call.Args[0], call.Args[1]
	if r, ok := b.(*expr.ColRef); ok && r.Idx == rn {
		a, b = b, a
		op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}[op]
	}
	if r, ok := a.(*expr.ColRef); !ok || r.Idx != rn {
		return "", 0, false
	}
	switch op {
	case "<", "<=", ">", ">=", "=":
	default:
		return "", 0, false
	}
	v, ok := constInt(b)
	return op, v, ok
}
