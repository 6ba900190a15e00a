package stream

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// IntervalJoin makes a HashJoin (inner, left, right or full; both inputs
// append only; Cond set) an interval join: Cond implies
//
//	Lo <= left[LeftTime] - right[RightTime] <= Hi   (µs)
//
// (HasLo, HasHi: which bounds exist; at least one). LeftTime and
// RightTime are timestamp columns of the inputs that carry their
// watermarks, wL and wR. Then:
//
//   - with HasLo, a left row whose time is below wR + Lo can match no
//     later right row: it is freed (its output, joined or NULL-padded, is
//     final); with HasHi, a right row below wL - Hi likewise;
//   - a left row whose time is below wL is late when right rows are freed
//     (HasHi): partners it would have had may be gone; likewise a right row
//     below wR when left rows are freed (HasLo). Late rows go to
//     Env.OnLate and are dropped, so the output is the plain join of the
//     rows that are not late;
//   - the output carries watermarks on the time columns that bound later
//     output: the left time column min(wL, wR + Lo) with HasLo, the right
//     one min(wR, wL - Hi) with HasHi, each only where its side is never
//     NULL-padded. Other watermarks are dropped.
//
// A row whose time is NULL matches nothing and is not held, nor is a row
// whose range the other side's watermark has already closed (it joins the
// rows held when it comes). Cond stays the whole condition: the bounds only
// decide what is freed, so wider (conservative) bounds are always correct.
// (The pairs are filtered by HashJoin.Compares, which hold the bounds'
// comparisons when they are exact, and Residual.)
type IntervalJoin struct {
	LeftTime, RightTime int
	Lo, Hi              int64
	HasLo, HasHi        bool
}

// describe renders the interval for EXPLAIN.
func (iv *IntervalJoin) describe(j *HashJoin) string {
	ln, rn := j.Left.Columns()[iv.LeftTime].Name, j.Right.Columns()[iv.RightTime].Name
	d := func(us int64) string { return time.Duration(us * 1000).String() }
	s := "interval join: " + ln + " - " + rn
	switch {
	case iv.HasLo && iv.HasHi:
		s += " between " + d(iv.Lo) + " and " + d(iv.Hi)
	case iv.HasLo:
		s += " >= " + d(iv.Lo)
	default:
		s += " <= " + d(iv.Hi)
	}
	var frees []string
	if iv.HasLo {
		frees = append(frees, "left rows below the right watermark"+signed(d(iv.Lo), iv.Lo))
	}
	if iv.HasHi {
		frees = append(frees, "right rows below the left watermark"+signed(d(-iv.Hi), -iv.Hi))
	}
	s += "; frees " + frees[0]
	if len(frees) > 1 {
		s += ", " + frees[1]
	}
	return s
}

// signed renders " + d", " - d" or nothing for v = 0.
func signed(d string, v int64) string {
	switch {
	case v < 0:
		return " - " + d[1:]
	case v > 0:
		return " + " + d
	}
	return ""
}

// intervalRun is the running IntervalJoin of a joinRun, owned by the
// join's goroutine: each side's watermark and, for the sides that are
// freed, their held entries by time.
type intervalRun struct {
	spec    *IntervalJoin
	timeCol [2]int
	mark    [2]int64 // per input, the watermark of its time column (MinInt64: none yet)
	frees   [2]bool  // the side's rows are freed by the other side's watermark
	late    [2]bool  // the side's rows can be late (the other side is freed)
	q       [2]timeQueue
	outCol  [2]int   // output columns carrying watermarks, -1 for none
	sent    [2]int64 // last output watermark sent per outCol
	cur     *array.Timestamp
	lateN   int64 // rows dropped as late (tests)
	scratch []timeItem
}

