package stream

import (
	"container/heap"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// TopNClose makes a TopN a top-N per time window: one of its partition
// columns is a time (window_start, window_end, or a WATERMARK FOR column)
// whose watermark closes partitions. A partition whose value there is v is
// complete once the watermark W of that input column satisfies
// W > v + Slack (Slack <= 0: -1 when the producer promises that later rows
// are strictly above its watermark, as WindowAgg does): no row of it can
// come any more.
//
// ON UPDATE (EOWC false): the TopN emits per epoch as always; at each
// barrier, after the epoch's changes, the partitions the held watermark
// completed are freed (their emitted rows stay downstream). EOWC: nothing
// is emitted per epoch; when the watermark completes a partition its top
// rows (with their ranks) go out once, as inserts, and it is freed; then
// the watermark goes out (only that column's: other columns of rows still
// held may be older). In both modes a row (insert or retraction) of a
// partition that the watermark already completed when it arrives, freed or
// never seen, is late: it goes to Env.OnLate and is dropped. A NULL value
// never completes.
type TopNClose struct {
	Part  int   // index into TopN.PartitionBy; that expression is a ColRef to Col
	Col   int   // the input column (timestamp or timestamptz)
	Slack int64 // see above; not positive
	EOWC  bool
	// Delay (µs, not negative) holds EOWC partitions longer: complete when
	// W > v + Slack + Delay; the watermark goes out minus Delay.
	Delay int64
}

func (c *TopNClose) String() string {
	s := "freed when the watermark passes it"
	if c.EOWC {
		s = "emitted once and freed when the watermark passes it"
	}
	return s
}

// tnClosing orders open partitions by the value (v + Slack) above which
// the watermark completes them, then by their encoding (so that the order
// partitions close in, and are emitted in, does not depend on the order
// they were pushed in: a restored heap closes them as the original). A
// partition freed for being empty stays in the heap until popped
// (tnPart.gone).
type tnClosing []*tnPart

func (h tnClosing) Len() int { return len(h) }
func (h tnClosing) Less(i, j int) bool {
	return h[i].closeAt < h[j].closeAt || (h[i].closeAt == h[j].closeAt && h[i].enc < h[j].enc)
}
func (h tnClosing) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *tnClosing) Push(x any)   { *h = append(*h, x.(*tnPart)) }
func (h *tnClosing) Pop() any {
	old := *h
	p := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return p
}

// closeCheck validates t.Close against the input's columns.
func (t *TopN) closeCheck() error {
	c := t.Close
	if c == nil {
		return nil
	}
	in := t.Input.Columns()
	if c.Part < 0 || c.Part >= len(t.PartitionBy) || c.Col < 0 || c.Col >= len(in) || c.Slack > 0 || c.Delay < 0 || (c.Delay > 0 && !c.EOWC) {
		return fmt.Errorf("stream: top-n close on partition %d, column %d, slack %d", c.Part, c.Col, c.Slack)
	}
	if k := in[c.Col].Type.Kind; k != types.Timestamp && k != types.TimestampTZ {
		return fmt.Errorf("stream: top-n close column is %s", in[c.Col].Type)
	}
	return nil
}

// closeValue returns the partition-closing value (v + Slack) of row i, or
// MaxInt64 when the value is NULL (it never closes).
func (r *topnRun) closeValue(parts []arrow.Array, i int) int64 {
	a, ok := parts[r.t.Close.Part].(*array.Timestamp)
	if !ok || a.IsNull(i) {
		return math.MaxInt64
	}
	return addSat(addSat(int64(a.Value(i)), r.t.Close.Slack), r.t.Close.Delay)
}

// isLate reports whether a row closing at v arrives for a completed
// partition: the watermark decides, as soon as it arrives (under EOWC the
// partition is closed then; under ON UPDATE it is freed at the next
// barrier, lateWM).
func (r *topnRun) isLate(v int64) bool {
	if v == math.MaxInt64 {
		return false
	}
	return v < r.closedWM || v < r.lateWM
}

// lateRows hands rows of rec to Env.OnLate.
func (r *topnRun) lateRows(rec arrow.RecordBatch, rows []int) {
	r.late += int64(len(rows))
	if r.env.OnLate == nil {
		return
	}
	refs := make([]ref, len(rows))
	for k, i := range rows {
		refs[k] = ref{row: int32(i)}
	}
	arrs := make([]arrow.Array, len(r.in))
	for c, col := range r.in {
		arrs[c] = gather(col.Type, []arrow.RecordBatch{rec}, c, refs)
	}
	r.env.late(r.t, array.NewRecordBatch(types.ArrowSchema(r.in), arrs, int64(len(rows))))
}

// closeUpTo completes the partitions whose closing value is below wm:
// under EOWC their rows are appended to the output builders; in every mode
// they are freed. It returns the output chunk (nil: none).
func (r *topnRun) closeUpTo(wm int64) (*Chunk, error) {
	if wm <= r.closedWM {
		return nil, nil
	}
	r.closedWM = wm
	r.ops, r.outs = r.ops[:0], r.outs[:0]
	for len(r.closing) > 0 && r.closing[0].closeAt < wm {
		p := heap.Pop(&r.closing).(*tnPart)
		if p.gone {
			continue
		}
		if r.t.Close.EOWC {
			r.next = r.ranked(r.next[:0], p)
			for _, x := range r.next {
				if err := r.emit(Insert, x.e, x.rank); err != nil {
					return nil, err
				}
			}
		}
		if r.ck {
			r.ckFree(p)
		}
		p.gone = true
		r.held -= p.rows.rows
		r.parts.delete(p.enc)
	}
	clear(r.next)
	if len(r.ops) == 0 {
		return nil, nil
	}
	rec, err := r.finish(len(r.ops))
	if err != nil {
		return nil, err
	}
	return &Chunk{Rec: rec}, nil
}
