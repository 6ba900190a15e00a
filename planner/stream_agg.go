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
// some aggregate needs finishing, a Project computes the final values
// above the HashAgg. Over an append-only input, min and max keep only their
// running extreme (HashAgg.AppendOnly). Under EMIT ON WINDOW CLOSE, a group
// key that carries a watermark closes the groups as windows (aggClean).
func (s *streamPlanner) agg(x *lAgg, need map[int]bool) (sout, error) {
	if y, ok, err := s.sessionFilter(x); ok || err != nil { // window_session_filter.go
		if err != nil {
			return sout{}, err
		}
		return s.node(y, need)
	}
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
		for _, k := range a.OrderBy {
			sub = union(sub, k.E)
		}
	}
	if o, ok, err := s.windowAgg(x); ok {
		return o, err
	}
	if s.emit.Mode == stream.EmitOnWindowClose && s.emit.LateRows {
		// An aggregation closed by the watermark (aggClean) stores whole
		// rows of its input relation as late rows, as windows do.
		for _, id := range x.in.outIDs() {
			sub[id] = true
		}
	}
	in, err := s.node(x.in, sub)
	if err != nil {
		return sout{}, err
	}
	h := &stream.HashAgg{Input: in.node, AppendOnly: in.appendOnly}
	if h.GroupBy, err = s.exprs(x.groups, in.lay); err != nil {
		return sout{}, err
	}
	for i, g := range h.GroupBy {
		h.Cols = append(h.Cols, types.Column{Name: s.b.cols[x.groupIDs[i]].name, Type: g.Type()})
	}
	la, err := s.lowerAggs(x, in.lay)
	if err != nil {
		return sout{}, err
	}
	h.Aggs, h.Cols = la.specs, append(h.Cols, la.cols...)
	lay := x.outIDs()
	o := sout{node: h, lay: lay, key: append([]int{}, x.groupIDs...)}
	if h.Clean = s.aggClean(h); h.Clean != nil {
		// Closed like a window (stream_eowc.go): each group goes out once.
		s.windowAggs++
		o.appendOnly = true
	} else if _, set := x.in.(*lShared); set && s.emit.Mode == stream.EmitOnWindowClose {
		// a grouping set without the window (the grand total of ROLLUP
		// (window_start, ...)) never closes
		return sout{}, notInMV("EMIT ON WINDOW CLOSE with a grouping set that does not group by the window").
			WithHint("Keep the window in every grouping set: GROUP BY window_start, ROLLUP (...).")
	}
	if la.identity() {
		return o, nil
	}
	pr := &stream.Project{Input: h, Cols: s.p.cols(lay)}
	for i := range x.groups {
		pr.Exprs = append(pr.Exprs, colAt(h.Cols, i))
	}
	vals, err := la.values(h.Cols, len(x.groups))
	if err != nil {
		return sout{}, err
	}
	pr.Exprs = append(pr.Exprs, vals...)
	o.node = pr
	return o, nil
}

// loweredAggs are an aggregation's calls as streaming aggregates: specs
// with their output columns, and per call the index of its first spec and
// the function finishing its value from its specs' results (nil: the
// result is the value).
type loweredAggs struct {
	specs  []stream.AggSpec
	cols   []types.Column
	first  []int
	finals []func([]expr.Expr) (expr.Expr, error)
}

// lowerAggs lowers x's aggregate calls over an input of layout lay.
func (s *streamPlanner) lowerAggs(x *lAgg, lay []int) (loweredAggs, error) {
	var la loweredAggs
	for i, a := range x.aggs {
		call := a
		var err error
		if call.Args, err = s.exprs(a.Args, lay); err != nil {
			return la, err
		}
		if call.Filter, err = s.expr(a.Filter, lay); err != nil {
			return la, err
		}
		if call.OrderBy, err = s.keys(a.OrderBy, lay); err != nil {
			return la, err
		}
		specs, final, err := lowerAgg(call)
		if err != nil {
			return la, err
		}
		la.first = append(la.first, len(la.specs))
		for _, sp := range specs {
			t, err := sp.ResultType()
			if err != nil {
				return la, err
			}
			name := s.b.cols[x.aggIDs[i]].name
			if len(specs) > 1 {
				name = sp.String()
			}
			la.specs = append(la.specs, sp)
			la.cols = append(la.cols, types.Column{Name: name, Type: t})
		}
		la.finals = append(la.finals, final)
	}
	return la, nil
}

// identity reports whether every call's value is its one spec's result.
func (la loweredAggs) identity() bool {
	for _, f := range la.finals {
		if f != nil {
			return false
		}
	}
	return true
}

