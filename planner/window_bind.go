package planner

import (
	"slices"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Time windows (streaming-sql.md section 3): the window table functions in
// FROM,
//
//	TUMBLE(rel, time_col, size [, offset])
//	HOP(rel, time_col, slide, size [, offset])
//	SESSION(rel, time_col, gap)
//	CUMULATE(rel, time_col, step, size [, offset])
//
// with named arguments (data, timecol, size, slide, step, gap, offset: the
// Flink names) and the Flink form TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts),
// ...)), which sql/lift_query.go rewrites into the first one. rel is a
// table, source, view, materialized view, WITH query or a parenthesized
// subquery; time_col one of its columns, of type timestamp or timestamptz.
// The result is rel's columns, then window_start and window_end (of the
// time column's type), visible under the function's alias (default: the
// relation's name, or the function's over a subquery). The legacy GROUP BY TUMBLE(ts, size) form is in window_legacy.go.
//
// Rules (checked when the query is bound, so at CREATE time for views):
//   - durations are constant intervals without months (a month has no fixed
//     length); size, slide, step and gap are positive;
//   - HOP's size is a multiple of its slide and CUMULATE's of its step, as
//     in Flink and RisingWave (so a row is in exactly size/slide windows,
//     and panes of one slide tile every window); at most 10000 windows per
//     row;
//   - windows are aligned to the Unix epoch plus offset (any sign; reduced
//     modulo the slide, or the size for TUMBLE and CUMULATE), with floor
//     division, so they may start before the first row or the epoch;
//   - a row whose time is NULL is in no window: it is dropped;
//   - SESSION's sessions are kept per key: the query's GROUP BY items (or,
//     without GROUP BY, the first window function's PARTITION BY) that read
//     the function's input and not its window columns; without either, one
//     sequence of sessions over all rows.
//
// Batch queries run them as exec.WindowExpand (one row per window) and
// exec.SessionWindow; continuous queries as stream.WindowAgg under a
// GROUP BY that includes window_start or window_end, else as
// stream.WindowExpand (window_plan.go).

// lTimeWindow is a window table function over in: in's rows with the
// window_start (startID) and window_end (endID) of every window of the time
// column timeID they are in.
type lTimeWindow struct {
	in      lnode
	spec    stream.WindowSpec // durations in µs; TimeCol is set at translation
	timeID  int
	startID int
	endID   int
	// part are SESSION's partition keys over in's columns, set by
	// keySessions once the grouping of the query level that reads the
	// window is bound (keyed then).
	part  []expr.Expr
	keyed bool
}

func (n *lTimeWindow) outIDs() []int {
	return append(append([]int(nil), n.in.outIDs()...), n.startID, n.endID)
}

// windows returns the fixed windows of TUMBLE, HOP and CUMULATE.
func (n *lTimeWindow) windows() exec.TimeWindows {
	w := exec.TimeWindows{Size: n.spec.Size, Slide: n.spec.Slide, Offset: n.spec.Offset}
	switch n.spec.Kind {
	case stream.Tumble:
		w.Slide = w.Size
	case stream.Cumulate:
		w.Cumulate = true
	}
	return w
}

// windowTVFs are the window table functions by name.
var windowTVFs = map[string]stream.WindowKind{
	"tumble": stream.Tumble, "hop": stream.Hop, "session": stream.Session, "cumulate": stream.Cumulate,
}

// windowParams are each function's parameter names; required is how many
// come first without a default.
var windowParams = map[stream.WindowKind]struct {
	names    []string
	required int
}{
	stream.Tumble:   {[]string{"data", "timecol", "size", "offset"}, 3},
	stream.Hop:      {[]string{"data", "timecol", "slide", "size", "offset"}, 4},
	stream.Session:  {[]string{"data", "timecol", "gap"}, 3},
	stream.Cumulate: {[]string{"data", "timecol", "step", "size", "offset"}, 4},
}

// maxWindowsPerRow bounds size/slide of HOP and CUMULATE.
const maxWindowsPerRow = 10000

// signature renders a window function's parameters for hints.
func signature(kind stream.WindowKind, names []string, required int) string {
	var b strings.Builder
	b.WriteString(kind.String() + "(")
	for i, n := range names {
		switch {
		case i == required:
			b.WriteString(" [, " + n)
		case i > 0:
			b.WriteString(", " + n)
		default:
			b.WriteString(n)
		}
	}
	if len(names) > required {
		b.WriteString("]")
	}
	return b.String() + ")"
}

// windowArgs sorts a call's arguments into parameter order (positional
// first, then by name) and checks that the required ones are there.
func (b *binder) windowArgs(kind stream.WindowKind, fc *pg.FuncCall, names []string, required int) ([]*pg.Node, []int32, error) {
	args := make([]*pg.Node, len(names))
	locs := make([]int32, len(names))
	hint := "The arguments are " + signature(kind, names, required) + "."
	pos := 0
	for _, a := range fc.Args {
		if na := a.GetNamedArgExpr(); na != nil {
			i := slices.Index(names, na.Name)
			if i < 0 {
				return nil, nil, b.newErr(pgerr.UndefinedFunction, na.Location, "%s has no parameter named \"%s\"", kind, na.Name).(*pgerr.Error).WithHint("%s", hint)
			}
			if args[i] != nil {
				return nil, nil, b.newErr(pgerr.SyntaxError, na.Location, "argument \"%s\" of %s is given more than once", na.Name, kind)
			}
			args[i], locs[i] = na.Arg, na.Location
			continue
		}
		if pos >= len(names) {
			return nil, nil, b.newErr(pgerr.UndefinedFunction, nodeLoc(a), "too many arguments for %s", kind).(*pgerr.Error).WithHint("%s", hint)
		}
		args[pos], locs[pos] = a, argLoc(a)
		pos++
	}
	for i := 0; i < required; i++ {
		if args[i] == nil {
			return nil, nil, b.newErr(pgerr.UndefinedFunction, fc.Location, "%s is missing its argument \"%s\"", kind, names[i]).(*pgerr.Error).WithHint("%s", hint)
		}
	}
	return args, locs, nil
}

// argLoc is an argument's location: INTERVAL '1' SECOND's is its keyword's.
func argLoc(n *pg.Node) int32 {
	if tc := n.GetTypeCast(); tc != nil && tc.Location < 0 {
		if tc.TypeName != nil && tc.TypeName.Location >= 0 {
			return tc.TypeName.Location
		}
		return nodeLoc(tc.Arg)
	}
	return nodeLoc(n)
}

// windowTVF binds a window table function in FROM; ok is false for any
// other function.
func (b *binder) windowTVF(l *level, rf *pg.RangeFunction) (lnode, []*nsItem, bool, error) {
	if len(rf.Functions) != 1 {
		return nil, nil, false, nil
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) == 0 || items[0].GetFuncCall() == nil {
		return nil, nil, false, nil
	}
	fc := items[0].GetFuncCall()
	if len(fc.Funcname) != 1 {
		return nil, nil, false, nil
	}
	name := funcName(fc.Funcname)
	kind, ok := windowTVFs[name]
	if !ok {
		return nil, nil, false, nil
	}
	if rf.Lateral || rf.Ordinality || rf.IsRowsfrom || len(rf.Coldeflist) > 0 {
		return nil, nil, true, b.newErr(pgerr.FeatureNotSupported, fc.Location, "%s cannot be used with LATERAL, WITH ORDINALITY, ROWS FROM or a column definition list", kind)
	}
	p := windowParams[kind]
	args, locs, err := b.windowArgs(kind, fc, p.names, p.required)
	if err != nil {
		return nil, nil, true, err
	}
	in, cols, err := b.windowInput(l, kind, args[0], locs[0])
	if err != nil {
		return nil, nil, true, err
	}
	timeID, err := b.windowTimeCol(kind, args[1], locs[1], cols)
	if err != nil {
		return nil, nil, true, err
	}
	tw, err := b.newTimeWindow(kind, in, timeID, args[2:], locs[2:], p.names[2:])
	if err != nil {
		return nil, nil, true, err
	}
	// Unaliased, the columns are qualified by the relation's name, as in
	// RisingWave (FROM HOP(bid, ...) ... GROUP BY bid.auction), or by the
	// function's name over a subquery.
	alias := name
	if cr := args[0].GetColumnRef(); cr != nil {
		alias = strs(cr.Fields)[len(cr.Fields)-1]
	}
	if rf.Alias != nil {
		alias = rf.Alias.Aliasname
	}
	plan, ns, err := b.aliased(tw, alias, rf.Alias)
	if err != nil {
		return nil, nil, true, b.errAt(err, fc.Location)
	}
	return plan, ns, true, nil
}

// windowInput binds a window function's relation argument: a name (a
// ColumnRef to PostgreSQL's grammar) or a parenthesized subquery. It
// returns the plan and its columns by name.
func (b *binder) windowInput(l *level, kind stream.WindowKind, n *pg.Node, loc int32) (lnode, []nsCol, error) {
	if cr := n.GetColumnRef(); cr != nil {
		names := strs(cr.Fields)
		if len(names) != len(cr.Fields) || len(names) > 2 {
			return nil, nil, b.newErr(pgerr.SyntaxError, cr.Location, "the first argument of %s must name a table, source or view", kind)
		}
		rv := &pg.RangeVar{Relname: names[len(names)-1], Inh: true, Relpersistence: "p", Location: cr.Location}
		if len(names) == 2 {
			rv.Schemaname = names[0]
		}
		plan, ns, err := b.rangeVar(l, rv)
		if err != nil {
			return nil, nil, err
		}
		return plan, visibleCols(ns), nil
	}
	if sl := n.GetSubLink(); sl != nil && sl.SubLinkType == pg.SubLinkType_EXPR_SUBLINK {
		plan, err := b.query(sl.Subselect, l, nil, true)
		if err != nil {
			return nil, nil, err
		}
		var cols []nsCol
		for _, id := range plan.outIDs() {
			cols = append(cols, nsCol{name: b.cols[id].name, id: id})
		}
		return plan, cols, nil
	}
	return nil, nil, b.newErr(pgerr.WrongObjectType, loc, "the first argument of %s must be a table, source or view name, or a parenthesized subquery", kind)
}

// windowTimeCol resolves the time column argument among the relation's
// columns and checks its type.
func (b *binder) windowTimeCol(kind stream.WindowKind, n *pg.Node, loc int32, cols []nsCol) (int, error) {
	cr := n.GetColumnRef()
	if cr == nil {
		return 0, b.newErr(pgerr.WrongObjectType, loc, "the time column argument of %s must be a column name", kind)
	}
	names := strs(cr.Fields)
	if len(names) == 0 || len(names) != len(cr.Fields) {
		return 0, b.newErr(pgerr.SyntaxError, cr.Location, "the time column argument of %s must be a column name", kind)
	}
	name := names[len(names)-1]
	id := -1
	for _, c := range cols {
		if c.name == name {
			if id >= 0 {
				return 0, b.newErr(pgerr.AmbiguousColumn, cr.Location, "column reference \"%s\" is ambiguous", name)
			}
			id = c.id
		}
	}
	if id < 0 {
		return 0, b.newErr(pgerr.UndefinedColumn, cr.Location, "column \"%s\" does not exist", name)
	}
	if t := b.cols[id].t; !t.IsTimestamp() {
		return 0, b.newErr(pgerr.DatatypeMismatch, cr.Location, "the time column of %s must be of type timestamp or timestamp with time zone, but \"%s\" is %s", kind, name, t)
	}
	return id, nil
}

// newTimeWindow builds the window node over in from the duration arguments
// (args and names in parameter order after the time column; nil: absent).
func (b *binder) newTimeWindow(kind stream.WindowKind, in lnode, timeID int, args []*pg.Node, locs []int32, names []string) (*lTimeWindow, error) {
	d := map[string]int64{}
	loc := map[string]int32{}
	for i, a := range args {
		if a == nil {
			continue
		}
		v, err := b.windowDuration(kind, names[i], a, locs[i])
		if err != nil {
			return nil, err
		}
		d[names[i]], loc[names[i]] = v, locs[i]
	}
	bad := func(param, format string, args ...any) error {
		return b.newErr(pgerr.InvalidParameterValue, loc[param], format, args...)
	}
	for _, p := range []string{"size", "slide", "step", "gap"} {
		if v, ok := d[p]; ok && v <= 0 {
			return nil, bad(p, "%s of %s must be greater than zero, not %s", p, kind, fmtMicros(v))
		}
	}
	spec := stream.WindowSpec{Kind: kind, Size: d["size"], Offset: d["offset"], Gap: d["gap"]}
	period := spec.Size
	switch kind {
	case stream.Hop, stream.Cumulate:
		step := "slide"
		if kind == stream.Cumulate {
			step = "step"
		}
		spec.Slide = d[step]
		if spec.Size%spec.Slide != 0 {
			return nil, bad("size", "size of %s (%s) must be a multiple of its %s (%s)", kind, fmtMicros(spec.Size), step, fmtMicros(spec.Slide))
		}
		if spec.Size/spec.Slide > maxWindowsPerRow {
			return nil, bad("size", "%s puts every row in %d windows (size %s / %s %s); at most %d are allowed", kind, spec.Size/spec.Slide, fmtMicros(spec.Size), step, fmtMicros(spec.Slide), maxWindowsPerRow)
		}
		if kind == stream.Hop {
			period = spec.Slide
		}
	}
	if kind != stream.Session {
		spec.Offset = ((spec.Offset % period) + period) % period
	}
	t := b.cols[timeID].t
	return &lTimeWindow{in: in, spec: spec, timeID: timeID,
		startID: b.newCol("window_start", "", t), endID: b.newCol("window_end", "", t)}, nil
}

// windowDuration evaluates a constant interval argument in microseconds.
func (b *binder) windowDuration(kind stream.WindowKind, what string, n *pg.Node, loc int32) (int64, error) {
	e, err := b.expr(&level{clause: inFunc}, n)
	if err != nil {
		return 0, err
	}
	return b.durationOf(e, what+" of "+kind.String(), loc)
}

// durationOf evaluates e, a constant interval (or an untyped literal),
// in microseconds; what names it in errors, which point at loc.
func (b *binder) durationOf(e expr.Expr, what string, loc int32) (int64, error) {
	var err error
	if e.Type().Kind == types.Unknown {
		if e, err = expr.Coerce(e, types.TInterval, false); err != nil {
			return 0, b.errAt(err, loc)
		}
	}
	if e.Type().Kind != types.Interval {
		return 0, b.newErr(pgerr.DatatypeMismatch, loc, "%s must be an interval, not %s", what, e.Type())
	}
	if len(refsOf(e)) > 0 || hasSubquery(e) {
		return 0, b.newErr(pgerr.FeatureNotSupported, loc, "%s must be a constant", what)
	}
	var eval *expr.Context
	if b.env != nil {
		eval = b.env.Eval
	}
	v, err := evalConst(&exec.Context{Eval: eval}, e)
	if err != nil {
		return 0, b.errAt(err, loc)
	}
	if v == nil {
		return 0, b.newErr(pgerr.InvalidParameterValue, loc, "%s must not be NULL", what)
	}
	iv := v.(types.IntervalValue)
	if iv.Months != 0 {
		return 0, b.newErr(pgerr.InvalidParameterValue, loc, "%s must not contain months or years (they have no fixed length); write days instead", what)
	}
	return int64(iv.Days)*int64(24*time.Hour/time.Microsecond) + iv.Micros, nil
}

// fmtMicros renders a duration for messages ("10s", "-1m30s").
func fmtMicros(us int64) string { return time.Duration(us * 1000).String() }

// keySessions gives the SESSION windows a query level reads their
// partition keys, once its grouping is bound: the GROUP BY items, or
// without GROUP BY the first window function's PARTITION BY, that read only
// the window's input. Windows keyed by an inner level are left alone; a
// level with neither leaves them for an enclosing level (a view's or
// subquery's reader), and unkeyed ones have one partition.
func (b *binder) keySessions(l *level, plan lnode, groups []expr.Expr) {
	keys := groups
	if len(keys) == 0 && len(l.wins) > 0 {
		keys = l.wins[0].call.PartitionBy
	}
	if len(groups) == 0 && len(keys) == 0 {
		return
	}
	keySessionsIn(plan, append([]expr.Expr(nil), keys...))
}

func keySessionsIn(n lnode, keys []expr.Expr) {
	switch x := n.(type) {
	case *lTimeWindow:
		if x.spec.Kind != stream.Session || x.keyed {
			return
		}
		x.keyed = true
		in := idSet(x.in.outIDs())
		for _, k := range keys {
			if k == nil || len(refsOf(k)) == 0 || !within(k, in) || hasSubquery(k) {
				continue
			}
			if !slices.ContainsFunc(x.part, func(p expr.Expr) bool { return equalExpr(p, k) }) {
				x.part = append(x.part, k)
			}
		}
	case *lFilter:
		keySessionsIn(x.in, keys)
	case *lJoin:
		keySessionsIn(x.left, keys)
		keySessionsIn(x.right, keys)
	case *lProject:
		def := map[int]expr.Expr{}
		for i, id := range x.ids {
			def[id] = x.exprs[i]
		}
		below := make([]expr.Expr, 0, len(keys))
		for _, k := range keys {
			if k == nil {
				continue
			}
			ok := true
			r, _ := transform(k, func(e expr.Expr) (expr.Expr, bool, error) {
				if c, isRef := e.(*expr.ColRef); isRef {
					d, found := def[c.Idx]
					ok = ok && found
					if found {
						return d, true, nil
					}
				}
				return e, false, nil
			})
			if ok {
				below = append(below, r)
			}
		}
		keySessionsIn(x.in, below)
	}
}
