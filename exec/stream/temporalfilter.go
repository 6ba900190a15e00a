package stream

import (
	"container/heap"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// TemporalFilter keeps the rows where `Lhs Op Bound` holds, Bound being an
// expression of processing time only (now(), PROCTIME(), minus or plus
// an interval), non-decreasing as time passes: a temporal filter
// (RisingWave's DynamicFilter, Materialize's mz_now()). Bound is read from
// Env's clock once at Start and then at each barrier, so the output moves
// at epoch granularity; between barriers every row is judged against the
// bound of the last one. After each barrier the output is exactly the
// input rows that pass against that barrier's bound.
//
//   - Op ">" or ">=" (an upper kind: a row passes until the bound reaches
//     it): a row that passes goes out and is kept; at a barrier the kept
//     rows the new bound no longer passes go out as deletes, in Lhs order,
//     and are freed. A row that does not pass never will: it is dropped
//     (so is a retraction of it, whose insert was dropped or already
//     retracted).
//   - Op "<" or "<=" (a lower kind: a row passes once the bound passes
//     it): a row that passes goes out (and is not kept: it never leaves);
//     one that does not is held, and goes out as an insert at the barrier
//     whose bound passes it. A retraction of a held row cancels it, even
//     when the row passes by then (its insert never went out).
//
// A row whose Lhs is NULL never passes. The input may carry any changes
// (a changelog: HAVING over an aggregation); an update pair split by the
// filter becomes a delete or an insert. Watermarks are dropped (the output
// carries rows older than them); barriers pass after the rows they
// released.
//
// State: the kept (or held) rows, by identity with their count, in a
// min-heap on Lhs, and the current bound; so it is bounded by the rows
// inside the window. Checkpoints: temporalfilter_state.go.
type TemporalFilter struct {
	Input Node
	Lhs   expr.Expr // over Input's rows: timestamp or timestamptz
	Op    string    // ">", ">=", "<", "<="
	Bound expr.Expr // of processing time only, same type as Lhs
}

// Columns implements Node.
func (f *TemporalFilter) Columns() []types.Column { return f.Input.Columns() }

// Inputs implements Node.
func (f *TemporalFilter) Inputs() []Node { return []Node{f.Input} }

// Explain implements Node.
func (f *TemporalFilter) Explain() string {
	return fmt.Sprintf("StreamTemporalFilter: %s %s %s", f.Lhs, f.Op, f.Bound)
}

// upper reports whether rows leave (">", ">=") rather than enter.
func (f *TemporalFilter) upper() bool { return f.Op == ">" || f.Op == ">=" }

// Start implements Node.
func (f *TemporalFilter) Start(env *Env, inputs []<-chan Message) <-chan Message {
	r, err := f.newRun(env)
	var h func(Message) ([]Message, error)
	if r != nil {
		h = r.handle
	}
	return runStateful(env, f, r, err, inputs[0], h)
}

// tfRow is a kept row: its Lhs value, its count and its values.
type tfRow struct {
	t   int64
	n   int64
	row []types.Value
}

// tfRun is a running TemporalFilter, owned by its goroutine. rows holds
// the kept rows by identity (appendKey); order is a min-heap on (t, key)
// whose items may be stale (their row gone), skipped when popped.
type tfRun struct {
	f      *TemporalFilter
	env    *Env
	ectx   *expr.Context
	cols   []types.Column
	schema *arrow.Schema
	clock  Clock
	bound  int64
	hasB   bool
	rows   map[string]*tfRow
	order  tfHeap

	// checkpoints: dirty names the rows changed since the last snapshot
	// (ck: one was taken or restored).
	ck    bool
	dirty map[string]struct{}
}

func (f *TemporalFilter) newRun(env *Env) (*tfRun, error) {
	switch f.Op {
	case ">", ">=", "<", "<=":
	default:
		return nil, fmt.Errorf("stream: temporal filter operator %q", f.Op)
	}
	k := f.Lhs.Type().Kind
	if (k != types.Timestamp && k != types.TimestampTZ) || f.Bound.Type().Kind != k {
		return nil, fmt.Errorf("stream: temporal filter compares %s with %s", f.Lhs.Type(), f.Bound.Type())
	}
	cols := f.Input.Columns()
	r := &tfRun{f: f, env: env, ectx: env.evalContext(), cols: cols, schema: types.ArrowSchema(cols),
		clock: env.clock(), rows: map[string]*tfRow{}, dirty: map[string]struct{}{}}
	if err := r.tick(); err != nil {
		return nil, err
	}
	return r, nil
}

// boundAt evaluates Bound at processing time now; ok is false when it is NULL.
func (r *tfRun) boundAt() (int64, bool, error) {
	r.ectx.Now = r.clock.Now()
	one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	defer one.Release()
	a, err := r.f.Bound.Eval(r.ectx, one)
	if err != nil {
		return 0, false, fmt.Errorf("temporal filter bound: %w", err)
	}
	defer a.Release()
	ts, ok := a.(*array.Timestamp)
	if !ok {
		return 0, false, fmt.Errorf("stream: temporal filter bound is %s", a.DataType())
	}
	if ts.IsNull(0) {
		return 0, false, nil
	}
	return int64(ts.Value(0)), true, nil
}

// tick moves the bound to the clock's time (never back).
func (r *tfRun) tick() error {
	b, ok, err := r.boundAt()
	if err != nil || !ok {
		return err
	}
	if !r.hasB || b > r.bound {
		r.bound, r.hasB = b, true
	}
	return nil
}

// pass reports whether a row whose Lhs is t passes against the bound.
func (r *tfRun) pass(t int64) bool {
	if !r.hasB {
		return false
	}
	switch r.f.Op {
	case ">":
		return t > r.bound
	case ">=":
		return t >= r.bound
	case "<":
		return t < r.bound
	}
	return t <= r.bound
}

// handle processes one input message and returns the messages to send.
func (r *tfRun) handle(m Message) ([]Message, error) {
	switch m.Kind {
	case KindChunk:
		c, err := r.consume(m.Chunk)
		if err != nil || c == nil {
			return nil, err
		}
		return []Message{ChunkMsg(c)}, nil
	case KindWatermark:
		return nil, nil
	}
	if err := r.tick(); err != nil {
		return nil, err
	}
	if c := r.release(); c != nil {
		return []Message{ChunkMsg(c), m}, nil
	}
	return []Message{m}, nil
}

// consume judges a chunk's rows, updates the kept rows and returns what
// passes (nil: nothing).
func (r *tfRun) consume(c *Chunk) (*Chunk, error) {
	n := c.Len()
	if n == 0 {
		return nil, nil
	}
	a, err := r.f.Lhs.Eval(r.ectx, c.Rec)
	if err != nil && r.env.OnRowError != nil {
		a, err = evalRows(r.env, r.ectx, r.f.Lhs, c.Rec)
	}
	if err != nil {
		return nil, err
	}
	defer a.Release()
	ts, ok := a.(*array.Timestamp)
	if !ok {
		return nil, fmt.Errorf("stream: temporal filter value is %s", a.DataType())
	}
	mb := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer mb.Release()
	upper := r.f.upper()
	var key []byte
	for i := 0; i < n; i++ {
		if ts.IsNull(i) {
			mb.Append(false)
			continue
		}
		t := int64(ts.Value(i))
		p := r.pass(t)
		sign := c.Op(i).Sign()
		var row []types.Value
		if !upper && sign < 0 && len(r.rows) > 0 {
			// A retraction of a row still held cancels the held copy,
			// whether or not it passes now: its insert never went out. (A
			// replay after a restart judges rows against a bound that
			// moved on since the checkpoint, so a row held then may pass
			// now; its delete must not go out before its insert.)
			row = rowValues(c.Rec, i, r.cols)
			key = appendKey(key[:0], row, nil)
			if r.rows[string(key)] != nil {
				p = false // handled as a row that does not pass: it cancels
			}
		}
		mb.Append(p)
		if p != upper { // upper keeps what passes, lower holds what does not
			continue
		}
		if row == nil {
			row = rowValues(c.Rec, i, r.cols)
			key = appendKey(key[:0], row, nil)
		}
		r.change(string(key), t, row, sign)
	}
	mask := mb.NewBooleanArray()
	defer mask.Release()
	out, err := filterChunk(r.ectx, c, mask)
	if err != nil || out.Len() == 0 {
		return nil, err
	}
	return out, nil
}

// change adds sign copies of a row to the kept rows; a retraction of a
// row not kept changes nothing.
func (r *tfRun) change(key string, t int64, row []types.Value, sign int64) {
	e := r.rows[key]
	if e == nil {
		if sign < 0 {
			return
		}
		e = &tfRow{t: t, row: row}
		r.rows[key] = e
		heap.Push(&r.order, tfItem{t: t, key: key})
	}
	e.n += sign
	if e.n <= 0 {
		delete(r.rows, key)
	}
	if r.ck {
		r.dirty[key] = struct{}{}
	}
	if len(r.order) > 2*len(r.rows)+64 {
		r.compact()
	}
}

// compact rebuilds the heap without its stale items.
func (r *tfRun) compact() {
	r.order = r.order[:0]
	for k, e := range r.rows {
		r.order = append(r.order, tfItem{t: e.t, key: k})
	}
	heap.Init(&r.order)
}

// release pops the kept rows the bound has moved past (upper: they leave,
// as deletes) or reached (lower: they enter, as inserts), in Lhs order,
// and returns them as one chunk (nil: none).
func (r *tfRun) release() *Chunk {
	var out [][]types.Value
	upper := r.f.upper()
	for len(r.order) > 0 && r.pass(r.order[0].t) != upper {
		it := heap.Pop(&r.order).(tfItem)
		e := r.rows[it.key]
		if e == nil {
			continue // stale
		}
		for k := int64(0); k < e.n; k++ {
			out = append(out, e.row)
		}
		delete(r.rows, it.key)
		if r.ck {
			r.dirty[it.key] = struct{}{}
		}
	}
	if len(out) == 0 {
		return nil
	}
	c := &Chunk{Rec: r.build(out)}
	if upper {
		c.Ops = make([]Op, len(out))
		for i := range c.Ops {
			c.Ops[i] = Delete
		}
	}
	return c
}

// build makes a record of rows.
func (r *tfRun) build(rows [][]types.Value) arrow.RecordBatch {
	arrs := make([]arrow.Array, len(r.cols))
	for j, col := range r.cols {
		b := types.NewBuilder(memory.DefaultAllocator, col.Type)
		for _, row := range rows {
			if err := types.AppendValue(b, row[j], col.Type); err != nil {
				b.AppendNull() // cannot happen: the values came from this column
			}
		}
		arrs[j] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecordBatch(r.schema, arrs, int64(len(rows)))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

// tfItem is a kept row in Lhs order (key: its identity, for ties).
type tfItem struct {
	t   int64
	key string
}

type tfHeap []tfItem

func (h tfHeap) Len() int { return len(h) }
func (h tfHeap) Less(i, j int) bool {
	return h[i].t < h[j].t || (h[i].t == h[j].t && h[i].key < h[j].key)
}
func (h tfHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *tfHeap) Push(x any)   { *h = append(*h, x.(tfItem)) }
func (h *tfHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
