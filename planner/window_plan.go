package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Planning time windows (see window_bind.go for their binding and rules).
//
// Batch: TUMBLE, HOP and CUMULATE become an exec.WindowExpand (a row per
// window), SESSION an exec.SessionWindow (sort by partition and time, then
// assign sessions).
//
// Streaming: a GROUP BY over a window function (directly, or through
// projections) whose keys include window_start or window_end (for
// CUMULATE: window_end) becomes a stream.WindowAgg over the function's
// input: the window spec, the other keys as GroupBy, the aggregates, and
// the query's EMIT clause; a Project on top puts the columns in the query's
// order. Its stream key is the group keys. Anything else over a window
// (a plain SELECT * FROM TUMBLE(...), grouping by an expression of the
// window columns, a filter on them below the grouping) reads a
// stream.WindowExpand, aggregated if at all by an ordinary HashAgg, which
// never frees state; SESSION needs the WindowAgg form. Under EMIT ON
// UPDATE a WindowAgg frees a window's state only when a watermark closes
// it: without a watermark on the time column its state grows forever.

// pushTimeWindow places filter conditions over a window function: those
// that read neither window column go below it (a row's windows do not
// depend on the other rows), except under SESSION, whose sessions depend
// on which rows are there.
func pushTimeWindow(x *lTimeWindow, conds []expr.Expr) lnode {
	if x.spec.Kind == stream.Session {
		return filterOver(x, conds)
	}
	var keep, down []expr.Expr
	for _, c := range conds {
		r := refsOf(c)
		if r[x.startID] || r[x.endID] || hasSubquery(c) {
			keep = append(keep, c)
		} else {
			down = append(down, c)
		}
	}
	x.in = push(x.in, down)
	return filterOver(x, keep)
}

// timeWindow translates a window function for batch execution.
func (p *physical) timeWindow(x *lTimeWindow, need map[int]bool) (exec.Node, []int, error) {
	sub := union(map[int]bool{x.timeID: true}, x.part...)
	for id := range need {
		if id != x.startID && id != x.endID {
			sub[id] = true
		}
	}
	in, lay, err := p.node(x.in, sub)
	if err != nil {
		return nil, nil, err
	}
	out := append(append([]int(nil), lay...), x.startID, x.endID)
	tc := position(lay, x.timeID)
	if tc < 0 {
		return nil, nil, pgerr.Internal("planner: window time column %d not in its input", x.timeID)
	}
	if x.spec.Kind == stream.Session {
		part, err := p.exprs(x.part, lay)
		if err != nil {
			return nil, nil, err
		}
		return &exec.SessionWindow{Input: in, TimeCol: tc, PartitionBy: part, Gap: x.spec.Gap, Cols: p.cols(out)}, out, nil
	}
	return &exec.WindowExpand{Input: in, TimeCol: tc, Windows: x.windows(), Cols: p.cols(out)}, out, nil
}

// timeWindow translates a window function that is not under a windowed
// aggregation: a stream.WindowExpand. Its rows are keyed by the input's
// key and the window (its start, or its end for CUMULATE).
func (s *streamPlanner) timeWindow(x *lTimeWindow, need map[int]bool) (sout, error) {
	if x.spec.Kind == stream.Session {
		return sout{}, notInMV("SESSION without a GROUP BY on window_start or window_end").
			WithHint("Group the session windows: SELECT key, window_start, window_end, count(*) FROM SESSION(...) GROUP BY key, window_start, window_end.")
	}
	sub := map[int]bool{x.timeID: true}
	for id := range need {
		if id != x.startID && id != x.endID {
			sub[id] = true
		}
	}
	in, err := s.node(x.in, sub)
	if err != nil {
		return sout{}, err
	}
	tc := position(in.lay, x.timeID)
	if tc < 0 {
		return sout{}, pgerr.Internal("planner: window time column %d not in its input", x.timeID)
	}
	out := append(append([]int(nil), in.lay...), x.startID, x.endID)
	w := &stream.WindowExpand{Input: in.node, TimeCol: tc, Windows: x.windows(), Cols: s.p.cols(out)}
	o := sout{node: w, lay: out, appendOnly: in.appendOnly}
	if in.key != nil {
		switch x.spec.Kind {
		case stream.Tumble:
			o.key = in.key
		case stream.Hop:
			o.key = append(append([]int{}, in.key...), x.startID)
		case stream.Cumulate:
			o.key = append(append([]int{}, in.key...), x.endID)
		}
	}
	return o, nil
}

