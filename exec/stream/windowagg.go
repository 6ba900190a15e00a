package stream

import (
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// The running WindowAgg. One goroutine owns everything here.
//
// State is kept per group, a group being (key, t): key is the id of a
// GROUP BY value (one id 0 without GROUP BY) and t a pane's start (TUMBLE:
// the window; HOP: a pane of gcd(size, slide); CUMULATE: a step) or, for
// SESSION, an event time. Each group has the aggregate states (columnar,
// indexed by group id, as in HashAgg) and its live input row count. A
// window's result merges its panes' states into an accumulator (see
// windowagg_merge.go); TUMBLE reads its one pane directly.
//
// Except under plain EMIT ON WINDOW CLOSE (no EARLY EVERY, no ALLOW
// LATENESS), every (window, key) whose row may still change or be retracted
// has an entry remembering its emitted row, so that changes go out as
// update pairs and deletes (windowagg_fixed.go, windowagg_session.go).
//
// Everything is driven by three events: a chunk updates groups (or is
// late), a watermark on the time column closes windows (ON WINDOW CLOSE),
// emits what windows about to be freed still owe and frees them, and a
// barrier emits the epoch's changes (ON UPDATE), corrections of closed
// windows (ALLOW LATENESS) and, after a processing-time tick, provisional
// rows (EARLY EVERY) or the compacted changes (EVERY).
//
// Checkpoints (windowagg_state.go): with env.Checkpoints set the run tracks
// the groups, entries and keys it changes or frees (r.ck), snapshots after
// a checkpoint barrier's output went out and before forwarding it, and
// restores at Start.

// Start implements Node.
func (w *WindowAgg) Start(env *Env, inputs []<-chan Message) <-chan Message {
	out := make(chan Message, ChannelSize)
	r, err := w.newRun(env)
	var period time.Duration
	if err == nil {
		err = env.restore(w, waggState{r})
		period = r.tickPeriod()
	}
	var tick <-chan time.Time
	// Armed before the goroutine runs, so a test's clock sees it. After a
	// restore the period starts again from the clock at Start: processing
	// time is not checkpointed (windowagg_state.go).
	if period > 0 {
		tick = env.clock().After(period)
	}
	go func() {
		defer close(out)
		if err != nil {
			env.Fail(err)
			return
		}
		bc := env.busyClock()
		for {
			bc.stop()
			var m Message
			var ok bool
			select {
			case m, ok = <-inputs[0]:
			case <-tick:
				r.ticked = true
				tick = env.clock().After(period)
				continue
			case <-env.Ctx.Done():
				return
			}
			bc.start()
			if !ok {
				return
			}
			if m.Kind == KindBarrier && tick != nil {
				select { // a tick that is due counts for this barrier
				case <-tick:
					r.ticked = true
					tick = env.clock().After(period)
				default:
				}
			}
			msgs, err := r.handle(m)
			if err != nil {
				env.Fail(err)
				return
			}
			for i, o := range msgs {
				if o.Kind == KindBarrier && i == len(msgs)-1 {
					// the epoch's output went out: snapshot, then forward
					if err := env.snapshot(w, o.Barrier, waggState{r}); err != nil {
						env.Fail(err)
						return
					}
				}
				if !send(env, out, o) {
					return
				}
			}
		}
	}()
	return out
}

// waggRun is one running WindowAgg's state, owned by its goroutine.
type waggRun struct {
	w      *WindowAgg
	env    *Env
	ectx   *expr.Context
	schema *arrow.Schema
	tt     types.T // the window columns' type
	nk     int     // GROUP BY columns

	wm      int64 // the time column's watermark (math.MinInt64: none yet)
	outWM   int64 // the last watermark sent on window_end
	d, dl   int64 // Emit.Delay; Delay + AllowLateness
	eowc    bool
	tracked bool  // emitted rows are remembered in entries
	ticked  bool  // a processing-time tick is due at the next barrier
	late    int64 // late rows so far

	// Keys: GROUP BY values -> key id.
	keyTab   *groupTable // nil without GROUP BY
	keyCells []*cellCol  // per GROUP BY column, per key id
	keyRefs  []int32     // per key id: the groups and entries using it
	nkeys    int

	// Groups: (key id, t) -> group id, found by pane (fixed windows) or
	// among the key's times (sessions).
	gkey    []int32
	gt      []int64
	rows    []int64 // per group: live input rows
	gmark   []bool  // per group: in gdirty
	gpos    []int32 // per group: its index in its pane's list (fixed windows)
	gent    []int32 // per group: entry+1 of its last window, if known (fixed windows)
	gdirty  []int32 // groups changed since the last translation (fixed windows)
	ngroups int
	aggs    []aggCol
	argT    []types.T
	acc     []mergeCol // merge accumulators
	nacc    int

	// Entries: (key id, window id) -> an emitted (or to be emitted) row.
	etab         *groupTable
	ekey         []int32
	ewid         []int64 // the window id: its end (fixed windows), its start (sessions)
	estart, eend []int64 // the emitted row's window
	emitted      []bool
	elive        []bool  // the id is in use
	emark        []bool  // in edirty
	epos         []int32 // fixed windows: index in its window's list
	edirty       []int32
	prev         []*cellCol // per aggregate, per entry: the emitted value
	nent         int

	fix *fixedWin
	ses *sessWin
	ck  *waggCk // change tracking for checkpoints (nil: none)

	ob    outBuf
	stash []*Chunk // EVERY: rows owed by windows freed before the tick

	// scratch
	res     [][]cell // per aggregate, per target: computed results
	rcount  []int64  // per target: input rows
	iota    []int32
	gids    []int32
	filters aggFilters
	signs   []int64
	late1   []bool
	kslot   []int32 // per key id: target+1 while computing a window
	zeros   []int32
}

func (w *WindowAgg) newRun(env *Env) (*waggRun, error) {
	if len(w.Cols) != 2+len(w.GroupBy)+len(w.Aggs) {
		return nil, fmt.Errorf("stream: windowagg has %d columns for 2 window columns, %d keys and %d aggregates",
			len(w.Cols), len(w.GroupBy), len(w.Aggs))
	}
	in := w.Input.Columns()
	ws := w.Window
	if ws.TimeCol < 0 || ws.TimeCol >= len(in) {
		return nil, pgerr.Internal("stream: window time column %d of %d", ws.TimeCol, len(in))
	}
	if k := in[ws.TimeCol].Type.Kind; k != types.Timestamp && k != types.TimestampTZ {
		return nil, pgerr.Internal("stream: window time column is %s", in[ws.TimeCol].Type)
	}
	if w.EndWatermark && (ws.Kind != Tumble || ws.TimeCol+1 >= len(in) || in[ws.TimeCol+1].Type.Kind != in[ws.TimeCol].Type.Kind) {
		return nil, pgerr.Internal("stream: a window aggregation merging partials needs TUMBLE and window_end after its time column")
	}
	e := w.Emit
	if e.Delay < 0 || e.AllowLateness < 0 || e.EarlyEvery < 0 || e.Every < 0 {
		return nil, pgerr.Internal("stream: negative EMIT interval in %s", e)
	}
	if e.Mode == EmitEvery && e.Every <= 0 {
		return nil, pgerr.Internal("stream: EMIT EVERY without an interval")
	}
	r := &waggRun{w: w, env: env, ectx: env.evalContext(), schema: types.ArrowSchema(w.Cols),
		tt: w.Cols[0].Type, nk: len(w.GroupBy), wm: math.MinInt64, outWM: math.MinInt64,
		d: e.Delay, dl: addSat(e.Delay, e.AllowLateness), eowc: e.Mode == EmitOnWindowClose}
	if env.Checkpoints != nil {
		r.ck = &waggCk{nextSer: 1}
	}
	r.tracked = !r.eowc || e.EarlyEvery > 0 || e.AllowLateness > 0 || ws.Kind == Session
	var err error
	if ws.Kind == Session {
		if ws.Gap <= 0 {
			return nil, pgerr.Internal("stream: session gap %d", ws.Gap)
		}
		r.ses = &sessWin{gap: ws.Gap, coalesce: w.AppendOnly}
	} else if r.fix, err = newFixedWin(ws); err != nil {
		return nil, err
	}
	if len(w.GroupBy) > 0 {
		ts := make([]types.T, len(w.GroupBy))
		for i, g := range w.GroupBy {
			ts[i] = g.Type()
			r.keyCells = append(r.keyCells, newCellCol(ts[i]))
		}
		r.keyTab = newGroupTable(ts, false)
	} else {
		r.growKeys(1)
	}
	word := []types.T{types.TInt8}
	r.etab = newGroupTable(word, true)
	r.res = make([][]cell, len(w.Aggs))
	r.ob.init(r)
	for i, a := range w.Aggs {
		var t types.T
		if a.Arg != nil {
			t = a.Arg.Type()
		}
		st, err := newWinAggCol(a, t, w.AppendOnly)
		if err != nil {
			return nil, err
		}
		acc, err := newMergeAcc(a, t)
		if err != nil {
			return nil, err
		}
		r.aggs, r.acc, r.argT = append(r.aggs, st), append(r.acc, acc), append(r.argT, t)
		r.prev = append(r.prev, newCellCol(w.Cols[2+len(w.GroupBy)+i].Type))
	}
	return r, nil
}

// tickPeriod is the processing-time period of EARLY EVERY or EVERY (0: none).
func (r *waggRun) tickPeriod() time.Duration {
	e := r.w.Emit
	switch {
	case e.Mode == EmitEvery:
		return time.Duration(e.Every) * time.Microsecond
	case r.eowc && e.EarlyEvery > 0:
		return time.Duration(e.EarlyEvery) * time.Microsecond
	}
	return 0
}

// handle processes one input message and returns the messages to send.
func (r *waggRun) handle(m Message) ([]Message, error) {
	var msgs []Message
	switch m.Kind {
	case KindChunk:
		return nil, r.consume(m.Chunk)
	case KindWatermark:
		if m.Watermark.Col < 0 {
			// A runtime mark (a split reader ended or went idle) passes
			// a partial aggregate fused with its reader on to the merge;
			// an ended reader's partial first emits what it holds.
			if m.Watermark.Col == MarkEnded {
				c, err := r.ended()
				if err != nil {
					return nil, err
				}
				if c != nil {
					msgs = append(msgs, ChunkMsg(c))
				}
			}
			return append(msgs, m), nil
		}
		if m.Watermark.Col != r.markCol() || m.Watermark.Value <= r.wm {
			return nil, nil // other columns' watermarks do not reach the output
		}
		c, err := r.advance(m.Watermark.Value)
		if err != nil {
			return nil, err
		}
		if r.w.Emit.Mode == EmitEvery {
			if c != nil {
				r.stashed(c)
			}
			return nil, nil
		}
		if c != nil {
			msgs = append(msgs, ChunkMsg(c))
		}
		return append(msgs, r.outWatermarks()...), nil
	case KindBarrier:
		if r.ses != nil {
			// A retraction may have moved a session's end below the
			// watermark: handle it as the watermark would.
			c, err := r.advance(r.wm)
			if err != nil {
				return nil, err
			}
			if c != nil && r.w.Emit.Mode == EmitEvery {
				r.stashed(c)
			} else if c != nil {
				msgs = append(msgs, ChunkMsg(c))
			}
		}
		if r.w.Emit.Mode == EmitEvery && r.ticked {
			for _, c := range r.stash {
				msgs = append(msgs, ChunkMsg(c))
			}
			if len(r.stash) > 0 && r.ck != nil {
				r.ck.stashChg = true
			}
			clear(r.stash)
			r.stash = r.stash[:0]
		}
		c, err := r.barrier()
		if err != nil {
			return nil, err
		}
		r.ticked = false
		if c != nil {
			msgs = append(msgs, ChunkMsg(c))
		}
	}
	return append(msgs, m), nil
}

// markCol is the input column whose watermark closes windows: the time
// column, or window_end in the final phase of a two-phase aggregation
// (WindowAgg.EndWatermark).
func (r *waggRun) markCol() int {
	if r.w.EndWatermark {
		return r.w.Window.TimeCol + 1
	}
	return r.w.Window.TimeCol
}

// outWatermarks are the output's watermarks after the input's reached r.wm
// and everything it closed or freed was sent (TUMBLE, HOP, CUMULATE): every
// later row, retractions included, is of a window not yet freed, which ends
// after wm - delay - lateness and starts at most size before its end.
// SESSION sends none: an emitted session that a late row extended is
// retracted when the extended session is due, which may be long after its
// own end passed the watermark. EMIT EVERY holds rows back and sends none.
func (r *waggRun) outWatermarks() []Message {
	v := addSat(r.wm, -r.dl)
	if r.fix == nil || v <= r.outWM {
		return nil
	}
	r.outWM = v
	return []Message{WatermarkMsg(Watermark{Col: 0, Value: addSat(v, -r.fix.size)}), WatermarkMsg(Watermark{Col: 1, Value: v})}
}

// ended returns what a partial window aggregate fused with a split
// reader (planner.TwoPhaseWindowOf) still holds when the reader's input
// has ended (MarkEnded): under ON WINDOW CLOSE every open window's row, as
// if its watermark had passed them all, under ON UPDATE the changes since
// the last barrier. The merge above then stops waiting for this
// instance's watermark and the final phase closes windows by the other
// instances' watermarks: rows held back until then would come after the
// final closed their windows (they would be lost). The aggregate's own
// watermark and output watermarks do not move (the final closes no
// window that the single operator would not; an idle timeout still moves
// an ended reader's watermark on, and it passes). Sessions are never
// partial (nil).
func (r *waggRun) ended() (*Chunk, error) {
	if r.fix == nil {
		return nil, nil
	}
	if r.eowc {
		wm := r.wm
		if err := r.advanceFixed(math.MaxInt64); err != nil {
			return nil, err
		}
		r.wm = wm // an ended reader's idle timeout still moves it on
		return r.ob.chunk(r)
	}
	return r.barrier()
}

// advance moves the watermark to wm and returns the rows that closing and
// freeing windows emit (nil: none).
func (r *waggRun) advance(wm int64) (*Chunk, error) {
	var err error
	if r.fix != nil {
		err = r.advanceFixed(wm)
	} else {
		err = r.advanceSessions(wm)
	}
	if err != nil {
		return nil, err
	}
	return r.ob.chunk(r)
}

// barrier emits what is due at the end of an epoch.
func (r *waggRun) barrier() (*Chunk, error) {
	var err error
	if r.fix != nil {
		err = r.barrierFixed()
	} else {
		err = r.barrierSessions()
	}
	if err != nil {
		return nil, err
	}
	return r.ob.chunk(r)
}

// flushAll says whether this barrier emits every pending change.
func (r *waggRun) flushAll() bool {
	switch {
	case r.w.Emit.Mode == EmitOnUpdate:
		return true
	case r.w.Emit.Mode == EmitEvery, r.w.Emit.EarlyEvery > 0:
		return r.ticked
	}
	return false
}

// consume applies one chunk: each row to its group, or, if the window it
// belongs to was freed, to the late rows.
func (r *waggRun) consume(c *Chunk) error {
	n := c.Len()
	if n == 0 {
		return nil
	}
	kids, newKeys, err := r.keyIDs(c)
	if err != nil {
		return err
	}
	tcol, ok := c.Rec.Column(r.w.Window.TimeCol).(*array.Timestamp)
	if !ok {
		return pgerr.Internal("stream: window time column is %s", c.Rec.Column(r.w.Window.TimeCol).DataType())
	}
	ts := tcol.TimestampValues()
	r.gids = growSlice(r.gids[:0], n)
	r.late1 = growSlice(r.late1[:0], n)
	gids, late := r.gids, r.late1
	nlate := 0
	for i := 0; i < n; i++ {
		gids[i], late[i] = -1, false
		if tcol.IsNull(i) {
			continue // in no window
		}
		var g int32
		if r.fix != nil {
			g = r.fix.assign(r, kids[i], int64(ts[i]))
		} else {
			g = r.ses.assign(r, kids[i], int64(ts[i]))
		}
		if g == lateRow {
			late[i] = true
			nlate++
			continue
		}
		gids[i] = g
	}
	var signs []int64
	if c.Ops != nil {
		r.signs = growSlice(r.signs[:0], n)
		signs = r.signs
		for i, op := range c.Ops {
			signs[i] = op.Sign()
		}
	}
	if err := r.count(gids, signs); err != nil {
		return err
	}
	if err := r.updateAggs(c, gids, signs); err != nil {
		return err
	}
	for _, k := range newKeys {
		if r.keyRefs[k] == 0 {
			r.freeKey(k)
		}
	}
	if nlate > 0 {
		return r.lateRows(c.Rec, late[:n], nlate) // may keep c.Rec: its buffers are not given back
	}
	c.ReturnBuffers() // the state holds copies of the values, never the arrays
	return nil
}

// lateRow is what assign returns for a row whose windows were freed.
const lateRow = -2

// lateRows counts and hands on the rows of rec marked late.
func (r *waggRun) lateRows(rec arrow.RecordBatch, late []bool, n int) error {
	r.late += int64(n)
	if r.env.OnLate == nil {
		return nil
	}
	r.env.late(r.w, exec.SelectRows(r.ectx.Allocator(), rec, late, true)) // Arrow's filter takes no intervals
	return nil
}

// keyIDs maps each row of c to its key id; newKeys lists the ids the chunk
// created (freed again if no group takes them).
func (r *waggRun) keyIDs(c *Chunk) (kids, newKeys []int32, err error) {
	n := c.Len()
	if r.keyTab == nil {
		r.zeros = growSlice(r.zeros, n)
		return r.zeros[:n], nil, nil
	}
	keys := make([]arrow.Array, len(r.w.GroupBy))
	for i, e := range r.w.GroupBy {
		a, err := e.Eval(r.ectx, c.Rec)
		if err != nil {
			return nil, nil, err
		}
		defer a.Release()
		keys[i] = a
	}
	kids = r.keyTab.probe(keys, nil, n, false)
	r.growKeys(r.keyTab.cap())
	for _, row := range r.keyTab.newRows {
		k := kids[row]
		r.keyRefs[k] = 0
		newKeys = append(newKeys, k)
		for j, a := range keys {
			kc := r.keyCells[j]
			kc.set(k, cellAt(a, int(row), kc.st, kc.t))
		}
	}
	return kids, newKeys, nil
}

func (r *waggRun) growKeys(n int) {
	if n <= r.nkeys {
		return
	}
	n = max(n, 2*r.nkeys)
	r.nkeys = n
	r.keyRefs, r.kslot = growSlice(r.keyRefs, n), growSlice(r.kslot, n)
	for _, kc := range r.keyCells {
		kc.grow(n)
	}
	if r.ses != nil {
		r.ses.keys = growSlice(r.ses.keys, n)
	}
	if r.ck != nil {
		r.ck.kck, r.ck.kser = growSlice(r.ck.kck, n), growSlice(r.ck.kser, n)
	}
}

func (r *waggRun) unrefKey(k int32) {
	if r.keyRefs[k]--; r.keyRefs[k] == 0 {
		r.freeKey(k)
	}
}

// freeKey forgets key k, which no group or entry uses.
func (r *waggRun) freeKey(k int32) {
	if r.ck != nil {
		r.ck.keyFreed(k)
	}
	if r.ses != nil {
		r.ses.freeKey(k)
	}
	if r.keyTab == nil {
		return
	}
	r.keyTab.remove(k)
	for _, kc := range r.keyCells {
		kc.clear(k)
	}
}

// initGroup sets up the new group g = (k, t); ids are below limit.
func (r *waggRun) initGroup(g, k int32, t int64, limit int) {
	if int(g) >= r.ngroups {
		r.growGroups(limit)
	}
	r.gkey[g], r.gt[g], r.rows[g], r.gent[g] = k, t, 0, 0
	r.keyRefs[k]++
}

func (r *waggRun) growGroups(n int) {
	n = max(n, 2*r.ngroups)
	r.ngroups = n
	r.gkey, r.gt, r.rows = growSlice(r.gkey, n), growSlice(r.gt, n), growSlice(r.rows, n)
	r.gmark, r.gpos, r.gent = growSlice(r.gmark, n), growSlice(r.gpos, n), growSlice(r.gent, n)
	for _, a := range r.aggs {
		a.grow(n)
	}
	if r.ck != nil {
		r.ck.gck, r.ck.gsaved = growSlice(r.ck.gck, n), growSlice(r.ck.gsaved, n)
	}
}

// retime moves group g (a session's rows over an append-only input) to
// time t: its record, if written, is now under another name.
func (r *waggRun) retime(g int32, t int64) {
	if r.ck != nil {
		r.ck.groupFreed(r, g)
		r.ck.touchGroup(g)
	}
	r.gt[g] = t
}

// dropGroup empties group g and releases its key; the caller forgets its id.
func (r *waggRun) dropGroup(g int32) {
	if r.ck != nil {
		r.ck.groupFreed(r, g)
	}
	for _, a := range r.aggs {
		a.reset(g)
	}
	r.rows[g] = 0
	r.unrefKey(r.gkey[g])
}

// liveGroups is the number of groups.
func (r *waggRun) liveGroups() int {
	if r.fix != nil {
		return r.fix.ids.live
	}
	return r.ses.ids.live
}

// entry returns the id of entry (k, wid), creating it (not emitted) if needed.
func (r *waggRun) entry(k int32, wid int64) (e int32, created bool) {
	live := r.etab.live
	e = r.etab.findWord(int64(k), wid, 0, 0)
	if r.etab.live == live {
		return e, false
	}
	r.etab.newRows = r.etab.newRows[:0]
	if int(e) >= r.nent {
		n := max(r.etab.cap(), 2*r.nent)
		r.nent = n
		r.ekey, r.ewid = growSlice(r.ekey, n), growSlice(r.ewid, n)
		r.estart, r.eend = growSlice(r.estart, n), growSlice(r.eend, n)
		r.emitted, r.emark, r.epos = growSlice(r.emitted, n), growSlice(r.emark, n), growSlice(r.epos, n)
		r.elive = growSlice(r.elive, n)
		for _, p := range r.prev {
			p.grow(n)
		}
		if r.ck != nil {
			r.ck.eck, r.ck.esaved = growSlice(r.ck.eck, n), growSlice(r.ck.esaved, n)
		}
	}
	r.ekey[e], r.ewid[e], r.emitted[e], r.emark[e], r.elive[e] = k, wid, false, false, true
	r.keyRefs[k]++
	if r.ck != nil {
		r.ck.touchEntry(e)
	}
	return e, true
}

// freeEntry forgets entry e (its id is reused).
func (r *waggRun) freeEntry(e int32) {
	if r.ck != nil {
		r.ck.entryFreed(r, e)
	}
	r.etab.remove(e)
	for _, p := range r.prev {
		p.clear(e)
	}
	r.emitted[e], r.emark[e], r.elive[e] = false, false, false
	r.unrefKey(r.ekey[e])
}

// markEntry adds e to the entries to flush.
func (r *waggRun) markEntry(e int32) {
	if !r.emark[e] {
		r.emark[e] = true
		r.edirty = append(r.edirty, e)
		if r.ck != nil {
			r.ck.touchEntry(e)
		}
	}
}

// count updates the groups' row counts and marks the changed ones.
func (r *waggRun) count(gids []int32, signs []int64) error {
	rows := r.rows
	for i, g := range gids {
		if g < 0 {
			continue
		}
		rows[g] += sgn(signs, i)
		if rows[g] < 0 {
			return pgerr.Internal("stream: windowagg: a retraction for a row its window does not hold")
		}
		if r.fix != nil {
			if !r.gmark[g] { // first change since the last translate, so since the last snapshot too
				r.gmark[g] = true
				r.gdirty = append(r.gdirty, g)
				if r.ck != nil {
					r.ck.touchGroup(g)
				}
			}
			continue
		}
		if r.ck != nil {
			r.ck.touchGroup(g)
		}
		if rows[g] == 0 {
			r.ses.emptied(r, r.gkey[g])
		}
	}
	return nil
}

// updateAggs folds the chunk's rows into their groups' aggregates.
func (r *waggRun) updateAggs(c *Chunk, gids []int32, signs []int64) error {
	return updateAggs(r.env, r.ectx, r.w.Aggs, r.aggs, c.Rec, gids, signs, &r.filters)
}

// compute sets, for targets [0, n), r.res[j][i] to aggregate j's result
// over the groups src[k] with dst[k] == i, and r.rcount[i] to their rows.
// When each target is exactly one group (dst[k] == k), the groups' states
// are read directly; otherwise they are merged into the accumulators.
func (r *waggRun) compute(n int, dst, src []int32) error {
	r.rcount = growSlice(r.rcount[:0], n)
	clear(r.rcount)
	direct := len(src) == n
	for k, g := range src {
		r.rcount[dst[k]] += r.rows[g]
		direct = direct && dst[k] == int32(k)
	}
	for j := range r.res {
		r.res[j] = growSlice(r.res[j][:0], n)
	}
	if n == 0 {
		return nil
	}
	if direct {
		for j, a := range r.aggs {
			if err := a.results(src, r.res[j]); err != nil {
				return err
			}
		}
		return nil
	}
	if n > r.nacc {
		r.nacc = max(n, 2*r.nacc)
		for _, a := range r.acc {
			a.grow(r.nacc)
		}
	}
	r.iota = growSlice(r.iota[:0], n)
	for i := range r.iota {
		r.iota[i] = int32(i)
	}
	for j, a := range r.acc {
		if err := a.merge(dst, r.aggs[j], src); err != nil {
			return err
		}
		err := a.results(r.iota, r.res[j])
		for i := 0; i < n; i++ {
			a.reset(int32(i))
		}
		if err != nil {
			return err
		}
	}
	return nil
}
