package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// frame binds a window's frame clause over its ORDER BY keys, with
// PostgreSQL's parse-time checks: GROUPS needs an ORDER BY; RANGE with an offset needs exactly one
// ORDER BY column of a type with an in_range support function and an
// offset of a type that function takes; no frame offset refers to the
// query's columns.
func (b *binder) frame(l *level, wd *pg.WindowDef, order []exec.SortKey) (exec.Frame, error) {
	opts := wd.FrameOptions
	if sf, ok := b.sessionFrameOf(wd); ok {
		return b.sessionFrame(l, wd, sf, order) // window_session.go
	}
	if opts&frameNonDefault == 0 {
		if len(order) == 0 {
			return exec.Frame{Mode: exec.FrameRange, Start: exec.FrameBound{Kind: exec.UnboundedPreceding}, End: exec.FrameBound{Kind: exec.UnboundedFollowing}}, nil
		}
		return exec.Frame{Mode: exec.FrameRange, Start: exec.FrameBound{Kind: exec.UnboundedPreceding}, End: exec.FrameBound{Kind: exec.CurrentRow}}, nil
	}
	f := exec.Frame{Mode: exec.FrameRange}
	switch {
	case opts&frameExcludeCurrent != 0:
		f.Exclude = exec.ExcludeCurrentRow
	case opts&frameExcludeGroup != 0:
		f.Exclude = exec.ExcludeGroup
	case opts&frameExcludeTies != 0:
		f.Exclude = exec.ExcludeTies
	}
	construct := "RANGE"
	switch {
	case opts&frameRows != 0:
		f.Mode, construct = exec.FrameRows, "ROWS"
	case opts&frameGroups != 0:
		f.Mode, construct = exec.FrameGroups, "GROUPS"
	}
	if f.Mode == exec.FrameGroups && len(order) == 0 {
		return f, b.newErr(pgerr.WindowingError, wd.Location, "GROUPS mode requires an ORDER BY clause")
	}
	offsets := frameStartOffPrec | frameStartOffFoll | frameEndOffPrec | frameEndOffFoll
	if f.Mode == exec.FrameRange && opts&int32(offsets) != 0 && len(order) != 1 {
		return f, b.newErr(pgerr.WindowingError, wd.Location, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column")
	}
	bound := func(unbPrec, unbFoll, cur, offPrec, offFoll int32, off *pg.Node) (exec.FrameBound, error) {
		switch {
		case opts&unbPrec != 0:
			return exec.FrameBound{Kind: exec.UnboundedPreceding}, nil
		case opts&unbFoll != 0:
			return exec.FrameBound{Kind: exec.UnboundedFollowing}, nil
		case opts&cur != 0:
			return exec.FrameBound{Kind: exec.CurrentRow}, nil
		}
		kind := exec.Preceding
		if opts&offFoll != 0 {
			kind = exec.Following
		}
		saved := l.clause
		l.clause = inWindow
		e, err := b.expr(l, off)
		l.clause = saved
		if err != nil {
			return exec.FrameBound{}, err
		}
		if f.Mode != exec.FrameRange && e.Type().Kind != types.Int8 {
			c, err := expr.Coerce(e, types.TInt8, true) // an assignment cast, as coerce_to_specific_type
			if err != nil {
				return exec.FrameBound{}, b.newErr(pgerr.DatatypeMismatch, exprLocation(off), "argument of %s must be type bigint, not type %s", construct, e.Type())
			}
			e = c
		}
		if f.Mode == exec.FrameRange {
			if err := rangeOffsetType(order[0].E.Type(), e.Type()); err != nil {
				return exec.FrameBound{}, b.errAt(err, exprLocation(off))
			}
		}
		if len(refsOf(e)) > 0 {
			return exec.FrameBound{}, b.newErr(pgerr.InvalidColumnReference, nodeLoc(off), "argument of %s must not contain variables", construct)
		}
		return exec.FrameBound{Kind: kind, Offset: e}, nil
	}
	var err error
	if f.Start, err = bound(frameStartUnbPrec, frameStartUnbFoll, frameStartCurrent, frameStartOffPrec, frameStartOffFoll, wd.StartOffset); err != nil {
		return f, err
	}
	if f.End, err = bound(frameEndUnbPrec, frameEndUnbFoll, frameEndCurrent, frameEndOffPrec, frameEndOffFoll, wd.EndOffset); err != nil {
		return f, err
	}
	return f, nil
}

// rangeOffsetType checks a RANGE offset's type against the ORDER BY key's
// as PostgreSQL's in_range support functions do: integers take integer
// offsets, floats any number, numeric integers and numeric, dates, times
// and timestamps (and intervals) an interval; an untyped literal fits all.
func rangeOffsetType(key, off types.T) error {
	if key.Kind != types.Array { // PostgreSQL names the types without modifiers
		key.Typmod = -1
	}
	if off.Kind != types.Array {
		off.Typmod = -1
	}
	var ok bool
	switch k := off.Kind; {
	case k == types.Unknown:
		ok = true
	case key.IsInteger():
		ok = off.IsInteger()
	case key.IsFloat():
		ok = off.IsNumeric()
	case key.Kind == types.Numeric:
		ok = off.IsInteger() || k == types.Numeric
	case key.Kind == types.Date, key.Kind == types.Time, key.IsTimestamp(), key.Kind == types.Interval:
		ok = k == types.Interval
	default:
		name := key.String()
		switch key.Kind {
		case types.Text, types.Varchar: // both sort with text's operator class
			name = "text"
		case types.Bpchar:
			name = "character"
		}
		return pgerr.New(pgerr.FeatureNotSupported, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s", name)
	}
	if ok {
		return nil
	}
	return pgerr.New(pgerr.FeatureNotSupported, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s and offset type %s", key, off).
		WithHint("Cast the offset value to an appropriate type.")
}