// windowAgg plans x as a stream.WindowAgg when it groups a window function
// by its window; ok is false when it does not.
func (s *streamPlanner) windowAgg(x *lAgg) (o sout, ok bool, err error) {
	tw, groups, aggs, found := windowAggInput(x)
	if !found {
		return sout{}, false, nil
	}
	win := map[int]bool{tw.startID: true, tw.endID: true}
	reads := func(e expr.Expr) bool {
		for id := range refsOf(e) {
			if win[id] {
				return true
			}
		}
		return false
	}
	startAt, endAt := -1, -1
	var keys []expr.Expr
	pos := make([]int, len(groups)) // each group key's column in the WindowAgg
	for i, g := range groups {
		c, isRef := g.(*expr.ColRef)
		switch {
		case isRef && c.Idx == tw.startID:
			startAt, pos[i] = i, 0
		case isRef && c.Idx == tw.endID:
			endAt, pos[i] = i, 1
		case reads(g):
			return sout{}, false, nil // an expression of the window: a plain aggregation
		default:
			pos[i] = 2 + len(keys)
			keys = append(keys, g)
		}
	}
	if (startAt < 0 && endAt < 0) || (tw.spec.Kind == stream.Cumulate && endAt < 0) {
		return sout{}, false, nil
	}
	for _, a := range aggs {
		if reads(a.Filter) {
			return sout{}, false, nil
		}
		for _, arg := range a.Args {
			if reads(arg) {
				return sout{}, false, nil
			}
		}
		// array_agg(x ORDER BY y): y is read like an argument (an
		// ordered-set aggregate's WITHIN GROUP key is its argument)
		for _, k := range a.OrderBy {
			if reads(k.E) {
				return sout{}, false, nil
			}
		}
	}
	if tw.spec.Kind == stream.Session && !sameExprs(keys, tw.part) {
		return sout{}, true, notInMV("SESSION whose partition differs from the GROUP BY keys")
	}
	sub := union(map[int]bool{tw.timeID: true}, keys...)
	for _, a := range aggs {
		sub = union(union(sub, a.Args...), a.Filter)
		for _, k := range a.OrderBy {
			sub = union(sub, k.E)
		}
	}
	if s.emit.LateRows {
		// LATE ROWS INTO stores whole rows of the window's relation, in
		// its column order (engine/laterows.go checks the table's shape).
		for _, id := range tw.in.outIDs() {
			sub[id] = true
		}
	}
	in, err := s.node(tw.in, sub)
	if err != nil {
		return sout{}, true, err
	}
	spec := tw.spec
	if spec.TimeCol = position(in.lay, tw.timeID); spec.TimeCol < 0 {
		return sout{}, true, pgerr.Internal("planner: window time column %d not in its input", tw.timeID)
	}
	wa := &stream.WindowAgg{Input: in.node, Window: spec, Emit: s.emit, AppendOnly: in.appendOnly}
	if wa.GroupBy, err = s.exprs(keys, in.lay); err != nil {
		return sout{}, true, err
	}
	tt := s.p.col(tw.timeID).Type
	wa.Cols = []types.Column{{Name: "window_start", Type: tt}, {Name: "window_end", Type: tt}}
	for i, g := range groups {
		if pos[i] >= 2 {
			wa.Cols = append(wa.Cols, types.Column{Name: s.b.cols[x.groupIDs[i]].name, Type: g.Type()})
		}
	}
	la, err := s.lowerAggs(&lAgg{aggIDs: x.aggIDs, aggs: aggs}, in.lay)
	if err != nil {
		return sout{}, true, err
	}
	wa.Aggs = la.specs
	base := len(wa.Cols)
	wa.Cols = append(wa.Cols, la.cols...)
	s.windowAggs++
	lay := x.outIDs()
	pr := &stream.Project{Input: wa, Cols: s.p.cols(lay)}
	for _, at := range pos {
		pr.Exprs = append(pr.Exprs, colAt(wa.Cols, at))
	}
	vals, err := la.values(wa.Cols, base)
	if err != nil {
		return sout{}, true, err
	}
	pr.Exprs = append(pr.Exprs, vals...)
	// The group keys identify a row; one window column is redundant in
	// them: for TUMBLE and HOP window_start gives window_end, for CUMULATE
	// window_end gives window_start. Sessions keep both (an update pair may
	// move a session's end, and its start when its first row goes).
	redundant := -1
	switch {
	case tw.spec.Kind == stream.Cumulate && startAt >= 0:
		redundant = startAt
	case tw.spec.Kind != stream.Session && startAt >= 0 && endAt >= 0:
		redundant = endAt
	}
	key := []int{}
	for i, id := range x.groupIDs {
		if i != redundant {
			key = append(key, id)
		}
	}
	e := s.emit
	o = sout{node: pr, lay: lay, key: key, appendOnly: e.Mode == stream.EmitOnWindowClose && e.EarlyEvery == 0 && e.AllowLateness == 0}
	if isIdentity(pr.Exprs, len(wa.Cols)) {
		o.node = wa
	}
	return o, true, nil
}