// values returns each call's value over a node whose columns (cols) hold
// the specs' results from position base on.
func (la loweredAggs) values(cols []types.Column, base int) ([]expr.Expr, error) {
	out := make([]expr.Expr, len(la.finals))
	for i, f := range la.finals {
		end := len(la.specs)
		if i+1 < len(la.first) {
			end = la.first[i+1]
		}
		if f == nil {
			out[i] = colAt(cols, base+la.first[i])
			continue
		}
		var res []expr.Expr
		for j := la.first[i]; j < end; j++ {
			res = append(res, colAt(cols, base+j))
		}
		e, err := f(res)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// colAt references column i of cols.
func colAt(cols []types.Column, i int) expr.Expr {
	return &expr.ColRef{Idx: i, T: cols[i].Type, Name: cols[i].Name}
}

// lowerAgg returns the streaming aggregates that compute call (arguments
// over the HashAgg's input) and the function that finishes its value from
// their results (nil when the aggregate's result is the value: always, as
// stream.AggSpecFor gives PostgreSQL's result types; a result type that
// differs only in its modifier is cast).
func lowerAgg(call exec.AggCall) ([]stream.AggSpec, func([]expr.Expr) (expr.Expr, error), error) {
	for _, lower := range aggLowerings {
		if specs, final, ok, err := lower(call); ok {
			return specs, final, err
		}
	}
	sp, err := stream.AggSpecFor(call)
	if err != nil {
		return nil, nil, err
	}
	got, err := sp.ResultType()
	if err != nil {
		return nil, nil, err
	}
	want := call.Fn.Return
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

// aggLowerings compute calls from other streaming aggregates: each says ok
// for the calls it takes.
var aggLowerings = []func(exec.AggCall) ([]stream.AggSpec, func([]expr.Expr) (expr.Expr, error), bool, error){
	lowerStat,         // the variance family over integers and numeric (stream_aggvar.go)
	lowerJSON,         // json_agg and its kin (stream_aggjson.go)
	lowerHypothetical, // rank ... WITHIN GROUP (stream_agghypo.go)
}

// window plans row_number(), rank() or dense_rank() OVER (PARTITION BY p
// ORDER BY o), filtered by conds (the WHERE above the subquery that
// computes it), as a top-N per partition: bounds on the row number (rn <=
// n, rn < n, rn = k, rn >= k, rn > k) become its limit and offset (for
// rank and dense_rank only an upper bound: ties included); the number
// itself is the top-N's rank column when anything reads it; the other
// conditions filter the top-N's output. Other window functions, and
// several, are an OverWindow (stream_over.go).
func (s *streamPlanner) window(w *lWindow, conds []expr.Expr, need map[int]bool) (sout, error) {
	ties, isRank := map[string]stream.TopNTies{"row_number": stream.RowNumber, "rank": stream.Rank, "dense_rank": stream.DenseRank}[w.calls[0].Fn.Name]
	if len(w.calls) != 1 || !isRank || w.calls[0].Fn.Agg != nil || w.calls[0].Filter != nil {
		return s.overWindow(w, conds, need) // stream_over.go
	}
	call := w.calls[0]
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
	if ties != stream.RowNumber && (lo != 1 || hi < 0) {
		return s.overWindow(w, conds, need) // only rank() <= n is a top-N
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
	t := &stream.TopN{Input: in.node, Limit: -1, Offset: lo - 1, RankCol: rankUsed, AppendOnly: in.appendOnly, Ties: ties}
	if hi >= 0 {
		t.Limit = max(hi-lo+1, 0)
	}
	if t.PartitionBy, err = s.exprs(call.PartitionBy, in.lay); err != nil {
		return sout{}, err
	}
	if t.Order, err = s.keys(call.OrderBy, in.lay); err != nil {
		return sout{}, err
	}
	eowc := s.topNClose(t)
	if !eowc && s.emit.Mode == stream.EmitOnWindowClose {
		// Not per window: row numbers in time order emitted once final?
		if o, ok, err := s.overWindowOn(w, conds, in, true); ok || err != nil {
			return o, err
		}
	}
	t.Cols = in.node.Columns()
	lay := in.lay
	rank := -1
	if rankUsed {
		t.Cols = append(append([]types.Column(nil), t.Cols...), s.p.col(rn))
		lay = append(append([]int(nil), lay...), rn)
		rank = rn
	}
	o := sout{node: t, lay: lay, key: topNKey(t, colIDs(call.PartitionBy), in.key, rank), appendOnly: eowc}
	if ties != stream.RowNumber { // ranks tie: neither (partition) nor (partition, rank) is a key
		o.key = nil
		if part := colIDs(call.PartitionBy); in.key != nil && part != nil && subset(part, in.key) {
			o.key = in.key
		}
	}
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
