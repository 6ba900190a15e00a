package exec

import (
	"cmp"
	"math"
	"sort"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// framer computes each row's window frame [start, end) (sorted positions)
// within one partition [ps, pe).
type framer struct {
	wc     *windowCall
	f      Frame
	ps, pe int
	// GROUPS: peer group starts of the partition, and each position's group.
	groups []int
	group  []int32
	// RANGE with an offset: the order key's non-NULL run and value search.
	nnLo, nnHi int
	rng        *rangeKey
	startOff   int64
	endOff     int64
	// SESSION: each position's session [sessLo, sessHi) (sessions).
	sessLo, sessHi []int32
}

func (wc *windowCall) newFramer(ps, pe int) (*framer, error) {
	fr := &framer{wc: wc, f: wc.call.Frame, ps: ps, pe: pe}
	var err error
	if fr.startOff, err = frameOffset(wc.ctx, fr.f.Start, fr.f.Mode, "starting"); err != nil {
		return nil, err
	}
	if fr.endOff, err = frameOffset(wc.ctx, fr.f.End, fr.f.Mode, "ending"); err != nil {
		return nil, err
	}
	if fr.f.Mode == FrameGroups {
		fr.group = make([]int32, pe-ps)
		for p := ps; p < pe; p++ {
			if int(wc.peerLo[p]) == p {
				fr.groups = append(fr.groups, p)
			}
			fr.group[p-ps] = int32(len(fr.groups) - 1)
		}
		fr.groups = append(fr.groups, pe)
	}
	offsetRange := fr.f.Mode == FrameRange && (isOffset(fr.f.Start.Kind) || isOffset(fr.f.End.Kind))
	if offsetRange || fr.f.Mode == FrameSession {
		if len(wc.call.OrderBy) != 1 {
			return nil, pgerr.New(pgerr.WindowingError, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column")
		}
		k := wc.call.OrderBy[0]
		a := wc.order[0]
		fr.nnLo, fr.nnHi = ps, pe
		for fr.nnLo < pe && a.IsNull(fr.nnLo) {
			fr.nnLo++
		}
		for fr.nnHi > fr.nnLo && a.IsNull(fr.nnHi-1) {
			fr.nnHi--
		}
		var off [2]expr.Expr
		off[0], off[1] = fr.f.Start.Offset, fr.f.End.Offset
		if fr.f.Mode == FrameSession {
			off = [2]expr.Expr{nil, fr.f.Gap}
		}
		rk, err := newRangeKey(wc.ctx, a, k.E.Type(), k.Desc, off)
		if err != nil {
			return nil, err
		}
		fr.rng = rk
		if fr.f.Mode == FrameSession {
			fr.sessions()
		}
	}
	return fr, nil
}

// sessions splits the partition's non-NULL order values into sessions
// (FrameSession): a row at least the gap after the one before it starts
// a new one. sessLo and sessHi hold each position's session.
func (fr *framer) sessions() {
	fr.sessLo = make([]int32, fr.pe-fr.ps)
	fr.sessHi = make([]int32, fr.pe-fr.ps)
	set := func(lo, hi int) {
		for q := lo; q < hi; q++ {
			fr.sessLo[q-fr.ps], fr.sessHi[q-fr.ps] = int32(lo), int32(hi)
		}
	}
	lo := fr.nnLo
	for q := fr.nnLo + 1; q < fr.nnHi; q++ {
		if fr.rng.target(q-1, 1, false)(q) >= 0 { // value(q) >= value(q-1) + gap
			set(lo, q)
			lo = q
		}
	}
	if lo < fr.nnHi {
		set(lo, fr.nnHi)
	}
}

func isOffset(k BoundKind) bool { return k == Preceding || k == Following }

// frameOffset evaluates a ROWS/GROUPS offset (RANGE offsets are typed values
// handled by rangeKey) and checks its sign.
func frameOffset(ctx *Context, b FrameBound, mode FrameMode, which string) (int64, error) {
	if !isOffset(b.Kind) || mode == FrameRange || b.Offset == nil {
		return 0, nil
	}
	v, ok, err := constInt(ctx, b.Offset)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, pgerr.New("22004", "frame %s offset must not be null", which)
	}
	if v < 0 {
		return 0, pgerr.New("22013", "frame %s offset must not be negative", which)
	}
	return v, nil
}

// frame returns the frame of position p.
func (fr *framer) frame(p int) (int, int) {
	if fr.f.Mode == FrameSession {
		if p < fr.nnLo || p >= fr.nnHi { // a NULL order value: its peers, the NULLs
			return int(fr.wc.peerLo[p]), int(fr.wc.peerHi[p])
		}
		return int(fr.sessLo[p-fr.ps]), int(fr.sessHi[p-fr.ps])
	}
	s := fr.bound(p, fr.f.Start, fr.startOff, true)
	e := fr.bound(p, fr.f.End, fr.endOff, false)
	if e < s {
		e = s
	}
	return s, e
}

// excluded reports whether position q of p's frame is removed by EXCLUDE.
func (fr *framer) excluded(p, q int) bool {
	switch fr.f.Exclude {
	case ExcludeCurrentRow:
		return q == p
	case ExcludeGroup:
		return q >= int(fr.wc.peerLo[p]) && q < int(fr.wc.peerHi[p])
	case ExcludeTies:
		return q != p && q >= int(fr.wc.peerLo[p]) && q < int(fr.wc.peerHi[p])
	}
	return false
}

// bound returns a frame start (first position) or end (one past the last).
func (fr *framer) bound(p int, b FrameBound, off int64, start bool) int {
	ps, pe := fr.ps, fr.pe
	clamp := func(q int64) int { return int(max(int64(ps), min(int64(pe), q))) }
	switch b.Kind {
	case UnboundedPreceding:
		return ps
	case UnboundedFollowing:
		return pe
	}
	switch fr.f.Mode {
	case FrameRows:
		q := int64(p)
		switch b.Kind {
		case Preceding:
			q -= off
		case Following:
			q += off
		}
		if !start {
			q++
		}
		return clamp(q)
	case FrameGroups:
		g := int64(fr.group[p-ps])
		switch b.Kind {
		case Preceding:
			g -= off
		case Following:
			g += off
		}
		ng := int64(len(fr.groups) - 1)
		if start {
			if g < 0 {
				return ps
			}
			if g >= ng {
				return pe
			}
			return fr.groups[g]
		}
		if g < 0 {
			return ps
		}
		if g >= ng {
			return pe
		}
		return fr.groups[g+1]
	}
	// RANGE.
	if b.Kind == CurrentRow {
		if start {
			return int(fr.wc.peerLo[p])
		}
		return int(fr.wc.peerHi[p])
	}
	if fr.wc.order[0].IsNull(p) {
		// A NULL order value's offset frame is its peers (the NULLs).
		if start {
			return int(fr.wc.peerLo[p])
		}
		return int(fr.wc.peerHi[p])
	}
	which := 1
	if start {
		which = 0
	}
	lo, hi := fr.nnLo, fr.nnHi
	if in := fr.rng.inRange(p, which, b.Kind == Preceding, start); in != nil {
		if start {
			return lo + sort.Search(hi-lo, func(i int) bool { return in(lo + i) })
		}
		return lo + sort.Search(hi-lo, func(i int) bool { return !in(lo + i) })
	}
	c := fr.rng.target(p, which, b.Kind == Preceding)
	if start {
		return lo + sort.Search(hi-lo, func(i int) bool { return c(lo+i) >= 0 })
	}
	return lo + sort.Search(hi-lo, func(i int) bool { return c(lo+i) > 0 })
}

// rangeKey compares order values against "current value ± offset" for
// RANGE frames, in the sort's direction.
type rangeKey struct {
	a    arrow.Array
	t    types.T
	dir  int
	offI [2]int64
	offF [2]float64
	offD [2]*apd.Decimal
	offV [2]arrow.MonthDayNanoInterval
	ints []int64
	flts []float64
	decs []apd.Decimal
}

func newRangeKey(ctx *Context, a arrow.Array, t types.T, desc bool, offs [2]expr.Expr) (*rangeKey, error) {
	rk := &rangeKey{a: a, t: t, dir: 1}
	if desc {
		rk.dir = -1
	}
	one := oneRowBatch()
	datetime := t.Kind == types.Date || t.IsTimestamp() || t.Kind == types.Time
	for i, e := range offs {
		if e == nil {
			continue
		}
		a, err := eval(ctx, e, one)
		if err != nil {
			return nil, err
		}
		v := types.ValueAt(a, 0, e.Type())
		if v == nil {
			return nil, pgerr.New("22004", "frame %s offset must not be null", [2]string{"starting", "ending"}[i])
		}
		if s, ok := v.(string); ok {
			// An untyped literal takes the type the order key needs.
			want := types.TNumeric
			switch {
			case datetime:
				want = types.TInterval
			case t.IsFloat():
				want = types.TFloat8
			}
			if v, err = types.ParseText(s, want, nil); err != nil {
				return nil, err
			}
		}
		neg := false
		switch x := v.(type) {
		case int64:
			rk.offI[i], rk.offF[i], rk.offD[i] = x, float64(x), apd.New(x, 0)
			neg = x < 0
		case float64:
			rk.offF[i], rk.offI[i] = x, int64(x)
			neg = x < 0 || math.IsNaN(x)
		case *apd.Decimal:
			rk.offD[i] = x
			rk.offF[i], _ = x.Float64()
			i64, _ := x.Int64()
			rk.offI[i] = i64
			neg = x.Negative && !x.IsZero() || x.Form == apd.NaN
		case types.IntervalValue:
			rk.offV[i] = types.IntervalToArrow(x)
			neg = cmpInterval(rk.offV[i], arrow.MonthDayNanoInterval{}) < 0
		default:
			return nil, pgerr.Unsupported("RANGE offset of type %s", e.Type())
		}
		if neg {
			return nil, pgerr.New("22013", "invalid preceding or following size in window function")
		}
	}
	switch {
	case t.IsInteger():
		rk.ints, _ = int64Values(a)
	case t.IsFloat():
		rk.flts = make([]float64, a.Len())
		for i := range rk.flts {
			if f, ok := a.(*array.Float32); ok {
				rk.flts[i] = float64(f.Value(i))
			} else {
				rk.flts[i] = a.(*array.Float64).Value(i)
			}
		}
	case t.Kind == types.Numeric:
		s := a.(*array.String)
		rk.decs = make([]apd.Decimal, a.Len())
		for i := range rk.decs {
			if s.IsValid(i) && parseNumeric(s.Value(i), &rk.decs[i]) {
				rk.decs[i].Form = apd.NaN
			}
		}
	case t.Kind == types.Date, t.IsTimestamp(), t.Kind == types.Time:
		rk.ints, _ = int64Values(a)
		if t.Kind == types.Date {
			for i := range rk.ints {
				rk.ints[i] *= usecsPerDay
			}
		}
	default:
		return nil, pgerr.Unsupported("RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s", t)
	}
	return rk, nil
}

// target returns a function comparing position q's value with row p's
// value moved by offset which (0 start, 1 end): preceding moves against the
// sort direction. The result is negative when q comes before the target.
func (rk *rangeKey) target(p, which int, preceding bool) func(q int) int {
	sign := rk.dir
	if preceding {
		sign = -sign
	}
	switch {
	case rk.t.IsInteger():
		t := satAdd(rk.ints[p], int64(sign)*rk.offI[which])
		return func(q int) int { return rk.dir * cmp.Compare(rk.ints[q], t) }
	case rk.flts != nil:
		t := rk.flts[p] + float64(sign)*rk.offF[which]
		return func(q int) int { return rk.dir * cmpFloat(rk.flts[q], t) }
	case rk.decs != nil:
		var t apd.Decimal
		if sign > 0 {
			apd.BaseContext.Add(&t, &rk.decs[p], rk.offD[which])
		} else {
			apd.BaseContext.Sub(&t, &rk.decs[p], rk.offD[which])
		}
		return func(q int) int { return rk.dir * rk.decs[q].Cmp(&t) }
	}
	t := addInterval(rk.ints[p], rk.offV[which], sign)
	return func(q int) int { return rk.dir * cmp.Compare(rk.ints[q], t) }
}

func satAdd(a, b int64) int64 {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		if b > 0 {
			return 1<<63 - 1
		}
		return -1 << 63
	}
	return s
}