func newIntervalRun(j *HashJoin) (*intervalRun, error) {
	iv := j.Interval
	if j.Clean != nil {
		return nil, fmt.Errorf("stream: a hash join is not both a window join and an interval join")
	}
	if j.Kind != exec.InnerJoin && j.Kind != exec.LeftJoin && j.Kind != exec.RightJoin && j.Kind != exec.FullJoin {
		return nil, fmt.Errorf("stream: an interval join is inner or outer, not %s", joinKindNames[j.Kind])
	}
	if j.Cond == nil || !iv.HasLo && !iv.HasHi || iv.HasLo && iv.HasHi && iv.Lo > iv.Hi {
		return nil, fmt.Errorf("stream: interval join without a condition or bounds")
	}
	lc, rc := j.Left.Columns(), j.Right.Columns()
	isTime := func(cols []types.Column, c int) bool {
		return c >= 0 && c < len(cols) && (cols[c].Type.Kind == types.Timestamp || cols[c].Type.Kind == types.TimestampTZ)
	}
	if !isTime(lc, iv.LeftTime) || !isTime(rc, iv.RightTime) {
		return nil, fmt.Errorf("stream: interval join times (columns %d, %d) are not timestamp columns", iv.LeftTime, iv.RightTime)
	}
	r := &intervalRun{spec: iv, timeCol: [2]int{iv.LeftTime, iv.RightTime},
		mark:   [2]int64{math.MinInt64, math.MinInt64},
		frees:  [2]bool{iv.HasLo, iv.HasHi},
		late:   [2]bool{iv.HasHi, iv.HasLo},
		outCol: [2]int{-1, -1},
		sent:   [2]int64{math.MinInt64, math.MinInt64}}
	for _, c := range j.IntervalMarkCols() {
		if c < len(lc) {
			r.outCol[0] = c
		} else {
			r.outCol[1] = c
		}
	}
	return r, nil
}

// dropLate checks chunk c of side s: it refuses retractions, hands the late
// rows to Env.OnLate (as the join by's) and returns the chunk of the others
// (nil if none; a new chunk, owned is true, when rows were dropped). It then
// points cur at the returned chunk's time column.
func (v *intervalRun) dropLate(env *Env, by Node, s int, cols []types.Column, c *Chunk) (out *Chunk, owned bool, err error) {
	for _, op := range c.Ops {
		if op.Sign() < 0 {
			return nil, false, pgerr.Internal("stream: interval join input retracts a row (its inputs must be append only)")
		}
	}
	ts, ok := c.Rec.Column(v.timeCol[s]).(*array.Timestamp)
	if !ok {
		return nil, false, pgerr.Internal("stream: interval join time column is %s", c.Rec.Column(v.timeCol[s]).DataType())
	}
	v.cur = ts
	w := v.mark[s]
	if !v.late[s] || w == math.MinInt64 {
		return c, false, nil
	}
	n := c.Len()
	var keep, late []ref
	for i := 0; i < n; i++ {
		if ts.IsValid(i) && int64(ts.Value(i)) < w {
			if late == nil {
				keep = make([]ref, 0, n)
				for k := 0; k < i; k++ {
					keep = append(keep, ref{0, int32(k)})
				}
			}
			late = append(late, ref{0, int32(i)})
		} else if late != nil {
			keep = append(keep, ref{0, int32(i)})
		}
	}
	if late == nil {
		return c, false, nil
	}
	v.lateN += int64(len(late))
	recs := []arrow.RecordBatch{c.Rec}
	take := func(refs []ref) arrow.RecordBatch {
		arrs := make([]arrow.Array, len(cols))
		for k, col := range cols {
			arrs[k] = gather(col.Type, recs, k, refs)
		}
		rec := array.NewRecordBatch(c.Rec.Schema(), arrs, int64(len(refs)))
		releaseAll(arrs)
		return rec
	}
	if env.OnLate != nil {
		env.late(by, take(late))
	}
	if len(keep) == 0 {
		v.cur = nil
		return nil, false, nil
	}
	out = &Chunk{Rec: take(keep)}
	if c.Ops != nil {
		out.Ops = make([]Op, len(keep))
		for k, rf := range keep {
			out.Ops[k] = c.Ops[rf.row]
		}
	}
	v.cur = out.Rec.Column(v.timeCol[s]).(*array.Timestamp)
	return out, true, nil
}

// keep reports whether row i of the chunk being consumed, of side s, is
// to be held for later rows of the other side: not when its time is NULL
// (it matches nothing) nor when the other side's watermark already closed
// its range (it is joined with the rows held now, then dropped).
func (v *intervalRun) keep(s, i int) bool {
	if !v.cur.IsValid(i) {
		return false
	}
	return !v.frees[s] || int64(v.cur.Value(i)) >= v.freeLimit(s)
}

// freeLimit is the time below which side s's rows can match no later row
// of the other side (MinInt64 before its first watermark).
func (v *intervalRun) freeLimit(s int) int64 {
	w := v.mark[1-s]
	if w == math.MinInt64 {
		return w
	}
	if s == 0 {
		return addSat(w, v.spec.Lo) // left rows: below wR + Lo
	}
	return addSat(w, -v.spec.Hi) // right rows: below wL - Hi
}

