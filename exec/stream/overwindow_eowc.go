package stream

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// OverEOWC is EMIT ON WINDOW CLOSE for an OverWindow over an append-only
// input whose calls all order by TimeCol first (ascending), a column that
// carries the watermark. Let W be the input's watermark minus Delay: the
// rows of a partition with a time below W are final (no row can come
// before them). A row goes out once, as an insert, when W passes its time
// and every row its frames reach after it is final too: lead(x, k) and
// ROWS ... k FOLLOWING wait for k more final rows (OverReach), a SESSION
// WITH GAP frame for a final row that ends the row's session (as
// RisingWave's: the frame's end is known from rows, not from W). Then the
// rows no later row's frame reaches (lag(x, k), ROWS k PRECEDING: the k
// before) are freed; row_number, rank and dense_rank count the freed rows.
// A frame reaching back without bound (UNBOUNDED PRECEDING with an
// aggregate, first_value) frees nothing. A row whose time is NULL or below
// W when it arrives is late: Env.OnLate, dropped. The output watermark on
// TimeCol is W, held below the time of the oldest row not yet emitted.
type OverEOWC struct {
	TimeCol int
	Delay   int64 // µs, not negative
}

// String is the EXPLAIN text.
func (e *OverEOWC) String(in []types.Column) string {
	s := "emit on window close of " + in[e.TimeCol].Name
	if e.Delay > 0 {
		s += " delay " + time.Duration(e.Delay*1000).String()
	}
	return s
}

// Unbounded is OverReach's preceding reach of a frame without a start.
const Unbounded = int64(math.MaxInt64)

// OverReach returns how many rows before and after a row (in the call's
// order) the call reads under EMIT ON WINDOW CLOSE, or an error (0A000)
// when it cannot be emitted on window close: it needs the whole partition
// (ntile, percent_rank, cume_dist, UNBOUNDED FOLLOWING) or reads ahead by
// a range of values (RANGE/GROUPS ... FOLLOWING), or an offset is not a
// constant. Before is Unbounded for frames without a start.
func OverReach(c exec.WindowCall) (before, after int64, err error) {
	name := c.Fn.Name
	switch name {
	case "row_number", "rank", "dense_rank":
		return 0, 0, nil
	case "ntile", "percent_rank", "cume_dist":
		return 0, 0, pgerr.Unsupported("%s() with EMIT ON WINDOW CLOSE (it needs the whole partition)", name)
	case "lag", "lead":
		k := int64(1)
		if len(c.Args) > 1 {
			if k, err = constOffset(c.Args[1]); err != nil {
				return 0, 0, err
			}
		}
		if (name == "lag") == (k >= 0) {
			return max(k, -k), 0, nil
		}
		return 0, max(k, -k), nil
	}
	f := c.Frame
	if f.Mode == exec.FrameSession {
		// Its session reaches back no further than the session's first
		// row; forward, up to the first final row a gap or more after the
		// one before it (owEOWCRun.gaps).
		if _, err := sessionGap(c); err != nil {
			return 0, 0, err
		}
		return 0, 0, nil
	}
	switch f.Start.Kind {
	case exec.UnboundedPreceding:
		before = Unbounded
	case exec.Preceding:
		if f.Mode != exec.FrameRows {
			before = Unbounded // a range of values: no row bound
		} else if before, err = constOffset(f.Start.Offset); err != nil {
			return 0, 0, err
		}
	}
	switch f.End.Kind {
	case exec.UnboundedFollowing:
		return 0, 0, pgerr.Unsupported("a window frame ending at UNBOUNDED FOLLOWING with EMIT ON WINDOW CLOSE")
	case exec.Following:
		if f.Mode != exec.FrameRows {
			return 0, 0, pgerr.Unsupported("a RANGE or GROUPS frame ending FOLLOWING with EMIT ON WINDOW CLOSE")
		}
		if after, err = constOffset(f.End.Offset); err != nil {
			return 0, 0, err
		}
	}
	return before, after, nil
}

