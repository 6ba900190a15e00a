package stream

import (
	"container/heap"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// AggClean makes a HashAgg close its groups by the watermark of one GROUP
// BY key, as windows close under EMIT ON WINDOW CLOSE (the planner sets it
// on an ordinary aggregation of an EOWC query whose key carries a
// watermark, say `max(num) GROUP BY window_start` over closed windows).
// Key is the position of that key in GroupBy, a plain reference to a
// timestamp column of the input.
//
// With Clean set, a group whose key is k is closed once the key column's
// watermark W passes k + Delay (k + Delay + Slack < W: no later row can
// reach it):
// its row goes out once, as an insert, right when the watermark arrives,
// and its state is freed. Until then nothing of it goes out (barriers emit
// nothing). A later row, insert or retraction, of a closed key, or one
// whose key is NULL (it never closes), is late: handed to Env.OnLate and
// dropped. The output is append only; the watermark goes out on the key's
// output column as W - Delay, after the rows it closed; other watermarks
// are dropped (open groups may hold older values). Memory is per open group.
type AggClean struct {
	Key   int
	Delay int64 // µs, not negative
	// Slack is -1 when the key's producer promises later rows strictly
	// above its watermark (a WindowAgg's window_start or window_end,
	// planner.markSlack): a key equal to the watermark is then closed
	// too, in the same watermark that closed its windows below. 0
	// otherwise.
	Slack int64
}

// aggCleaner is a running AggClean, owned by the HashAgg's goroutine: the
// key's watermark and a min-heap of (key, group) per group created,
// ordered by key then group id. Heap
// entries go stale when a group is freed (its rows retracted) and its id
// reused for another key; a popped entry counts only while the group still
// holds that key.
type aggCleaner struct {
	key   int   // position in GroupBy
	in    int   // input column of the key
	delay int64 // µs: Delay + Slack
	// outDelay is Delay: the output watermark is the input's minus it
	outDelay int64
	wm       int64 // the input watermark on in (math.MinInt64: none)
	outWM    int64 // the last watermark sent
	heap     groupHeap
	late     int64
	due      []int32 // scratch: the groups closing now
	keep     []bool  // scratch: per row, not late
}

func newAggCleaner(h *HashAgg) (*aggCleaner, error) {
	c := h.Clean
	if c.Key < 0 || c.Key >= len(h.GroupBy) || c.Delay < 0 || c.Slack > 0 || c.Slack < -1 {
		return nil, fmt.Errorf("stream: hashagg cleans on key %d (delay %d) of %d", c.Key, c.Delay, len(h.GroupBy))
	}
	ref, ok := h.GroupBy[c.Key].(*expr.ColRef)
	if !ok {
		return nil, fmt.Errorf("stream: hashagg cleans on key %s, which is not a column", h.GroupBy[c.Key])
	}
	if k := ref.T.Kind; k != types.Timestamp && k != types.TimestampTZ {
		return nil, fmt.Errorf("stream: hashagg cleans on key %s of type %s", ref, ref.T)
	}
	return &aggCleaner{key: c.Key, in: ref.Idx, delay: addSat(c.Delay, c.Slack), outDelay: c.Delay, wm: math.MinInt64, outWM: math.MinInt64}, nil
}

// closed reports whether a key of value t has closed (or is due now).
func (c *aggCleaner) closed(t int64) bool { return addSat(t, c.delay) < c.wm }

// dropLate hands the chunk's late rows to Env.OnLate and returns the chunk
// of the others (c itself when none is late; nil when all are).
func (c *aggCleaner) dropLate(r *aggRun, ch *Chunk) (*Chunk, error) {
	ts, ok := ch.Rec.Column(c.in).(*array.Timestamp)
	if !ok {
		return nil, fmt.Errorf("stream: hashagg key column is %s", ch.Rec.Column(c.in).DataType())
	}
	n := ch.Len()
	nlate := 0
	if ts.NullN() > 0 || c.wm != math.MinInt64 {
		c.keep = growSlice(c.keep[:0], n)
		for i := 0; i < n; i++ {
			c.keep[i] = !ts.IsNull(i) && !c.closed(int64(ts.Value(i)))
			if !c.keep[i] {
				nlate++
			}
		}
	}
	if nlate == 0 {
		return ch, nil
	}
	c.late += int64(nlate)
	if r.env.OnLate != nil {
		lr, err := filterRows(r, ch.Rec, c.keep[:n], false)
		if err != nil {
			return nil, err
		}
		r.env.late(r.h, lr)
	}
	if nlate == n {
		return nil, nil
	}
	rest, err := filterRows(r, ch.Rec, c.keep[:n], true)
	if err != nil {
		return nil, err
	}
	out := &Chunk{Rec: rest}
	if ch.Ops != nil {
		out.Ops = make([]Op, 0, rest.NumRows())
		for i, k := range c.keep[:n] {
			if k {
				out.Ops = append(out.Ops, ch.Ops[i])
			}
		}
	}
	return out, nil
}

// filterRows selects the rows of rec whose mask is want.
func filterRows(r *aggRun, rec arrow.RecordBatch, mask []bool, want bool) (arrow.RecordBatch, error) {
	return exec.SelectRows(r.ectx.Allocator(), rec, mask, want), nil
}

// noteNew records the key of each group the last probe created.
func (c *aggCleaner) noteNew(r *aggRun, keys []arrow.Array, gids []int32) {
	ts := keys[c.key].(*array.Timestamp) // dropLate checked the type
	for _, row := range r.table.newRows {
		heap.Push(&c.heap, cleanItem{v: int64(ts.Value(int(row))), g: gids[row]})
	}
}

// advance moves the watermark to wm and returns the rows of the groups it
// closed (nil: none), in key order; their state is freed.
func (c *aggCleaner) advance(r *aggRun, wm int64) (*Chunk, error) {
	c.wm = wm
	c.due = c.due[:0]
	kc := r.keys[c.key]
	for len(c.heap) > 0 && c.closed(c.heap[0].v) {
		it := heap.Pop(&c.heap).(cleanItem)
		if int(it.g) >= r.ngroups || r.rows[it.g] <= 0 {
			continue // emptied (freed at the barrier) or already closed
		}
		if k := kc.get(it.g); k.null || k.a != it.v {
			continue // stale: the id now holds another key
		}
		c.due = append(c.due, it.g)
		r.rows[it.g] = 0 // closed: a duplicate entry of the same key skips it
	}
	if len(c.due) == 0 {
		return nil, nil
	}
	f := &r.fl
	f.og, f.src = f.og[:0], f.src[:0]
	for t, g := range c.due {
		f.og, f.src = append(f.og, g), append(f.src, int32(t))
	}
	for j, a := range r.aggs {
		f.res[j] = growSlice(f.res[j][:0], len(c.due))
		if err := a.results(c.due, f.res[j]); err != nil {
			return nil, err
		}
	}
	rec, err := r.output()
	if err != nil {
		return nil, err
	}
	for j := range f.res {
		clear(f.res[j]) // drop the strings
	}
	for _, g := range c.due {
		r.mark[g] = false // the barrier skips it (see flushClean)
		r.free(g)
	}
	return &Chunk{Rec: rec}, nil
}

// watermark returns the output watermark after advance (ok false: it did
// not rise).
func (c *aggCleaner) watermark() (Watermark, bool) {
	v := addSat(c.wm, -c.outDelay)
	if v <= c.outWM {
		return Watermark{}, false
	}
	c.outWM = v
	return Watermark{Col: c.key, Value: v}, true
}

// flushClean is the barrier of a cleaning HashAgg: it emits nothing and
// frees the epoch's groups whose rows were all retracted. A closed group's
// mark was cleared when it closed; its id may have been reused (and
// listed again) since.
func (r *aggRun) flushClean() {
	for _, g := range r.touched {
		if !r.mark[g] {
			continue
		}
		r.mark[g] = false
		r.markDirty(g)
		if r.rows[g] == 0 {
			r.free(g)
		}
	}
	r.touched = r.touched[:0]
}

// handleClean processes a watermark of a cleaning HashAgg and returns the
// messages to send.
func (r *aggRun) handleClean(w Watermark) ([]Message, error) {
	c := r.clean
	if w.Col != c.in || w.Value <= c.wm {
		return nil, nil
	}
	ch, err := c.advance(r, w.Value)
	if err != nil {
		return nil, err
	}
	var msgs []Message
	if ch != nil {
		msgs = append(msgs, ChunkMsg(ch))
	}
	if m, ok := c.watermark(); ok {
		msgs = append(msgs, WatermarkMsg(m))
	}
	return msgs, nil
}

// handleCleanMsg processes a chunk or watermark of a cleaning HashAgg and
// returns the messages to send.
func (r *aggRun) handleCleanMsg(m Message) ([]Message, error) {
	switch m.Kind {
	case KindChunk:
		ch, err := r.clean.dropLate(r, m.Chunk)
		if err != nil || ch == nil {
			return nil, err
		}
		if ch != m.Chunk {
			defer ch.Rec.Release()
		}
		return nil, r.consume(ch)
	case KindWatermark:
		return r.handleClean(m.Watermark)
	}
	return []Message{m}, nil
}

// groupHeap is a min-heap of (key, group id): groups of one key close in
// id order, which does not depend on the heap's history (a restored
// cleaner rebuilds it from the live groups).
type groupHeap []cleanItem

func (h groupHeap) Len() int { return len(h) }
func (h groupHeap) Less(i, j int) bool {
	return h[i].v < h[j].v || (h[i].v == h[j].v && h[i].g < h[j].g)
}
func (h groupHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *groupHeap) Push(x any)   { *h = append(*h, x.(cleanItem)) }
func (h *groupHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
