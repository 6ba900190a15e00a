package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
)

// The legacy group windows of Flink and Calcite:
//
//	SELECT k, TUMBLE_START(ts, INTERVAL '1' MINUTE), count(*)
//	FROM t GROUP BY k, TUMBLE(ts, INTERVAL '1' MINUTE)
//
// GROUP BY TUMBLE(ts, size [, offset]), HOP(ts, slide, size [, offset]) or
// SESSION(ts, gap) (one per query) applies that window function to the
// query's rows after WHERE and groups by its window_start and window_end;
// TUMBLE_START/_END, HOP_START/_END and SESSION_START/_END (with the same
// arguments) read them. It plans exactly as the table-function form does.

// groupWindow is a query level's legacy group window.
type groupWindow struct {
	node *pg.Node // its GROUP BY item
	call *pg.FuncCall
	kind stream.WindowKind
	tw   *lTimeWindow
}

var groupWindowParams = map[string]struct {
	kind     stream.WindowKind
	names    []string
	required int
}{
	"tumble":  {stream.Tumble, []string{"timecol", "size", "offset"}, 2},
	"hop":     {stream.Hop, []string{"timecol", "slide", "size", "offset"}, 3},
	"session": {stream.Session, []string{"timecol", "gap"}, 2},
}

// windowAccessors are the functions reading a group window's bounds.
var windowAccessors = map[string]struct {
	kind stream.WindowKind
	end  bool
}{
	"tumble_start": {stream.Tumble, false}, "tumble_end": {stream.Tumble, true},
	"hop_start": {stream.Hop, false}, "hop_end": {stream.Hop, true},
	"session_start": {stream.Session, false}, "session_end": {stream.Session, true},
}

// groupWindow binds the legacy group window among a query's GROUP BY items
// over plan (its FROM and WHERE) and returns plan under the window.
func (b *binder) groupWindow(l *level, items []*pg.Node, plan lnode) (lnode, error) {
	for _, n := range items {
		fc := n.GetFuncCall()
		if fc == nil || len(fc.Funcname) != 1 || fc.Over != nil {
			continue
		}
		p, ok := groupWindowParams[funcName(fc.Funcname)]
		if !ok {
			continue
		}
		if l.timeWin != nil {
			return nil, b.newErr(pgerr.GroupingError, fc.Location, "GROUP BY can have only one group window (TUMBLE, HOP or SESSION)")
		}
		args, locs, err := b.windowArgs(p.kind, fc, p.names, p.required)
		if err != nil {
			return nil, err
		}
		saved := l.clause
		l.clause = inGroupBy
		e, err := b.expr(l, args[0])
		l.clause = saved
		if err != nil {
			return nil, err
		}
		c, isRef := e.(*expr.ColRef)
		if !isRef {
			return nil, b.newErr(pgerr.FeatureNotSupported, locs[0], "the time argument of GROUP BY %s must be a column", p.kind)
		}
		if t := e.Type(); !t.IsTimestamp() {
			return nil, b.newErr(pgerr.DatatypeMismatch, locs[0], "the time column of %s must be of type timestamp or timestamp with time zone, but \"%s\" is %s", p.kind, b.cols[c.Idx].name, t)
		}
		tw, err := b.newTimeWindow(p.kind, plan, c.Idx, args[1:], locs[1:], p.names[1:])
		if err != nil {
			return nil, err
		}
		l.timeWin = &groupWindow{node: n, call: fc, kind: p.kind, tw: tw}
		plan = tw
	}
	return plan, nil
}

// groupWindowAccessor binds TUMBLE_START(...) and its kin; ok is false for
// other functions.
func (b *binder) groupWindowAccessor(l *level, fc *pg.FuncCall, name string) (expr.Expr, bool, error) {
	acc, ok := windowAccessors[name]
	if !ok || len(fc.Funcname) != 1 {
		return nil, false, nil
	}
	w := l.timeWin
	if w == nil || w.kind != acc.kind {
		return nil, true, b.newErr(pgerr.GroupingError, fc.Location, "%s can only be used with GROUP BY %s(...)", name, acc.kind)
	}
	if len(fc.Args) != len(w.call.Args) {
		return nil, true, b.newErr(pgerr.UndefinedFunction, fc.Location, "%s takes the arguments of GROUP BY %s(...) (%d), not %d", name, acc.kind, len(w.call.Args), len(fc.Args))
	}
	if acc.end {
		return b.colRef(w.tw.endID), true, nil
	}
	return b.colRef(w.tw.startID), true, nil
}