// windowAggInput finds the window function an aggregation reads, directly
// or through projections, and returns x's group keys and aggregate calls
// rewritten over the window's columns.
func windowAggInput(x *lAgg) (*lTimeWindow, []expr.Expr, []exec.AggCall, bool) {
	groups := append([]expr.Expr(nil), x.groups...)
	aggs := append([]exec.AggCall(nil), x.aggs...)
	for i := range aggs {
		aggs[i].Args = append([]expr.Expr(nil), aggs[i].Args...)
		aggs[i].OrderBy = append([]exec.SortKey(nil), aggs[i].OrderBy...)
	}
	n := x.in
	for {
		switch p := n.(type) {
		case *lTimeWindow:
			return p, groups, aggs, true
		case *lShared: // the input of every grouping set
			n = p.in
		case *lProject:
			def := make(map[int]expr.Expr, len(p.ids))
			for i, id := range p.ids {
				def[id] = p.exprs[i]
			}
			ok := true
			through := func(e expr.Expr) expr.Expr {
				if e == nil || !ok {
					return e
				}
				if hasSubquery(e) {
					ok = false
					return e
				}
				r, _ := transform(e, func(e expr.Expr) (expr.Expr, bool, error) {
					if c, isRef := e.(*expr.ColRef); isRef {
						d, found := def[c.Idx]
						ok = ok && found
						if found {
							return d, true, nil
						}
					}
					return e, false, nil
				})
				return r
			}
			for i := range groups {
				groups[i] = through(groups[i])
			}
			for i := range aggs {
				for j := range aggs[i].Args {
					aggs[i].Args[j] = through(aggs[i].Args[j])
				}
				aggs[i].Filter = through(aggs[i].Filter)
				for j := range aggs[i].OrderBy {
					aggs[i].OrderBy[j].E = through(aggs[i].OrderBy[j].E)
				}
			}
			if !ok {
				return nil, nil, nil, false
			}
			n = p.in
		default:
			return nil, nil, nil, false
		}
	}
}

// sameExprs reports whether a and b hold equal expressions, in any order.
func sameExprs(a, b []expr.Expr) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			found = found || equalExpr(x, y)
		}
		if !found {
			return false
		}
	}
	return true
}
