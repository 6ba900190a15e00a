package planner

import (
	"slices"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// Interval joins (docs/windows.md): an inner or outer join of two
// append-only inputs whose condition bounds one side's time by the
// other's, e.g.
//
//	a.ts BETWEEN b.ts - INTERVAL '10' SECOND AND b.ts
//	a.ts >= b.ts AND a.ts < b.ts + INTERVAL '1' MINUTE
//
// where a.ts and b.ts carry their inputs' watermarks, becomes a HashJoin
// with an IntervalJoin: the conjuncts of the residual condition of the
// form `l + c1 op r + c2` (op one of < <= > >=, l and r timestamp columns
// of the same type from either side, c1 and c2 constant intervals without
// months, either absent) give bounds on l - r, and the pair of columns with
// watermarks and the most bounds is chosen. A day of a timestamptz
// interval counts as 23 to 25 hours (DST), which only widens the bounds.
// The condition itself is kept: the bounds decide what state is freed. The
// pairs are filtered by comparing the times where the offsets are exact
// (pairCompares), and by evaluating what is left of the condition.

// joinStateCleaning sets j's window-join (Clean) or interval-join
// (Interval) cleaning where its inputs allow it.
func (s *streamPlanner) joinStateCleaning(j *stream.HashJoin, l, r sout) {
	if j.Clean = s.windowJoinClean(j, l, r); j.Clean == nil {
		j.Interval = s.intervalJoin(j, l, r)
	}
}

// intervalJoin recognises an interval join; nil when j is not one.
func (s *streamPlanner) intervalJoin(j *stream.HashJoin, l, r sout) *stream.IntervalJoin {
	switch j.Kind {
	case exec.InnerJoin, exec.LeftJoin, exec.RightJoin, exec.FullJoin:
	default:
		return nil
	}
	if !l.appendOnly || !r.appendOnly || j.Cond == nil {
		return nil
	}
	nl := len(j.Left.Columns())
	lw, rw := s.watermarkCols(j.Left), s.watermarkCols(j.Right)
	type pair struct{ l, r int }
	bounds := map[pair]*stream.IntervalJoin{}
	var order []pair
	for _, c := range conjuncts(j.Cond, nil) {
		call, ok := c.(*expr.Call)
		if !ok || call.Fn == nil || len(call.Args) != 2 {
			continue
		}
		op := call.Fn.Name
		if op != "<" && op != "<=" && op != ">" && op != ">=" {
			continue
		}
		a, ok1 := linearTime(call.Args[0])
		b, ok2 := linearTime(call.Args[1])
		if !ok1 || !ok2 || a.kind != b.kind {
			continue
		}
		if a.col >= nl {
			a, b = b, a
			op = mirrored[op]
		}
		if a.col >= nl || b.col < nl {
			continue
		}
		p := pair{a.col, b.col - nl}
		iv := bounds[p]
		if iv == nil {
			iv = &stream.IntervalJoin{LeftTime: p.l, RightTime: p.r}
			bounds[p] = iv
			order = append(order, p)
		}
		// l + A op r + B: l - r op B - A, A in [a.min, a.max], B in [b.min, b.max].
		if op == ">" || op == ">=" {
			if lo := b.min - a.max; !iv.HasLo || lo > iv.Lo {
				iv.Lo, iv.HasLo = lo, true
			}
		} else {
			if hi := b.max - a.min; !iv.HasHi || hi < iv.Hi {
				iv.Hi, iv.HasHi = hi, true
			}
		}
	}
	var best *stream.IntervalJoin
	for _, p := range order {
		iv := bounds[p]
		if !slices.Contains(lw, p.l) || !slices.Contains(rw, p.r) || iv.HasLo && iv.HasHi && iv.Lo > iv.Hi {
			continue
		}
		if best == nil || iv.HasLo && iv.HasHi && !(best.HasLo && best.HasHi) {
			best = iv
		}
	}
	return best
}

// timeTerm is a timestamp column plus a constant offset known to lie in
// [min, max] µs.
type timeTerm struct {
	col      int
	kind     types.Kind
	min, max int64
}

// linearTime reads col, col + c, c + col or col - c (nested), for a
// timestamp or timestamptz column and constant intervals c.
func linearTime(e expr.Expr) (timeTerm, bool) {
	switch x := e.(type) {
	case *expr.ColRef:
		if k := x.T.Kind; k == types.Timestamp || k == types.TimestampTZ {
			return timeTerm{col: x.Idx, kind: k}, true
		}
	case *expr.Call:
		if x.Fn == nil || len(x.Args) != 2 || x.Fn.Name != "+" && x.Fn.Name != "-" {
			break
		}
		t, ok := linearTime(x.Args[0])
		c := x.Args[1]
		if !ok && x.Fn.Name == "+" {
			t, ok = linearTime(x.Args[1])
			c = x.Args[0]
		}
		if !ok {
			break
		}
		lo, hi, ok := intervalBounds(c, t.kind == types.TimestampTZ)
		if !ok {
			break
		}
		if x.Fn.Name == "+" {
			t.min, t.max = t.min+lo, t.max+hi
		} else {
			t.min, t.max = t.min-hi, t.max-lo
		}
		if t.min < -maxIntervalOffset || t.max > maxIntervalOffset {
			break
		}
		return t, true
	}
	return timeTerm{}, false
}

// maxIntervalOffset bounds the offsets recognised (about 100 years), far
// from overflowing.
const maxIntervalOffset = 100 * 366 * 86400e6

// intervalBounds evaluates a constant interval without months to µs, as
// [lo, hi]: a day is 24 hours, or 23 to 25 for timestamptz (DST).
func intervalBounds(e expr.Expr, tz bool) (lo, hi int64, ok bool) {
	if len(refsOf(e)) > 0 || e.Type().Kind != types.Interval {
		return 0, 0, false
	}
	if _, isConst := e.(*expr.Const); !isConst {
		var err error
		if e, err = expr.Fold(&expr.Context{}, e); err != nil {
			return 0, 0, false
		}
	}
	c, isConst := e.(*expr.Const)
	if !isConst {
		return 0, 0, false
	}
	iv, isIv := c.V.(types.IntervalValue)
	if !isIv || iv.Months != 0 || iv.Days > 40000 || iv.Days < -40000 || iv.Micros > maxIntervalOffset || iv.Micros < -maxIntervalOffset {
		return 0, 0, false
	}
	us := int64(iv.Days)*86400e6 + iv.Micros
	var w int64
	if tz {
		w = int64(iv.Days) * 3600e6
		if w < 0 {
			w = -w
		}
	}
	return us - w, us + w, true
}
