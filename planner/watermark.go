package planner

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// A table's or source's WATERMARK FOR col AS expr [WITH (idle_timeout =
// ...)] is kept in the catalog as text (catalog.Watermark). It is bound at
// CREATE time, to refuse a bad one there (CheckWatermark), and again by the
// stream planner for every scan of the relation (stream.Scan.Watermark).

const inWatermark clause = "WATERMARK expressions"

// WatermarkPos locates a WATERMARK FOR clause in the statement text, for
// error positions: Source is the statement's text, ColumnPos and ExprPos the
// byte offsets of the column name and of the expression (sql.Watermark).
// The zero value means no positions.
type WatermarkPos struct {
	Source    string
	ColumnPos int
	ExprPos   int
}

// CheckWatermark binds rel's watermark clause over rel's columns (rel need
// not be in the catalog yet) and reports what is wrong with it: a missing
// column (42703), a column or expression that is not a timestamp or
// timestamptz of the column's type (42804), aggregates, subqueries, an
// unknown option or a bad idle_timeout (22023).
func CheckWatermark(env *Env, rel *catalog.Relation, pos WatermarkPos) (err error) {
	defer recoverTo(&err)
	_, err = bindWatermark(env, rel, pos)
	return err
}

// ScanWatermark binds rel's watermark clause for a stream scan; nil when
// rel has none.
func ScanWatermark(env *Env, rel *catalog.Relation) (w *stream.ScanWatermark, err error) {
	defer recoverTo(&err)
	return bindWatermark(env, rel, WatermarkPos{})
}

func bindWatermark(env *Env, rel *catalog.Relation, pos WatermarkPos) (*stream.ScanWatermark, error) {
	wm := rel.Watermark
	if wm == nil {
		return nil, nil
	}
	at := func(e *pgerr.Error, off int) *pgerr.Error {
		if pos.Source != "" && off > 0 {
			e = e.WithPosition(sql.CharPos(pos.Source, off))
		}
		return e
	}
	col := rel.ColumnIndex(wm.Column)
	if col < 0 {
		return nil, at(pgerr.New(pgerr.UndefinedColumn, `column "%s" does not exist`, wm.Column), pos.ColumnPos)
	}
	ct := rel.Columns[col].Type
	if ct.Kind != types.Timestamp && ct.Kind != types.TimestampTZ {
		return nil, at(pgerr.New(pgerr.DatatypeMismatch, `watermark column "%s" must be of type timestamp or timestamp with time zone, not %s`, wm.Column, ct), pos.ColumnPos)
	}
	idle, err := watermarkOptions(wm.Options)
	if err != nil {
		return nil, err
	}

	// Parse "SELECT expr" padded so that parse locations, counted in
	// characters, fall where the expression is in the user's statement.
	text := "SELECT " + wm.Expr
	b := newBinder(env)
	if pos.Source != "" && pos.ExprPos <= len(pos.Source) {
		if n := utf8.RuneCountInString(pos.Source[:pos.ExprPos]); n >= len("SELECT ") {
			text = strings.Repeat(" ", n-len("SELECT ")) + text
			b.src = text
		}
	}
	stmts, err := sql.Parse(text)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 || stmts[0].AST == nil || stmts[0].AST.GetSelectStmt() == nil ||
		len(stmts[0].AST.GetSelectStmt().TargetList) != 1 || len(stmts[0].AST.GetSelectStmt().FromClause) > 0 {
		return nil, at(pgerr.New(pgerr.SyntaxError, "a watermark is one expression over the columns of %s", rel.Name), pos.ExprPos)
	}
	n := stmts[0].AST.GetSelectStmt().TargetList[0].GetResTarget().Val

	l := &level{clause: inWatermark}
	it := &nsItem{alias: rel.Name, relVisible: true, colsVisible: true}
	lay := make([]int, len(rel.Columns))
	for i, c := range rel.Columns {
		id := b.newCol(c.Name, rel.Name, c.Type)
		lay[i] = id
		it.cols = append(it.cols, nsCol{name: c.Name, id: id})
	}
	l.ns = []*nsItem{it}
	e, err := b.expr(l, n)
	if err != nil {
		return nil, err
	}
	if hasSubquery(e) {
		return nil, b.newErr(pgerr.FeatureNotSupported, nodeLoc(n), "cannot use subquery in a watermark expression")
	}
	if e.Type().Kind == types.Unknown {
		if e, err = expr.Coerce(e, ct, false); err != nil {
			return nil, b.newErr(pgerr.DatatypeMismatch, nodeLoc(n), "watermark expression for column \"%s\" must be of type %s", wm.Column, ct)
		}
	}
	if et := e.Type(); et.Kind != ct.Kind {
		e := pgerr.New(pgerr.DatatypeMismatch, "watermark expression for column \"%s\" must be of type %s, not %s", wm.Column, ct, et).
			WithHint("Write the expression over the column, e.g. %s - INTERVAL '5' SECOND.", catalog.QuoteIdent(wm.Column))
		if p := b.pos(nodeLoc(n)); p > 0 {
			e = e.WithPosition(p)
		}
		return nil, e
	}
	uses := false
	walk(e, func(x expr.Expr) bool {
		if c, ok := x.(*expr.ColRef); ok && c.Idx == lay[col] {
			uses = true
		}
		return !uses
	})
	if !uses {
		return nil, b.newErr(pgerr.InvalidColumnReference, nodeLoc(n), "watermark expression for column \"%s\" does not refer to it", wm.Column)
	}
	pe, err := (&physical{b: b}).expr(e, lay)
	if err != nil {
		return nil, err
	}
	return &stream.ScanWatermark{Col: col, Expr: pe, IdleTimeout: idle}, nil
}