// added records entry e, row i of the chunk being consumed, of side s.
func (v *intervalRun) added(s int, e int32, i int) {
	if !v.frees[s] {
		return
	}
	v.q[s].push(int64(v.cur.Value(i)), e)
}

// onMark takes a watermark of input s (or its end): a risen watermark on
// its time column frees the other side's rows it closes and may raise the
// output watermarks. False means stop.
func (v *intervalRun) onMark(r *joinRun, s int, w Watermark) bool {
	if w.Col != v.timeCol[s] && w.Col != inputEnded || w.Value <= v.mark[s] {
		return true
	}
	v.mark[s] = w.Value
	if o := 1 - s; v.frees[o] {
		v.free(r, o, v.freeLimit(o))
	}
	return v.sendMarks(r)
}

// free drops side s's rows whose time is below limit.
func (v *intervalRun) free(r *joinRun, s int, limit int64) {
	sd := r.sides[s]
	v.q[s].popBelow(limit, func(e int32) {
		if e < 0 || e >= sd.entries.len() || sd.entries.at(e).count == 0 {
			return
		}
		g := sd.entries.at(e).group
		sd.dropEntry(&r.keys.groups, s, e)
		r.keys.freeIfEmpty(g)
	})
}

// sendMarks sends the output watermarks that rose.
func (v *intervalRun) sendMarks(r *joinRun) bool {
	wl, wr := v.mark[0], v.mark[1]
	if wl == math.MinInt64 || wr == math.MinInt64 {
		return true
	}
	for s, col := range v.outCol {
		if col < 0 {
			continue
		}
		m := min(wl, addSat(wr, v.spec.Lo))
		if s == 1 {
			m = min(wr, addSat(wl, -v.spec.Hi))
		}
		if m <= v.sent[s] || m == math.MaxInt64 {
			continue
		}
		v.sent[s] = m
		if !send(r.env, r.out, WatermarkMsg(Watermark{Col: col, Value: m})) {
			return false
		}
	}
	return true
}

// candidates appends to (pl, pe) the pairs of row i of the chunk being
// consumed (of side 1-o) with the held rows of side o whose time is in its
// range: for a keyless interval join, instead of every held row. Side o
// must be freed (v.frees[o]): its time queue holds exactly its held rows.
// The range is a superset of the matches; Cond decides.
func (v *intervalRun) candidates(sd *joinSide, o, i int, pl, pe []int32) ([]int32, []int32) {
	if !v.cur.IsValid(i) {
		return pl, pe
	}
	t := int64(v.cur.Value(i))
	from, to := int64(math.MinInt64), int64(math.MaxInt64)
	iv := v.spec
	if o == 1 { // right rows for a left row: t - hi <= r <= t - lo
		if iv.HasHi {
			from = addSat(t, -iv.Hi)
		}
		if iv.HasLo {
			to = addSat(t, -iv.Lo)
		}
	} else { // left rows for a right row: t + lo <= l <= t + hi
		if iv.HasLo {
			from = addSat(t, iv.Lo)
		}
		if iv.HasHi {
			to = addSat(t, iv.Hi)
		}
	}
	q := &v.q[o]
	live := q.fifo[q.head:]
	lo, hi := 0, len(live)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if live[m].t < from {
			lo = m + 1
		} else {
			hi = m
		}
	}
	end := lo
	for end < len(live) && live[end].t <= to {
		end++
	}
	hs := v.scratch[:0]
	for _, it := range q.heap {
		if it.t >= from && it.t <= to {
			hs = append(hs, it)
		}
	}
	v.scratch = hs
	if len(hs) == 0 {
		for k := lo; k < end; k++ {
			pl, pe = append(pl, int32(i)), append(pe, live[k].e)
		}
		return pl, pe
	}
	// The candidates in (time, seq) order, whichever of the FIFO (in that
	// order already) and the heap holds them, so that the output does not
	// depend on the queue's history (a restored queue splits differently).
	less := func(a, b timeItem) bool {
		return a.t < b.t || a.t == b.t && *sd.seqs.at(a.e)&^ckDirtyBit < *sd.seqs.at(b.e)&^ckDirtyBit
	}
	slices.SortFunc(hs, func(a, b timeItem) int {
		if less(a, b) {
			return -1
		}
		return 1
	})
	k, h := lo, 0
	for k < end || h < len(hs) {
		if h == len(hs) || k < end && less(live[k], hs[h]) {
			pl, pe = append(pl, int32(i)), append(pe, live[k].e)
			k++
		} else {
			pl, pe = append(pl, int32(i)), append(pe, hs[h].e)
			h++
		}
	}
	return pl, pe
}