// sessionGap is the gap of a SESSION WITH GAP frame (a constant).
func sessionGap(c exec.WindowCall) (types.IntervalValue, error) {
	if c.Frame.Gap != nil {
		if f, err := expr.Fold(&expr.Context{}, c.Frame.Gap); err == nil {
			if k, ok := f.(*expr.Const); ok {
				if iv, ok := k.V.(types.IntervalValue); ok {
					return iv, nil
				}
			}
		}
	}
	return types.IntervalValue{}, pgerr.Unsupported("a SESSION WITH GAP frame whose gap is not a constant interval with EMIT ON WINDOW CLOSE")
}

// constOffset evaluates a constant offset.
func constOffset(e expr.Expr) (int64, error) {
	if e != nil {
		if f, err := expr.Fold(&expr.Context{}, e); err == nil {
			if c, ok := f.(*expr.Const); ok {
				switch v := c.V.(type) {
				case int64:
					return v, nil
				case int32:
					return int64(v), nil
				case int16:
					return int64(v), nil
				}
			}
		}
	}
	return 0, pgerr.Unsupported("a window function offset that is not a constant with EMIT ON WINDOW CLOSE")
}

// owEOWCPart is a partition's EOWC progress: rows[:done] are emitted, and
// freed rows (freedGroups distinct peer groups per call, for dense_rank)
// were dropped from the front.
type owEOWCPart struct {
	done        int
	freed       int64
	freedGroups []int64
}

// owEOWCRun is a running OverWindow's EOWC state.
type owEOWCRun struct {
	e      *OverEOWC
	r      *overRun
	wm     int64 // the effective watermark W (input's minus Delay)
	outWM  int64
	before []int64 // per group: the reach of its calls
	after  []int64
	// gaps, per group, are the gaps of its calls' SESSION WITH GAP
	// frames: a row is done only once its session is, when a final row
	// comes a gap or more after the session's last one (plan).
	gaps    [][]types.IntervalValue
	ranks   []byte // per call: 'r' row_number/rank, 'd' dense_rank, 0
	pending map[*owRow]int
	late    int64
}

func (e *OverEOWC) newRun(w *OverWindow, r *overRun) (*owEOWCRun, error) {
	in := w.Input.Columns()
	if e.TimeCol < 0 || e.TimeCol >= len(in) || e.Delay < 0 {
		return nil, fmt.Errorf("stream: over window eowc on column %d, delay %d", e.TimeCol, e.Delay)
	}
	if k := in[e.TimeCol].Type.Kind; k != types.Timestamp && k != types.TimestampTZ {
		return nil, fmt.Errorf("stream: over window eowc time column is %s", in[e.TimeCol].Type)
	}
	x := &owEOWCRun{e: e, r: r, wm: math.MinInt64, outWM: math.MinInt64, pending: map[*owRow]int{}}
	for _, c := range w.Calls {
		if len(c.OrderBy) == 0 || c.OrderBy[0].Desc {
			return nil, fmt.Errorf("stream: over window eowc call %s not ordered by its time", c.Fn.Name)
		}
		if ref, ok := c.OrderBy[0].E.(*expr.ColRef); !ok || ref.Idx != e.TimeCol {
			return nil, fmt.Errorf("stream: over window eowc call %s not ordered by its time", c.Fn.Name)
		}
		var kind byte
		switch c.Fn.Name {
		case "row_number", "rank":
			kind = 'r'
		case "dense_rank":
			kind = 'd'
		}
		x.ranks = append(x.ranks, kind)
	}
	for _, g := range r.groups {
		var b, a int64
		var gaps []types.IntervalValue
		for _, ci := range g.calls {
			cb, ca, err := OverReach(w.Calls[ci])
			if err != nil {
				return nil, err
			}
			b, a = max(b, cb), max(a, ca)
			if w.Calls[ci].Frame.Mode == exec.FrameSession {
				gap, err := sessionGap(w.Calls[ci])
				if err != nil {
					return nil, err
				}
				gaps = append(gaps, gap)
			}
		}
		x.before, x.after, x.gaps = append(x.before, b), append(x.after, a), append(x.gaps, gaps)
	}
	return x, nil
}