// AddInterval is timestamp us plus interval iv, as a RANGE or SESSION
// frame adds its offset (calendar months and days in UTC).
func AddInterval(us int64, iv types.IntervalValue) int64 {
	return addInterval(us, types.IntervalToArrow(iv), 1)
}

// addInterval adds sign*iv to a timestamp in microseconds as PostgreSQL's
// timestamp_pl_interval does: months first (the day clamped to the end of
// the month), then days, then the time part.
func addInterval(us int64, iv arrow.MonthDayNanoInterval, sign int) int64 {
	if iv.Months != 0 || iv.Days != 0 {
		t := time.UnixMicro(us).UTC()
		if iv.Months != 0 {
			y, m, d := t.Date()
			mm := int(m) - 1 + sign*int(iv.Months)
			y += floorDiv(mm, 12)
			mm -= floorDiv(mm, 12) * 12
			last := time.Date(y, time.Month(mm+2), 0, 0, 0, 0, 0, time.UTC).Day()
			d = min(d, last)
			h, mi, sec := t.Clock()
			t = time.Date(y, time.Month(mm+1), d, h, mi, sec, t.Nanosecond(), time.UTC)
		}
		t = t.AddDate(0, 0, sign*int(iv.Days))
		us = t.UnixMicro()
	}
	return us + int64(sign)*iv.Nanoseconds // the field holds µs (types.IntervalToArrow)
}