// remap follows a compaction of side s's entries.
func (v *intervalRun) remap(s int, renum []int32) {
	v.q[s].remap(renum)
}

// dropEntry forgets held entry e (outside a chunk), unlinking it from its
// group (and the identity index, if any).
func (sd *joinSide) dropEntry(groups *paged[joinGroup], side int, e int32) {
	en := sd.entries.at(e)
	groups.at(en.group).rows[side] -= int64(en.count)
	sd.unlink(groups, side, e)
	sd.free(e)
}

// timeQueue holds entries by time: those pushed in time order in a FIFO
// (the common case: inputs arrive roughly in time order), the others in a
// min-heap.
type timeQueue struct {
	fifo []timeItem
	head int
	heap []timeItem
}

type timeItem struct {
	t int64
	e int32
}

func (q *timeQueue) push(t int64, e int32) {
	if q.head == len(q.fifo) {
		q.fifo, q.head = q.fifo[:0], 0
	}
	if n := len(q.fifo); n == 0 || q.fifo[n-1].t <= t {
		q.fifo = append(q.fifo, timeItem{t, e})
		return
	}
	q.heap = append(q.heap, timeItem{t, e})
	for i := len(q.heap) - 1; i > 0; {
		p := (i - 1) / 2
		if q.heap[p].t <= q.heap[i].t {
			break
		}
		q.heap[p], q.heap[i] = q.heap[i], q.heap[p]
		i = p
	}
}

// popBelow calls fn, in time order, for every entry whose time is below limit, removing it.
func (q *timeQueue) popBelow(limit int64, fn func(e int32)) {
	for {
		fromFifo := q.head < len(q.fifo) && q.fifo[q.head].t < limit
		fromHeap := len(q.heap) > 0 && q.heap[0].t < limit
		switch {
		case fromFifo && (!fromHeap || q.fifo[q.head].t <= q.heap[0].t):
			fn(q.fifo[q.head].e)
			q.head++
		case fromHeap:
			fn(q.heap[0].e)
			q.popHeap()
		default:
			if q.head > 1024 && q.head*2 > len(q.fifo) {
				live := q.fifo[q.head:]
				if cap(q.fifo) > 4*len(live) && cap(q.fifo) > 1<<16 {
					q.fifo = append(make([]timeItem, 0, 2*len(live)), live...) // shrink after a burst
				} else {
					q.fifo = q.fifo[:copy(q.fifo, live)]
				}
				q.head = 0
			}
			return
		}
	}
}

func (q *timeQueue) popHeap() {
	n := len(q.heap) - 1
	q.heap[0] = q.heap[n]
	q.heap = q.heap[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && q.heap[l].t < q.heap[m].t {
			m = l
		}
		if l+1 < n && q.heap[l+1].t < q.heap[m].t {
			m = l + 1
		}
		if m == i {
			return
		}
		q.heap[i], q.heap[m] = q.heap[m], q.heap[i]
		i = m
	}
}

func (q *timeQueue) remap(renum []int32) {
	for i := q.head; i < len(q.fifo); i++ {
		q.fifo[i].e = renum[q.fifo[i].e]
	}
	for i := range q.heap {
		q.heap[i].e = renum[q.heap[i].e]
	}
}

func (q *timeQueue) len() int { return len(q.fifo) - q.head + len(q.heap) }

// IntervalMarkCols returns the output columns on which an interval join
// forwards watermarks (see IntervalJoin); nil without Interval.
func (j *HashJoin) IntervalMarkCols() []int {
	iv := j.Interval
	if iv == nil {
		return nil
	}
	var out []int
	if iv.HasLo && (j.Kind == exec.InnerJoin || j.Kind == exec.LeftJoin) {
		out = append(out, iv.LeftTime)
	}
	if iv.HasHi && (j.Kind == exec.InnerJoin || j.Kind == exec.RightJoin) {
		out = append(out, len(j.Left.Columns())+iv.RightTime)
	}
	return out
}