// timeOf is a row's time (ok false: NULL).
func (x *owEOWCRun) timeOf(row *owRow) int64 {
	return int64(row.vals[x.e.TimeCol].(types.TimestampValue))
}

// isLate reports whether a row of these values can no longer be placed.
func (x *owEOWCRun) isLate(vals []types.Value) bool {
	t, ok := vals[x.e.TimeCol].(types.TimestampValue)
	return !ok || int64(t) < x.wm
}

// insert places row in p by time (after rows of the same time).
func (x *owEOWCRun) insert(g *owGroup, p *owPart, row *owRow) {
	t := x.timeOf(row)
	k := sort.Search(len(p.rows), func(i int) bool { return x.timeOf(p.rows[i]) > t })
	p.rows = append(p.rows, nil)
	copy(p.rows[k+1:], p.rows[k:])
	p.rows[k] = row
	x.pending[row] = 0
	if p.eowc.freedGroups == nil {
		p.eowc.freedGroups = make([]int64, len(g.calls))
	}
}

// lateRows hands rows of rec to Env.OnLate.
func (x *owEOWCRun) lateRows(rec arrow.RecordBatch, rows []int) {
	x.late += int64(len(rows))
	if x.r.env.OnLate == nil {
		return
	}
	refs := make([]ref, len(rows))
	for k, i := range rows {
		refs[k] = ref{row: int32(i)}
	}
	arrs := make([]arrow.Array, len(x.r.in))
	for c, col := range x.r.in {
		arrs[c] = gather(col.Type, []arrow.RecordBatch{rec}, c, refs)
	}
	x.r.env.late(x.r.w, array.NewRecordBatch(types.ArrowSchema(x.r.in), arrs, int64(len(rows))))
}

// eowcHandle handles a watermark or a barrier (chunks go to consume).
func (r *overRun) eowcHandle(m Message) ([]Message, error) {
	x := r.eowc
	if m.Kind != KindWatermark {
		return []Message{m}, nil
	}
	if m.Watermark.Col != x.e.TimeCol {
		return nil, nil // other columns of rows still held may be older
	}
	wm := addSat(m.Watermark.Value, -x.e.Delay)
	if wm <= x.wm {
		return nil, nil
	}
	x.wm = wm
	var ready []*owRow
	oldest := wm
	for gi, g := range r.groups {
		var spans []owSpan
		var parts []*owPart
		for _, p := range g.parts {
			if sp, ok := x.plan(gi, p); ok {
				spans, parts = append(spans, sp), append(parts, p)
			}
		}
		if err := r.recompute(g, spans); err != nil {
			return nil, err
		}
		for k, p := range parts {
			ready = x.finish(gi, g, p, spans[k], ready)
		}
		for enc, p := range g.parts {
			if len(p.rows) == 0 && !x.counts(g) {
				r.ckPart(gi, p)
				delete(g.parts, enc)
			} else if len(p.rows) > 0 && p.eowc.done < len(p.rows) {
				oldest = min(oldest, x.timeOf(p.rows[p.eowc.done]))
			}
		}
	}
	for _, row := range r.dirty {
		row.dirty = false
	}
	clear(r.dirty)
	r.dirty = r.dirty[:0]
	var msgs []Message
	if len(ready) > 0 {
		// Emit in time order (then arrival).
		sort.Slice(ready, func(i, j int) bool {
			ti, tj := x.timeOf(ready[i]), x.timeOf(ready[j])
			return ti < tj || (ti == tj && ready[i].seq < ready[j].seq)
		})
		for _, row := range ready {
			r.dirty = append(r.dirty, row)
		}
		c, err := r.emitDirty()
		if err != nil {
			return nil, err
		}
		for _, row := range ready {
			row.out = nil // emitted once; nothing more is kept for it
		}
		if c != nil {
			msgs = append(msgs, ChunkMsg(c))
		}
	}
	if oldest > x.outWM {
		x.outWM = oldest
		msgs = append(msgs, WatermarkMsg(Watermark{Col: x.e.TimeCol, Value: oldest}))
	}
	return msgs, nil
}

