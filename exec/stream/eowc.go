package stream

import (
	"container/heap"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// EOWC is EMIT ON WINDOW CLOSE on a query without a windowed aggregation
// (streaming-sql.md section 4): each row of Input is held until the
// watermark of its time column TimeCol passes it, i.e. reaches t + Delay +
// 1µs (a watermark W says no later row has t < W), and then goes out once,
// as an insert, in the order of t. A retraction of a held row cancels it
// (by identity, one copy per retraction); a row, insert or retraction,
// whose time the watermark has already passed is late: it is handed to
// Env.OnLate and dropped, as is a row whose time is NULL (it never
// closes). The output is append only; a watermark on TimeCol goes out as
// the input's minus Delay, after the rows it released; other watermarks
// are dropped (held rows may be older). Barriers pass through.
//
// State: every held row (its chunk is kept while any of its rows is held).
// Checkpoints write the rows held or gone since the last (eowc_state.go).
type EOWC struct {
	Input   Node
	TimeCol int
	Delay   int64 // µs, not negative
}

// Columns implements Node.
func (e *EOWC) Columns() []types.Column { return e.Input.Columns() }

// Inputs implements Node.
func (e *EOWC) Inputs() []Node { return []Node{e.Input} }

// Explain implements Node.
func (e *EOWC) Explain() string {
	s := fmt.Sprintf("StreamEowc: %s", e.Input.Columns()[e.TimeCol].Name)
	if e.Delay > 0 {
		s += ", delay " + time.Duration(e.Delay*1000).String()
	}
	return s
}

// Start implements Node.
func (e *EOWC) Start(env *Env, inputs []<-chan Message) <-chan Message {
	r, err := e.newRun(env)
	return runStateful(env, e, r, err, inputs[0], r.handle)
}

// eowcRun is a running EOWC, owned by its goroutine. Held rows are refs
// into segs (the chunks they came in); live counts each segment's held
// rows, and a segment is released when it reaches 0. pending orders the
// held rows by time (and arrival); byHash finds a held row for a
// retraction; dead marks pending refs a retraction canceled. Checkpoints:
// eowc_state.go.
type eowcRun struct {
	e      *EOWC
	env    *Env
	cols   []types.Column
	schema *arrow.Schema
	wm     int64 // the time column's watermark (math.MinInt64: none)
	late   int64

	segs    []arrow.RecordBatch
	live    []int32
	nlive   int // segments with held rows
	pending eowcHeap
	seq     uint64
	byHash  map[uint64][]eowcHeld
	dead    map[ref]struct{}
	hashes  []uint64

	// checkpoints (eowc_state.go): once a snapshot was taken or restored,
	// the rows held and the rows released or canceled since.
	ck      bool
	ckSeq   uint64 // seq at the last snapshot
	ckAdded []eowcItem
	ckGone  []uint64
}

func (e *EOWC) newRun(env *Env) (*eowcRun, error) {
	cols := e.Input.Columns()
	if e.TimeCol < 0 || e.TimeCol >= len(cols) {
		return nil, fmt.Errorf("stream: eowc time column %d of %d", e.TimeCol, len(cols))
	}
	if k := cols[e.TimeCol].Type.Kind; k != types.Timestamp && k != types.TimestampTZ {
		return nil, fmt.Errorf("stream: eowc time column is %s", cols[e.TimeCol].Type)
	}
	if e.Delay < 0 {
		return nil, fmt.Errorf("stream: eowc delay %d is negative", e.Delay)
	}
	return &eowcRun{e: e, env: env, cols: cols, schema: types.ArrowSchema(cols), wm: math.MinInt64,
		byHash: map[uint64][]eowcHeld{}, dead: map[ref]struct{}{}}, nil
}

// handle processes one input message and returns the messages to send.
func (r *eowcRun) handle(m Message) ([]Message, error) {
	switch m.Kind {
	case KindChunk:
		return nil, r.consume(m.Chunk)
	case KindWatermark:
		if m.Watermark.Col != r.e.TimeCol || m.Watermark.Value <= r.wm {
			return nil, nil
		}
		r.wm = m.Watermark.Value
		var msgs []Message
		if c := r.release(); c != nil {
			msgs = append(msgs, ChunkMsg(c))
		}
		return append(msgs, WatermarkMsg(Watermark{Col: r.e.TimeCol, Value: addSat(r.wm, -r.e.Delay)})), nil
	}
	return []Message{m}, nil
}

// closed reports whether a row of time t is due (or, arriving now, late).
func (r *eowcRun) closed(t int64) bool { return addSat(t, r.e.Delay) < r.wm }

// consume holds the chunk's inserts, cancels held rows its retractions
// name, and hands late rows to Env.OnLate.
func (r *eowcRun) consume(c *Chunk) error {
	n := c.Len()
	if n == 0 {
		return nil
	}
	tcol, ok := c.Rec.Column(r.e.TimeCol).(*array.Timestamp)
	if !ok {
		return fmt.Errorf("stream: eowc time column is %s", c.Rec.Column(r.e.TimeCol).DataType())
	}
	r.hashes = rowHashes(c.Rec, r.cols, r.hashes)
	seg := int32(len(r.segs))
	var late []int
	held := int32(0)
	for i := 0; i < n; i++ {
		if tcol.IsNull(i) || r.closed(int64(tcol.Value(i))) {
			late = append(late, i)
			continue
		}
		h := r.hashes[i]
		if c.Op(i).Sign() > 0 {
			r.seq++
			it := eowcItem{t: int64(tcol.Value(i)), seq: r.seq, h: h, ref: ref{seg: seg, row: int32(i)}}
			heap.Push(&r.pending, it)
			r.byHash[h] = append(r.byHash[h], eowcHeld{it.ref, it.seq})
			if r.ck {
				r.ckAdded = append(r.ckAdded, it)
			}
			held++
			continue
		}
		// A retraction that names no held row retracts one that was never
		// held here (it was late itself): nothing to cancel.
		r.cancel(h, c.Rec, i, seg)
	}
	if held > 0 {
		c.Rec.Retain()
		r.segs = append(r.segs, c.Rec)
		r.live = append(r.live, held)
		r.nlive++
	}
	if len(late) > 0 {
		r.late += int64(len(late))
		if r.env.OnLate != nil {
			refs := make([]ref, len(late))
			for k, i := range late {
				refs[k] = ref{seg: 0, row: int32(i)}
			}
			r.env.late(r.e, r.gather([]arrow.RecordBatch{c.Rec}, refs))
		}
	}
	return nil
}

// cancel drops one held row identical to row i of rec (whose hash is h);
// rows held from rec itself (segment seg, not yet in segs) count too.
func (r *eowcRun) cancel(h uint64, rec arrow.RecordBatch, i int, seg int32) bool {
	list := r.byHash[h]
	for k := len(list) - 1; k >= 0; k-- {
		it := list[k]
		other := rec
		if it.ref.seg != seg {
			other = r.segs[it.ref.seg]
		}
		if !sameRowAt(other, int(it.ref.row), rec, i, r.cols) {
			continue
		}
		r.unindex(h, it.ref)
		r.dead[it.ref] = struct{}{}
		if r.ck {
			r.ckGone = append(r.ckGone, it.seq)
		}
		return true
	}
	return false
}

// release pops every held row the watermark passed, in time order, and
// returns them as one insert chunk (nil: none). A segment is released once
// its last pending row (held or canceled) is popped.
func (r *eowcRun) release() *Chunk {
	var refs []ref
	var done []int32
	for len(r.pending) > 0 && r.closed(r.pending[0].t) {
		it := heap.Pop(&r.pending).(eowcItem)
		if _, ok := r.dead[it.ref]; ok {
			delete(r.dead, it.ref)
		} else {
			refs = append(refs, it.ref)
			r.unindex(it.h, it.ref)
			if r.ck {
				r.ckGone = append(r.ckGone, it.seq)
			}
		}
		if r.live[it.ref.seg]--; r.live[it.ref.seg] == 0 {
			done = append(done, it.ref.seg)
		}
	}
	var c *Chunk
	if len(refs) > 0 {
		c = &Chunk{Rec: r.gather(r.segs, refs)}
	}
	for _, s := range done {
		r.segs[s].Release()
		r.segs[s] = nil
		r.nlive--
	}
	if r.nlive == 0 {
		clear(r.segs)
		r.segs, r.live = r.segs[:0], r.live[:0]
	}
	return c
}

// unindex removes rf from byHash[h].
func (r *eowcRun) unindex(h uint64, rf ref) {
	list := r.byHash[h]
	for j, x := range list {
		if x.ref == rf {
			list = append(list[:j], list[j+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(r.byHash, h)
	} else {
		r.byHash[h] = list
	}
}

// gather builds a record of the rows refs name in recs.
func (r *eowcRun) gather(recs []arrow.RecordBatch, refs []ref) arrow.RecordBatch {
	arrs := make([]arrow.Array, len(r.cols))
	for c, col := range r.cols {
		arrs[c] = gather(col.Type, recs, c, refs)
	}
	return array.NewRecordBatch(r.schema, arrs, int64(len(refs)))
}

// eowcHeld is a held row in byHash: where it is and its arrival number.
type eowcHeld struct {
	ref ref
	seq uint64
}

// eowcItem is a held row in time order (seq: arrival, for ties).
type eowcItem struct {
	t   int64
	seq uint64
	h   uint64 // the row's hash (byHash)
	ref ref
}

type eowcHeap []eowcItem

func (h eowcHeap) Len() int { return len(h) }
func (h eowcHeap) Less(i, j int) bool {
	return h[i].t < h[j].t || (h[i].t == h[j].t && h[i].seq < h[j].seq)
}
func (h eowcHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eowcHeap) Push(x any)   { *h = append(*h, x.(eowcItem)) }
func (h *eowcHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
