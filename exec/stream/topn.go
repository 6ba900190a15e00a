package stream

import (
	"container/heap"
	"fmt"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// TopN keeps, per partition (all rows when PartitionBy is empty), the rows
// ranked Offset+1 .. Offset+Limit by Order, and emits the changes to that
// set as its input changes (ORDER BY ... LIMIT n OFFSET m, and
// row_number() OVER (PARTITION BY ... ORDER BY ...) <= n). Ties in Order
// are broken by the whole row (its values by identity, tnIdentity), so the
// result is deterministic. With RankCol the output has one more column
// (int8): the row's row_number within its partition (Offset+1 for the first
// row kept), and rows whose rank moves are updated.
//
// Rows add (Insert, UpdateAfter) or retract (Delete, UpdateBefore) one copy
// of a row. Nothing is emitted until the epoch's barrier: then, for every
// partition the epoch touched (in first-touch order), TopN compares the
// rows it emitted before with the rows now at those ranks and emits the net
// difference: Deletes, then (with RankCol) an UpdateBefore/UpdateAfter pair
// per row copy whose rank moved, then Inserts; then it forwards the
// barrier. Update pairs are ordered so that, within a partition, a rank is
// always vacated before another row takes it: the output's stream key may
// be the input's or (partition, rank). Watermarks pass through.
//
// State: every row of the input, per partition, in order (a retraction
// may bring a row from beyond the limit into the top); with AppendOnly only
// the first Offset+Limit rows per partition. Per touched partition an
// epoch costs O(Offset/128 + Limit) beyond the rows' own O(log n) updates.
// Checkpoints write the rows that changed (topn_state.go).
type TopN struct {
	Input       Node
	PartitionBy []expr.Expr
	Order       []exec.SortKey
	Limit       int64 // -1: no limit
	Offset      int64
	RankCol     bool
	Cols        []types.Column // the input's columns (plus the rank column)
	// AppendOnly is set when the input never retracts (see Scan): TopN then
	// keeps only the rows it may still emit, and a retraction is an error.
	AppendOnly bool
	// Close, if set, completes and frees partitions with a watermark (a
	// top-N per time window, topn_close.go).
	Close *TopNClose
	// Ties, if set, ranks as rank() or dense_rank() do: the rows ranked at
	// most Limit go out, ties included, and the rank column holds that
	// rank (Offset must be 0; AppendOnly keeps every row).
	Ties TopNTies

	noPack bool // tests: box every entry (topn_pack.go)
}

// TopNTies is the ranking of a TopN.
type TopNTies uint8

// TopN rankings.
const (
	RowNumber TopNTies = iota // row_number(): ties broken by the whole row
	Rank                      // rank(): ties share a rank, the next skips
	DenseRank                 // dense_rank(): ties share a rank, the next follows
)

// ranked appends p's rows to emit (with their ranks) to dst.
func (r *topnRun) ranked(dst []tnRank, p *tnPart) []tnRank {
	if r.t.Ties == RowNumber {
		return p.rows.appendRange(dst, r.t.Offset, r.t.Limit)
	}
	return p.rows.appendTies(dst, &r.order, r.t.Limit, r.t.Ties == DenseRank)
}

// Columns implements Node.
func (t *TopN) Columns() []types.Column { return t.Cols }

// Inputs implements Node.
func (t *TopN) Inputs() []Node { return []Node{t.Input} }

// Explain implements Node.
func (t *TopN) Explain() string {
	keys := make([]string, len(t.Order))
	for i, k := range t.Order {
		keys[i] = k.E.String()
		if k.Desc {
			keys[i] += " DESC"
		}
	}
	s := "StreamTopN: order by " + strings.Join(keys, ", ")
	if len(t.PartitionBy) > 0 {
		parts := make([]string, len(t.PartitionBy))
		for i, p := range t.PartitionBy {
			parts[i] = p.String()
		}
		s = "StreamGroupTopN: partition by " + strings.Join(parts, ", ") + " " + s[len("StreamTopN: "):]
	}
	if t.Limit >= 0 {
		s += fmt.Sprintf(" limit %d", t.Limit)
	}
	switch t.Ties {
	case Rank:
		s += " with ties (rank)"
	case DenseRank:
		s += " with ties (dense_rank)"
	}
	if t.Offset > 0 {
		s += fmt.Sprintf(" offset %d", t.Offset)
	}
	if t.AppendOnly {
		s += " (append only)"
	}
	if t.Close != nil {
		s += ", each " + t.PartitionBy[t.Close.Part].String() + " " + t.Close.String()
	}
	return s
}

// Start implements Node.
func (t *TopN) Start(env *Env, inputs []<-chan Message) <-chan Message {
	out := make(chan Message, ChannelSize)
	go func() {
		defer close(out)
		r, err := t.newRun(env)
		if err == nil {
			err = env.restore(t, r)
		}
		if err != nil {
			env.Fail(err)
			return
		}
		// Rows are released at the barrier, so watermarks wait for it too:
		// a watermark must not overtake rows below it.
		var marks []Watermark
		bc := env.busyClock()
		for {
			bc.stop()
			var m Message
			var ok bool
			select {
			case m, ok = <-inputs[0]:
			case <-env.Ctx.Done():
				return
			}
			bc.start()
			if !ok {
				return
			}
			switch m.Kind {
			case KindChunk:
				if err := r.consume(m.Chunk); err != nil {
					env.Fail(err)
					return
				}
				continue
			case KindWatermark:
				if cl := t.Close; cl != nil && cl.EOWC {
					// Only the closing column's watermark holds for the
					// output; it goes out after the rows it released.
					if m.Watermark.Col != cl.Col {
						continue
					}
					c, err := r.closeUpTo(m.Watermark.Value)
					if err != nil {
						env.Fail(err)
						return
					}
					if c != nil && !send(env, out, ChunkMsg(c)) {
						return
					}
					m.Watermark.Value = addSat(m.Watermark.Value, -cl.Delay)
					break
				}
				if cl := t.Close; cl != nil && m.Watermark.Col == cl.Col {
					r.lateWM = max(r.lateWM, m.Watermark.Value)
				}
				marks = holdMark(marks, m.Watermark)
				continue
			case KindBarrier:
				c, err := r.flush()
				if err != nil {
					env.Fail(err)
					return
				}
				if c != nil && !send(env, out, ChunkMsg(c)) {
					return
				}
				if t.Close != nil {
					for _, w := range marks {
						if w.Col != t.Close.Col {
							continue
						}
						if _, err := r.closeUpTo(w.Value); err != nil {
							env.Fail(err)
							return
						}
					}
				}
				for _, w := range marks {
					if !send(env, out, WatermarkMsg(w)) {
						return
					}
				}
				marks = marks[:0]
				if err := env.snapshot(t, m.Barrier, r); err != nil {
					env.Fail(err)
					return
				}
			}
			if !send(env, out, m) {
				return
			}
		}
	}()
	return out
}

// tnPart is one partition: its rows and the copies it last emitted (in
// order, with their ranks). last is the row that sorts last once an
// append-only partition is full (nil before), lastNorm its norm.
type tnPart struct {
	closeAt  int64 // with TopN.Close: the value the watermark must pass
	gone     bool  // with TopN.Close: freed (it may still be in closing)
	last     *tnEntry
	lastNorm tnNorm
	enc      string // in encBuf when it fits
	rows     tnList
	emitted  []tnRank
	touched  bool
	emit1    [1]tnRank // emitted's storage while it holds one copy
	encBuf   [24]byte
}

// newPart makes a partition of the encoding enc whose emitted copies
// start in its inline storage (most partitions of a group top-1 never
// hold more). A short enc is kept in the partition itself: one allocation
// a partition (with its list's first block, tnList). A partition is never
// copied (its fields refer to it). Partitions of an append-only TopN
// without Close are never freed, so they are cut from chunks (tnPartChunk
// at a time): the collector then finds them in a few large objects it
// scans in order rather than in a small object each, whose span it looks
// up for every pointer to it (most of a dedup's marking).
func (r *topnRun) newPart(enc []byte, closeAt int64) *tnPart {
	var p *tnPart
	if r.t.AppendOnly && r.t.Close == nil {
		if len(r.chunk) == cap(r.chunk) {
			r.chunk = make([]tnPart, 0, tnPartChunk)
		}
		r.chunk = r.chunk[:len(r.chunk)+1]
		p = &r.chunk[len(r.chunk)-1]
		p.closeAt = closeAt
	} else {
		p = &tnPart{closeAt: closeAt}
	}
	if n := copy(p.encBuf[:], enc); n == len(enc) && n > 0 {
		p.enc = unsafe.String(&p.encBuf[0], n)
	} else {
		p.enc = string(enc)
	}
	p.emitted = p.emit1[:0:1]
	p.rows.held = &r.held
	if r.keep > 1 && r.keep < tnBlockMax {
		p.rows.hint = int32(r.keep + 1) // the bound, and the row trimmed after an insert
	}
	return p
}

// tnPartChunk is how many partitions newPart allocates at once.
const tnPartChunk = 64

// tnParts maps partition encodings to partitions; short encodings (one
// or two fixed-width keys) are map keys by value, so a lookup compares
// them in place instead of following a string pointer.
type tnParts struct {
	short map[tnShortKey]*tnPart
	long  map[string]*tnPart
}

type tnShortKey struct {
	b [23]byte
	n uint8
}

func newTnParts() tnParts {
	return tnParts{short: map[tnShortKey]*tnPart{}, long: map[string]*tnPart{}}
}

func shortKey(enc string) (k tnShortKey, ok bool) {
	if len(enc) > len(k.b) {
		return k, false
	}
	k.n = uint8(copy(k.b[:], enc))
	return k, true
}

func (m tnParts) get(enc []byte) *tnPart {
	if k, ok := shortKey(string(enc)); ok { // no allocation: the conversion does not escape
		return m.short[k]
	}
	return m.long[string(enc)]
}

func (m tnParts) put(p *tnPart) {
	if k, ok := shortKey(p.enc); ok {
		m.short[k] = p
	} else {
		m.long[p.enc] = p
	}
}

func (m tnParts) delete(enc string) {
	if k, ok := shortKey(enc); ok {
		delete(m.short, k)
	} else {
		delete(m.long, enc)
	}
}

// topnRun is one running TopN's state, owned by its goroutine.
type topnRun struct {
	pool     *tnPool  // free entries, when they are recycled (topn_recycle.go)
	pend     []tnPend // entry's scratch
	slots    []tnSlot // packEntry's scratch
	chunk    []tnPart // newPart's current chunk
	t        *TopN
	env      *Env
	ectx     *expr.Context
	in       []types.Column // the input's columns
	order    tnOrder
	partT    []types.T
	keyExprs []expr.Expr // the Order expressions
	keep     int64       // rows kept per partition when AppendOnly (Offset+Limit), else -1
	parts    tnParts
	global   *tnPart  // the one partition without PartitionBy
	dedup    *tnDedup // a dedup's short partitions (topn_dedup.go), if used
	touched  []tnTouched
	enc      []byte
	closing  tnClosing // with Close: open partitions by closeAt
	closedWM int64     // with Close: partitions closing below it are freed
	// lateWM is, with Close under ON UPDATE, the highest watermark of the
	// closing column seen: a row of a partition it completed is late at
	// once, though the partition is freed at the barrier (after its
	// changes of the epoch went out). So which rows are late depends on
	// the watermarks between the rows, not on where epochs end, and a
	// replay after a restart, whose epochs differ, decides alike.
	lateWM int64
	late   int64
	held   int64 // rows held by all partitions (tnList.held)

	// checkpoints (topn_state.go): ck is set once a snapshot was taken or
	// restored; then ckDirty lists the entries changed since.
	ck      bool
	ckBased bool
	ckDirty []tnRef
	ckEnc   []byte        // the encodings of ckDirty's dedup partitions
	ckKeys  []int         // sort keys that are not row columns
	vals    []types.Value // scratch: an entry's values to encode
	trimmed []*tnEntry

	// flush scratch and output builders, reused across epochs
	next             []tnRank
	dels, ins, moves []tnRank // moves: rank is the new rank, old in moved
	moved            []int64
	schema           *arrow.Schema
	bs               []array.Builder
	ops              []Op
	outs             []tnRank // the epoch's output rows, in order, beside ops
}

func (t *TopN) newRun(env *Env) (*topnRun, error) {
	if t.Limit < -1 || t.Offset < 0 {
		return nil, fmt.Errorf("stream: top-n with limit %d offset %d", t.Limit, t.Offset)
	}
	in := t.Input.Columns()
	want := len(in)
	if t.RankCol {
		want++
	}
	if len(t.Cols) != want {
		return nil, fmt.Errorf("stream: top-n has %d columns for %d input columns", len(t.Cols), len(in))
	}
	if t.RankCol && t.Cols[want-1].Type.Kind != types.Int8 {
		return nil, fmt.Errorf("stream: top-n rank column is %s, want bigint", t.Cols[want-1].Type)
	}
	if err := t.closeCheck(); err != nil {
		return nil, err
	}
	r := &topnRun{t: t, env: env, ectx: env.evalContext(), in: in, order: newTnOrder(t.Order), keep: -1,
		parts: newTnParts(), schema: types.ArrowSchema(t.Cols), closedWM: math.MinInt64, lateWM: math.MinInt64}
	if t.Ties != RowNumber && (t.Offset != 0 || t.Limit < 0) {
		return nil, fmt.Errorf("stream: top-n with ties, limit %d offset %d", t.Limit, t.Offset)
	}
	if t.AppendOnly && t.Ties == RowNumber && t.Limit >= 0 && t.Limit <= math.MaxInt64-t.Offset {
		r.keep = t.Offset + t.Limit
	}
	for _, k := range t.Order {
		r.keyExprs = append(r.keyExprs, k.E)
	}
	if !t.noPack {
		r.order.lay = newTnLayout(in, r.keyExprs)
	}
	if r.order.lay != nil && t.AppendOnly && t.Close == nil {
		r.pool = &tnPool{}
	}
	if t.useDedup(r) {
		r.dedup = newTnDedup()
	}
	for _, p := range t.PartitionBy {
		r.partT = append(r.partT, p.Type())
	}
	if len(t.PartitionBy) == 0 {
		r.global = &tnPart{}
		r.global.rows.held = &r.held
	}
	r.ckSetup()
	return r, nil
}

// evalAll evaluates es over rec; the caller releases the arrays.
func (r *topnRun) evalAll(es []expr.Expr, rec arrow.RecordBatch) ([]arrow.Array, error) {
	out := make([]arrow.Array, 0, len(es))
	for _, e := range es {
		a, err := evalOrNull(r.env, r.ectx, e, rec)
		if err != nil {
			releaseAll(out)
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// consume applies one chunk to the partitions.
func (r *topnRun) consume(c *Chunk) error {
	n := c.Len()
	if n == 0 || r.t.Limit == 0 { // LIMIT 0 never emits anything
		return nil
	}
	parts, err := r.evalAll(r.t.PartitionBy, c.Rec)
	if err != nil {
		return err
	}
	defer releaseAll(parts)
	keys, err := r.evalAll(r.keyExprs, c.Rec)
	if err != nil {
		return err
	}
	defer releaseAll(keys)
	var late []int
	for row := 0; row < n; row++ {
		p := r.global
		if p == nil {
			closeAt := int64(math.MaxInt64)
			if r.t.Close != nil {
				if closeAt = r.closeValue(parts, row); r.isLate(closeAt) {
					late = append(late, row)
					continue
				}
			}
			r.enc = r.enc[:0]
			for k, a := range parts {
				r.enc = encodeKey(r.enc, a, row, r.partT[k])
			}
			if r.dedup != nil && len(r.enc) <= tnDedupEnc {
				if c.Op(row).Sign() < 0 {
					return pgerr.Internal("stream: top-n: a %s on an append-only input", c.Op(row))
				}
				r.dedupRow(c.Rec, keys, row)
				continue
			}
			if p = r.parts.get(r.enc); p == nil {
				p = r.newPart(r.enc, closeAt)
				r.parts.put(p)
				if r.t.Close != nil && closeAt != math.MaxInt64 {
					heap.Push(&r.closing, p)
				}
			}
		}
		sign := c.Op(row).Sign()
		if sign < 0 && r.t.AppendOnly {
			return pgerr.Internal("stream: top-n: a %s on an append-only input", c.Op(row))
		}
		var e *tnEntry
		if p.last != nil {
			// Full: a row that sorts after the last kept one can never be emitted.
			last, lastNorm := p.last, p.lastNorm
			norm := tnNorm{rank: 1}
			if len(keys) > 0 {
				norm = r.order.normAt(keys[0], row)
			}
			if d := norm.cmp(lastNorm); d > 0 {
				continue
			} else if d == 0 {
				if d = r.order.compareAt(keys, row, norm, last); d > 0 {
					continue
				} else if d == 0 {
					e = r.entry(c.Rec, keys, row)
					if r.order.compare(e, last) >= 0 {
						r.pool.put(e) // not kept
						continue
					}
				}
			}
		}
		if e == nil {
			e = r.entry(c.Rec, keys, row)
		}
		if r.keep == 1 && p.last != nil && sign > 0 {
			// A top-1 (dedup) whose one row e displaces: swap it in place
			// of inserting it and trimming the old one.
			if old := p.rows.replaceSingle(e); old != nil {
				if r.ck {
					r.ckMark(p, old)
					r.ckMark(p, e)
				}
				r.pool.dropped(old)
				p.last, p.lastNorm = e, e.norm
				r.touch(p)
				continue
			}
		}
		st, ok := p.rows.addEntry(&r.order, e, sign)
		if !ok {
			return pgerr.Internal("stream: top-n: a %s of a row its partition does not hold", c.Op(row))
		}
		if r.ck {
			r.ckMark(p, st)
		}
		if st != e && r.pool != nil {
			r.pool.put(e) // a copy of a row the list holds: not kept
		}
		if r.keep >= 0 {
			r.trimmed = p.rows.trim(r.keep, r.trimmed[:0])
			if r.ck {
				for _, x := range r.trimmed {
					r.ckMark(p, x)
				}
			}
			if p.rows.rows == r.keep {
				p.last = p.rows.last()
				p.lastNorm = p.last.norm
			}
			if r.pool != nil {
				for _, x := range r.trimmed {
					if x != p.last { // only the last one trimmed may keep copies
						r.pool.dropped(x)
					}
				}
			}
		}
		r.touch(p)
	}
	if len(late) > 0 {
		r.lateRows(c.Rec, late)
	}
	return nil
}

// tnTouched is a partition the epoch changed: p, or slot of the dedup
// table when p is nil.
type tnTouched struct {
	p    *tnPart
	slot int32
}

// touch lists p among the partitions the epoch changed (not under EOWC,
// which emits partitions when they close).
func (r *topnRun) touch(p *tnPart) {
	if !p.touched && (r.t.Close == nil || !r.t.Close.EOWC) {
		p.touched = true
		r.touched = append(r.touched, tnTouched{p: p})
	}
}

// ownDeep copies values (and array elements) that may point into Arrow
// buffers.
func ownDeep(v types.Value) types.Value {
	if a, ok := v.([]types.Value); ok {
		out := make([]types.Value, len(a))
		for i, x := range a {
			out[i] = ownDeep(x)
		}
		return out
	}
	return ownValue(v)
}

// flush builds the epoch's output chunk (nil when nothing changed) and
// frees the partitions that became empty.
func (r *topnRun) flush() (*Chunk, error) {
	r.ops, r.outs = r.ops[:0], r.outs[:0]
	for _, t := range r.touched {
		if t.p == nil {
			if err := r.flushSlot(int(t.slot)); err != nil {
				return nil, err
			}
			continue
		}
		p := t.p
		p.touched = false
		r.next = r.ranked(r.next[:0], p)
		if err := r.diff(p.emitted, r.next); err != nil {
			return nil, err
		}
		r.pool.emitted(p.emitted, r.next)
		p.emitted = append(p.emitted[:0], r.next...)
		if p != r.global && p.rows.rows == 0 {
			p.gone = true
			r.parts.delete(p.enc)
		}
	}
	clear(r.touched)
	r.touched = r.touched[:0]
	clear(r.next) // drop references to freed entries
	if len(r.ops) == 0 {
		r.pool.flushed()
		return nil, nil
	}
	rec, err := r.finish(len(r.ops))
	if err != nil {
		return nil, err
	}
	r.pool.flushed() // the output is written: its dropped rows are free

	c := &Chunk{Rec: rec, Ops: slices.Clone(r.ops)}
	if !slices.ContainsFunc(c.Ops, func(o Op) bool { return o != Insert }) {
		c.Ops = nil
	}
	return c, nil
}

// diff appends to the output the changes that turn one partition's emitted
// copies before into after (both in order): Deletes, rank moves toward the
// front (by ascending rank), rank moves toward the back (by descending
// rank), Inserts. A copy of a row is matched with a copy of the same row,
// the i-th with the i-th.
func (r *topnRun) diff(before, after []tnRank) error {
	r.dels, r.ins, r.moves, r.moved = r.dels[:0], r.ins[:0], r.moves[:0], r.moved[:0]
	i, j := 0, 0
	for i < len(before) || j < len(after) {
		c := 0
		switch {
		case i == len(before):
			c = 1
		case j == len(after):
			c = -1
		default:
			c = r.order.compare(before[i].e, after[j].e)
		}
		switch {
		case c < 0:
			r.dels = append(r.dels, before[i])
			i++
		case c > 0:
			r.ins = append(r.ins, after[j])
			j++
		default:
			if r.t.RankCol && before[i].rank != after[j].rank {
				r.moves = append(r.moves, after[j])
				r.moved = append(r.moved, before[i].rank)
			}
			i++
			j++
		}
	}
	for _, x := range r.dels {
		if err := r.emit(Delete, x.e, x.rank); err != nil {
			return err
		}
	}
	for k, x := range r.moves { // toward the front: ascending
		if x.rank < r.moved[k] {
			if err := r.emitMove(x, r.moved[k]); err != nil {
				return err
			}
		}
	}
	for k := len(r.moves) - 1; k >= 0; k-- { // toward the back: descending
		if x := r.moves[k]; x.rank > r.moved[k] {
			if err := r.emitMove(x, r.moved[k]); err != nil {
				return err
			}
		}
	}
	for _, x := range r.ins {
		if err := r.emit(Insert, x.e, x.rank); err != nil {
			return err
		}
	}
	return nil
}

func (r *topnRun) emitMove(x tnRank, old int64) error {
	if err := r.emit(UpdateBefore, x.e, old); err != nil {
		return err
	}
	return r.emit(UpdateAfter, x.e, x.rank)
}

// emit queues one output row (with its rank when RankCol); finish writes
// the queued rows.
func (r *topnRun) emit(op Op, e *tnEntry, rank int64) error {
	r.outs = append(r.outs, tnRank{e: e, rank: rank})
	r.ops = append(r.ops, op)
	return nil
}

// finish writes the queued rows into the builders, reserving their rows
// and their strings' bytes first, and turns them into a record batch; the
// builders are empty after and reused by the next epoch.
func (r *topnRun) finish(rows int) (arrow.RecordBatch, error) {
	if r.bs == nil {
		r.bs = make([]array.Builder, len(r.t.Cols))
		for j, c := range r.t.Cols {
			r.bs[j] = types.NewBuilder(r.ectx.Allocator(), c.Type)
		}
	}
	lay := r.order.lay
	for j, b := range r.bs {
		b.Reserve(rows)
		if sb, ok := b.(*array.StringBuilder); ok && j < len(r.in) {
			size := 0
			for _, x := range r.outs {
				if lay != nil {
					size += len(x.e.slot(lay, j).s)
				} else if s, ok := x.e.boxes().row[j].(string); ok {
					size += len(s)
				}
			}
			sb.ReserveData(size)
		}
	}
	for _, x := range r.outs {
		for j := range r.in {
			var err error
			if lay != nil {
				err = x.e.appendSlot(lay, j, r.bs[j])
			} else {
				err = types.AppendValue(r.bs[j], x.e.boxes().row[j], r.t.Cols[j].Type)
			}
			if err != nil {
				r.outs = r.outs[:0]
				for _, b := range r.bs {
					b.Release()
				}
				r.bs = nil
				return nil, fmt.Errorf("stream: top-n output: %w", err)
			}
		}
		if r.t.RankCol {
			r.bs[len(r.in)].(*array.Int64Builder).Append(x.rank)
		}
	}
	clear(r.outs) // drop references to entries
	r.outs = r.outs[:0]
	cols := make([]arrow.Array, len(r.bs))
	for j, b := range r.bs {
		cols[j] = b.NewArray()
	}
	return array.NewRecordBatch(r.schema, cols, int64(rows)), nil
}

// holdMark records w among the watermarks held until the next barrier,
// keeping the highest per column.
func holdMark(marks []Watermark, w Watermark) []Watermark {
	for i := range marks {
		if marks[i].Col == w.Col {
			marks[i].Value = max(marks[i].Value, w.Value)
			return marks
		}
	}
	return append(marks, w)
}
