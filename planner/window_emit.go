package planner

import (
	"slices"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
)

// The EMIT clause of a continuous query (streaming-sql.md section 4) is
// given to its windowed aggregations (stream.WindowAgg.Emit). It is checked
// when the query is planned, so at CREATE time:
//
//   - its intervals are constant intervals without months; EVERY and EARLY
//     EVERY are positive, WITH DELAY and ALLOW LATENESS not negative;
//   - EMIT ON WINDOW CLOSE (and its aliases) needs something to close:
//     a query that reads no table or source with a WATERMARK (materialized
//     views are assumed to carry one) is refused (42P17); one without a
//     windowed aggregation emits each row when the watermark passes it
//     (stream_eowc.go) if an output column carries the watermark, else it
//     is not supported (0A000); nor is EMIT EVERY without one.

// emitSpec converts env's EMIT clause (nil: ON UPDATE).
func (b *binder) emitSpec(env *Env) (stream.EmitSpec, error) {
	var spec stream.EmitSpec
	if env == nil || env.Emit == nil {
		return spec, nil
	}
	e := env.Emit
	switch e.Mode {
	case sql.EmitOnWindowClose:
		spec.Mode = stream.EmitOnWindowClose
	case sql.EmitEvery:
		spec.Mode = stream.EmitEvery
	}
	for _, d := range []struct {
		iv       sql.Interval
		to       *int64
		what     string
		positive bool
	}{
		{e.Delay, &spec.Delay, "WITH DELAY", false},
		{e.EarlyEvery, &spec.EarlyEvery, "EARLY EVERY", true},
		{e.AllowLateness, &spec.AllowLateness, "ALLOW LATENESS", false},
		{e.Every, &spec.Every, "EMIT EVERY", true},
	} {
		if d.iv.Text == "" {
			continue
		}
		v, err := b.emitInterval(d.iv, "the interval of "+d.what)
		if err != nil {
			return spec, err
		}
		if v < 0 || (v == 0 && d.positive) {
			cmp := "must not be negative"
			if d.positive {
				cmp = "must be greater than zero"
			}
			return spec, b.newErr(pgerr.InvalidParameterValue, int32(d.iv.Pos), "the interval of %s %s, not %s", d.what, cmp, fmtMicros(v))
		}
		*d.to = v
	}
	spec.LateRows = e.LateRowsInto != ""
	return spec, nil
}

// emitInterval evaluates one interval of the EMIT clause, as written.
func (b *binder) emitInterval(iv sql.Interval, what string) (int64, error) {
	loc := int32(iv.Pos)
	stmts, err := sql.Parse("SELECT " + iv.Text)
	if err != nil || len(stmts) != 1 || stmts[0].AST.GetSelectStmt() == nil || len(stmts[0].AST.GetSelectStmt().TargetList) != 1 {
		return 0, b.newErr(pgerr.SyntaxError, loc, "%s is not an interval: %s", what, iv.Text)
	}
	src := b.src
	b.src = "" // locations in the snippet are not the statement's
	e, err := b.expr(&level{clause: inFunc}, stmts[0].AST.GetSelectStmt().TargetList[0].GetResTarget().Val)
	b.src = src
	if err != nil {
		return 0, b.errAt(err, loc)
	}
	return b.durationOf(e, what, loc)
}

// checkEmit refuses an EMIT clause the plan cannot honour (see above).
func (s *streamPlanner) checkEmit(env *Env, plan lnode) error {
	if env == nil || env.Emit == nil {
		return nil
	}
	e := env.Emit
	loc := int32(e.Pos)
	switch {
	case e.Mode == sql.EmitOnWindowClose && !readsWatermark(plan):
		return s.b.newErr(pgerr.InvalidObjectDefinition, loc, "%s needs a watermark, but the query reads no table or source with one", e.Written).(*pgerr.Error).
			WithHint("Declare WATERMARK FOR time_col AS time_col - INTERVAL '...' on the table or source, and group by a window (TUMBLE, HOP, SESSION, CUMULATE).")
	case s.windowAggs > 0 || s.eowcPlain:
		return nil
	case e.Mode == sql.EmitOnWindowClose:
		hint := "Select the WATERMARK FOR column itself, or group by a window: GROUP BY window_start, window_end over TUMBLE(...), HOP(...), SESSION(...) or CUMULATE(...)."
		if hasPlainJoin(plan) {
			hint += " A plain JOIN does not pass the watermark on (a later change of the table retracts earlier output); " +
				"to enrich the rows with a table's current values, make it a lookup join: ... JOIN other FOR SYSTEM_TIME AS OF PROCTIME() o ON ... ."
		}
		return s.b.newErr(pgerr.FeatureNotSupported, loc, "%s needs a windowed aggregation or an output column that carries the watermark", e.Written).(*pgerr.Error).
			WithHint("%s", hint)
	case e.Mode == sql.EmitEvery:
		return s.b.newErr(pgerr.FeatureNotSupported, loc, "%s is not supported yet on a query without a windowed aggregation", e.Written)
	}
	return nil
}

// hasPlainJoin reports whether a plan joins anything other than by a
// lookup join (which passes the stream's watermark on).
func hasPlainJoin(n lnode) bool {
	if j, ok := n.(*lJoin); ok && !j.temporal {
		return true
	}
	return slices.ContainsFunc(nodeChildren(n), hasPlainJoin)
}

// readsWatermark reports whether a plan reads a table or source with a
// watermark, or a materialized view (which may carry one).
func readsWatermark(n lnode) bool {
	if sc, ok := n.(*lScan); ok {
		return sc.rel.Watermark != nil || sc.rel.Kind == catalog.KindMatView
	}
	if p, ok := n.(*lProject); ok && slices.ContainsFunc(p.exprs, stream.IsProcTime) {
		return true // PROCTIME() carries the clock as its watermark
	}
	for _, c := range nodeChildren(n) {
		if readsWatermark(c) {
			return true
		}
	}
	return false
}

// emitOf returns a parsed statement's EMIT clause, or nil.
func emitOf(st sql.Statement) *sql.Emit {
	if st.Ext == nil {
		return nil
	}
	return st.Ext.Emit
}