// plan finds what the watermark completes in partition p of group gi:
// the rows (a prefix, whole peer groups of time) whose frames are final
// and are not emitted yet, as the span to compute (ok false: none).
func (x *owEOWCRun) plan(gi int, p *owPart) (owSpan, bool) {
	rows := p.rows
	final := sort.Search(len(rows), func(i int) bool { return x.timeOf(rows[i]) >= x.wm })
	end := int64(final) - x.after[gi]
	for _, gap := range x.gaps[gi] {
		end = min(end, int64(x.lastSession(rows[:final], gap)))
	}
	if end <= int64(p.eowc.done) {
		return owSpan{}, false
	}
	done := x.groupStart(rows, int(end)) // whole groups of one time only
	if int(end) == final {
		done = final
	}
	if done <= p.eowc.done {
		return owSpan{}, false
	}
	return owSpan{rows: rows[:final], from: p.eowc.done, to: done}, true
}

// finish takes the computed span of p: row_number, rank and dense_rank
// count the freed rows, rows done in every group are appended to ready,
// and the rows before the reach of the first row not done are freed.
func (x *owEOWCRun) finish(gi int, g *owGroup, p *owPart, sp owSpan, ready []*owRow) []*owRow {
	rows := p.rows
	x.r.ckPart(gi, p)
	for _, row := range rows[sp.from:sp.to] {
		x.r.ckRow(row)
		for _, ci := range g.calls {
			v, ok := row.res[ci].(int64)
			switch {
			case !ok:
			case x.ranks[ci] == 'r':
				row.res[ci] = v + p.eowc.freed
			case x.ranks[ci] == 'd':
				row.res[ci] = v + p.eowc.freedGroups[slot(g, ci)]
			}
		}
		if x.pending[row]++; x.pending[row] == len(x.r.groups) {
			delete(x.pending, row)
			ready = append(ready, row)
		}
	}
	done := sp.to
	p.eowc.done = done
	b := x.before[gi]
	if b == Unbounded {
		return ready
	}
	f := x.groupStart(rows, max(done-int(min(b, int64(done))), 0))
	if f == 0 {
		return ready
	}
	last := rows[f-1]
	for _, ci := range g.calls {
		if v, ok := last.res[ci].(int64); ok && x.ranks[ci] == 'd' {
			p.eowc.freedGroups[slot(g, ci)] = v
		}
	}
	p.eowc.freed += int64(f)
	for _, row := range rows[:f] {
		row.parts[gi] = nil // freed: no longer held by g
		x.r.ckRow(row)
	}
	clear(rows[:f])
	p.rows = append(rows[:0:0], rows[f:]...)
	p.eowc.done -= f
	return ready
}

// counts reports whether g has a call that counts freed rows (its
// partitions are kept, if empty, for the counts).
func (x *owEOWCRun) counts(g *owGroup) bool {
	for _, ci := range g.calls {
		if x.ranks[ci] != 0 {
			return true
		}
	}
	return false
}

// lastSession is the position of the first row of the last session of
// rows (all final) under a SESSION WITH GAP frame of that gap: the rows
// from there on wait for a final row a gap or more after them, which
// ends their session (a row later than the watermark may still join it).
func (x *owEOWCRun) lastSession(rows []*owRow, gap types.IntervalValue) int {
	k := len(rows) - 1
	for k > 0 && x.timeOf(rows[k]) < exec.AddInterval(x.timeOf(rows[k-1]), gap) {
		k--
	}
	return max(k, 0)
}

// groupStart moves position k back to the first row of its time.
func (x *owEOWCRun) groupStart(rows []*owRow, k int) int {
	if k <= 0 || k >= len(rows) {
		return k
	}
	t := x.timeOf(rows[k])
	for k > 0 && x.timeOf(rows[k-1]) == t {
		k--
	}
	return k
}

// slot is the position of call ci among g's calls.
func slot(g *owGroup, ci int) int {
	for k, c := range g.calls {
		if c == ci {
			return k
		}
	}
	return 0
}
