package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// RisingWave's SESSION WITH GAP window frame (docs/sql.md, "Session
// frames"): OVER (PARTITION BY ... ORDER BY ts SESSION WITH GAP '10
// minutes') makes a row's frame its session, the run of its partition's
// rows in which each comes less than the gap after the one before
// (exec.FrameSession). The lifter keeps the frame apart from the tree
// PostgreSQL parses (sql.SessionFrame); it belongs to the window
// specification whose '(' is at its Open offset.

// sessionFrameOf returns the SESSION WITH GAP frame of window wd, if it
// has one.
func (b *binder) sessionFrameOf(wd *pg.WindowDef) (sql.SessionFrame, bool) {
	for _, f := range b.sessionFrames {
		if f.Open == int(wd.Location) {
			return f, true
		}
	}
	return sql.SessionFrame{}, false
}

// sessionFrame binds a SESSION WITH GAP frame: one ascending ORDER BY
// key of a date or time type, and a gap that is a positive constant
// interval.
func (b *binder) sessionFrame(l *level, wd *pg.WindowDef, sf sql.SessionFrame, order []exec.SortKey) (exec.Frame, error) {
	f := exec.Frame{Mode: exec.FrameSession}
	if wd.FrameOptions&frameNonDefault != 0 {
		return f, b.newErr(pgerr.SyntaxError, int32(sf.Pos), "SESSION WITH GAP cannot follow another frame clause")
	}
	if len(order) != 1 {
		return f, b.newErr(pgerr.WindowingError, int32(sf.Pos), "SESSION WITH GAP requires exactly one ORDER BY column")
	}
	k := order[0]
	if k.Desc {
		return f, b.newErr(pgerr.FeatureNotSupported, int32(sf.Pos), "SESSION WITH GAP requires an ascending ORDER BY column")
	}
	if t := k.E.Type(); t.Kind != types.Date && !t.IsTimestamp() && t.Kind != types.Time {
		return f, b.newErr(pgerr.FeatureNotSupported, int32(sf.Pos), "SESSION WITH GAP is not supported for column type %s (a date, time or timestamp orders sessions)", t)
	}
	stmts, err := pg.Parse("SELECT " + sf.Gap.Text)
	if err != nil || len(stmts.Stmts) != 1 {
		return f, b.newErr(pgerr.SyntaxError, int32(sf.Gap.Pos), "SESSION WITH GAP needs an interval, not %s", sf.Gap.Text)
	}
	node := stmts.Stmts[0].Stmt.GetSelectStmt().GetTargetList()[0].GetResTarget().GetVal()
	saved, src := l.clause, b.src
	l.clause, b.src = inWindow, "" // the gap's offsets are its own text's
	gap, err := b.expr(l, node)
	l.clause, b.src = saved, src
	if err == nil {
		gap, err = expr.Coerce(gap, types.TInterval, false)
	}
	if err != nil {
		return f, b.errAt(err, int32(sf.Gap.Pos))
	}
	if len(refsOf(gap)) > 0 {
		return f, b.newErr(pgerr.InvalidColumnReference, int32(sf.Gap.Pos), "the gap of SESSION WITH GAP must be a constant")
	}
	folded, err := expr.Fold(&expr.Context{}, gap)
	if err != nil {
		return f, b.errAt(err, int32(sf.Gap.Pos))
	}
	c, ok := folded.(*expr.Const)
	iv, isIv := types.IntervalValue{}, false
	if ok {
		iv, isIv = c.V.(types.IntervalValue)
	}
	if !isIv || iv.Months < 0 || iv.Days < 0 || iv.Micros < 0 || iv == (types.IntervalValue{}) {
		return f, b.newErr(pgerr.InvalidParameterValue, int32(sf.Gap.Pos), "the gap of SESSION WITH GAP must be a positive interval, not %s", sf.Gap.Text)
	}
	f.Gap = folded
	return f, nil
}