// watermarkOptions reads WITH (idle_timeout = '10s'): a Go duration
// ("10s", "1m30s") or a PostgreSQL interval ("10 seconds") without months.
func watermarkOptions(opts map[string]string) (time.Duration, error) {
	var idle time.Duration
	for k, v := range opts {
		if k != "idle_timeout" {
			return 0, pgerr.New(pgerr.InvalidParameterValue, "unrecognized watermark option \"%s\"", k).
				WithHint("The watermark option is idle_timeout.")
		}
		d, err := ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, pgerr.New(pgerr.InvalidParameterValue, "invalid value for idle_timeout: \"%s\"", v).
				WithHint("Give a positive duration such as '10s' or '1 minute'.")
		}
		idle = d
	}
	return idle, nil
}

// ParseDuration reads a duration written as a Go duration ("10s",
// "1m30s") or as a PostgreSQL interval without months ("10 seconds",
// "00:00:10").
func ParseDuration(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(strings.TrimSpace(s)); err == nil {
		return d, nil
	}
	v, err := types.ParseText(s, types.TInterval, nil)
	if err != nil {
		return 0, err
	}
	iv, ok := v.(types.IntervalValue)
	if !ok || iv.Months != 0 {
		return 0, pgerr.New(pgerr.InvalidParameterValue, "interval \"%s\" has months, which have no fixed length", s)
	}
	return time.Duration(int64(iv.Days)*86400e6+iv.Micros) * time.Microsecond, nil
}

// IntervalDuration evaluates an interval argument of a streaming statement
// (sql.Interval: "INTERVAL '10' SECOND", "'10 seconds'") to a duration;
// intervals with months (no fixed length) are refused (22023).
func IntervalDuration(env *Env, iv sql.Interval) (d time.Duration, err error) {
	defer recoverTo(&err)
	stmts, err := sql.Parse("SELECT (" + iv.Text + ")::interval")
	if err != nil {
		return 0, err
	}
	if len(stmts) != 1 || stmts[0].AST == nil || stmts[0].AST.GetSelectStmt() == nil || len(stmts[0].AST.GetSelectStmt().TargetList) != 1 {
		return 0, pgerr.New(pgerr.SyntaxError, "invalid interval %s", iv.Text)
	}
	b := newBinder(env)
	e, err := b.expr(&level{clause: inDefault}, stmts[0].AST.GetSelectStmt().TargetList[0].GetResTarget().Val)
	if err != nil {
		return 0, err
	}
	ctx := &expr.Context{}
	if env != nil && env.Eval != nil {
		ctx = env.Eval
	}
	if e, err = expr.Fold(ctx, e); err != nil {
		return 0, err
	}
	c, ok := e.(*expr.Const)
	if !ok {
		return 0, pgerr.New(pgerr.InvalidParameterValue, "interval %s is not a constant", iv.Text)
	}
	v, ok := c.V.(types.IntervalValue)
	if !ok {
		return 0, pgerr.New(pgerr.InvalidParameterValue, "interval %s is NULL", iv.Text)
	}
	if v.Months != 0 {
		return 0, pgerr.New(pgerr.InvalidParameterValue, "%s has months, which have no fixed length", iv.Text)
	}
	return time.Duration(int64(v.Days)*86400e6+v.Micros) * time.Microsecond, nil
}
