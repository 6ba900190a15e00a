package stream

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// OverWindow computes window functions (f(...) OVER (PARTITION BY ...
// ORDER BY ... frame)) over a changelog: each output row is an input row
// followed by one value per call (Cols: the input's columns, then one per
// Calls). Any window function and frame of the batch engine works, and
// calls may have different partitions and orders.
//
// Calls with the same PARTITION BY share partitions. A change in a
// partition marks it; at the epoch's barrier every marked partition is
// recomputed whole by the batch engine (exec.Window over its rows, kept in
// arrival order so that ties keep their results) and the rows whose
// values changed go out: Deletes of the rows retracted, then an
// UpdateBefore/UpdateAfter pair per row whose results changed, then
// Inserts of the new rows. A row keeps its identity (the input's stream
// key stays the output's). An error of a window function (ntile(0)) makes
// that partition's results of the call NULL and goes to Env.OnRowError
// (without it, it stops the graph). Watermarks are held to the barrier and
// forwarded after its rows (a result may change at any later epoch, but
// the input columns of later rows still obey them).
//
// With EOWC set the operator emits each row once, when the watermark
// completes its frames, and frees rows no frame reaches any more: see
// overwindow_eowc.go.
//
// State: every live row (its values and last results) and, per call
// group, its partitions' rows. An epoch costs O(size) per touched
// partition. Checkpoints write the rows whose state changed
// (overwindow_state.go).
type OverWindow struct {
	Input Node
	Calls []exec.WindowCall // over the input's columns
	Cols  []types.Column
	EOWC  *OverEOWC
}

// Columns implements Node.
func (w *OverWindow) Columns() []types.Column { return w.Cols }

// Inputs implements Node.
func (w *OverWindow) Inputs() []Node { return []Node{w.Input} }

// Explain implements Node.
func (w *OverWindow) Explain() string {
	node := &exec.Window{Input: nil, Calls: w.Calls, Cols: w.Cols}
	s := "StreamOverWindow: " + strings.TrimPrefix(node.Explain(), "WindowAgg: ")
	if w.EOWC != nil {
		s += ", " + w.EOWC.String(w.Input.Columns())
	}
	return s
}

// Start implements Node.
func (w *OverWindow) Start(env *Env, inputs []<-chan Message) <-chan Message {
	r, err := w.newRun(env)
	var marks []Watermark
	return runStateful(env, w, r, err, inputs[0], func(m Message) (msgs []Message, err error) {
		switch {
		case m.Kind == KindChunk:
			err = r.consume(m.Chunk)
		case w.EOWC != nil:
			msgs, err = r.eowcHandle(m)
		case m.Kind == KindWatermark:
			marks = holdMark(marks, m.Watermark)
		case m.Kind == KindBarrier:
			var c *Chunk
			if c, err = r.flush(); c != nil {
				msgs = append(msgs, ChunkMsg(c))
			}
			for _, w := range marks {
				msgs = append(msgs, WatermarkMsg(w))
			}
			marks = marks[:0]
			msgs = append(msgs, m)
		}
		return msgs, err
	})
}

// owRow is one live copy of an input row: its values, its current
// results (one per call), the results last emitted (nil: not emitted) and
// its partition in each call group (under EOWC nil once freed from it).
type owRow struct {
	vals  []types.Value
	res   []types.Value
	out   []types.Value
	parts []*owPart
	dead  bool
	dirty bool // in overRun.dirty
	ck    bool // in overRun.ckRows
	seq   uint64
}

// owPart is a partition of one call group: its rows in arrival order.
type owPart struct {
	enc     string
	rows    []*owRow
	touched bool
	ck      bool       // in overRun.ckParts
	eowc    owEOWCPart // EOWC progress (overwindow_eowc.go)
}

// owGroup is the calls that share a PARTITION BY, and their partitions.
type owGroup struct {
	calls []int // indices into OverWindow.Calls
	node  exec.Window
	part  []expr.Expr
	partT []types.T
	parts map[string]*owPart
	touch []*owPart
}

// overRun is a running OverWindow, owned by its goroutine.
type overRun struct {
	w      *OverWindow
	env    *Env
	ectx   *expr.Context
	xctx   *exec.Context
	in     []types.Column
	groups []*owGroup
	byVals map[string][]*owRow // live copies by the encoding of their values
	dirty  []*owRow
	seq    uint64
	enc    []byte
	schema *arrow.Schema
	eowc   *owEOWCRun

	// checkpoints (overwindow_state.go): once a snapshot was taken or
	// restored, the rows and EOWC partitions changed since.
	ck      bool
	ckSeq   uint64 // seq at the last snapshot
	ckRows  []*owRow
	ckParts []owPartRef
}

func (w *OverWindow) newRun(env *Env) (*overRun, error) {
	in := w.Input.Columns()
	if len(w.Cols) != len(in)+len(w.Calls) {
		return nil, fmt.Errorf("stream: over window has %d columns for %d input columns and %d calls", len(w.Cols), len(in), len(w.Calls))
	}
	r := &overRun{w: w, env: env, ectx: env.evalContext(), in: in, byVals: map[string][]*owRow{}, schema: types.ArrowSchema(w.Cols)}
	r.xctx = &exec.Context{Eval: r.ectx}
	// The batch node reads the partition's rows plus their position.
	scanCols := append(slices.Clone(in), types.Column{Name: "?pos", Type: types.TInt8})
	byPart := map[string]*owGroup{}
	for i, c := range w.Calls {
		if c.Distinct {
			return nil, pgerr.Unsupported("DISTINCT is not implemented for window functions")
		}
		key := fmt.Sprint(c.PartitionBy)
		g := byPart[key]
		if g == nil {
			g = &owGroup{part: c.PartitionBy, parts: map[string]*owPart{}}
			for _, p := range c.PartitionBy {
				g.partT = append(g.partT, p.Type())
			}
			g.node.Cols = slices.Clone(scanCols)
			byPart[key] = g
			r.groups = append(r.groups, g)
		}
		g.calls = append(g.calls, i)
		g.node.Calls = append(g.node.Calls, c)
		g.node.Cols = append(g.node.Cols, w.Cols[len(in)+i])
	}
	if w.EOWC != nil {
		var err error
		if r.eowc, err = w.EOWC.newRun(w, r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// consume applies one chunk: inserts add a row copy to its partitions,
// retractions remove one identical copy.
func (r *overRun) consume(c *Chunk) error {
	n := c.Len()
	if n == 0 {
		return nil
	}
	parts := make([][]arrow.Array, len(r.groups))
	for gi, g := range r.groups {
		for _, e := range g.part {
			a, err := evalOrNull(r.env, r.ectx, e, c.Rec)
			if err != nil {
				for _, ps := range parts {
					releaseAll(ps)
				}
				return err
			}
			parts[gi] = append(parts[gi], a)
		}
	}
	defer func() {
		for _, ps := range parts {
			releaseAll(ps)
		}
	}()
	var late []int
	for i := 0; i < n; i++ {
		vals := rowValues(c.Rec, i, r.in)
		if r.eowc != nil && r.eowc.isLate(vals) {
			late = append(late, i)
			continue
		}
		if r.eowc != nil && c.Op(i).Sign() < 0 {
			return pgerr.Internal("stream: over window: a %s on an append-only input", c.Op(i))
		}
		r.enc = appendKey(r.enc[:0], vals, nil)
		if c.Op(i).Sign() < 0 {
			if err := r.retract(string(r.enc)); err != nil {
				return err
			}
			continue
		}
		for j, v := range vals {
			vals[j] = ownDeep(v)
		}
		r.seq++
		row := &owRow{vals: vals, res: make([]types.Value, len(r.w.Calls)), parts: make([]*owPart, len(r.groups)), seq: r.seq}
		if r.eowc == nil { // EOWC: append only, nothing is retracted
			r.byVals[string(r.enc)] = append(r.byVals[string(r.enc)], row)
		}
		for gi, g := range r.groups {
			r.enc = r.enc[:0]
			for k, a := range parts[gi] {
				r.enc = encodeKey(r.enc, a, i, g.partT[k])
			}
			p := g.parts[string(r.enc)]
			if p == nil {
				p = &owPart{enc: string(r.enc)}
				g.parts[p.enc] = p
			}
			row.parts[gi] = p
			if r.eowc != nil {
				r.eowc.insert(g, p, row)
				r.ckRow(row)
				continue
			}
			p.rows = append(p.rows, row)
			r.touch(g, p)
		}
		if r.eowc == nil {
			r.markDirty(row)
		}
	}
	if len(late) > 0 {
		r.eowc.lateRows(c.Rec, late)
	}
	return nil
}

// retract removes the latest live copy of the row encoded as enc.
func (r *overRun) retract(enc string) error {
	list := r.byVals[enc]
	if len(list) == 0 {
		return pgerr.Internal("stream: over window: a retraction of a row it does not hold")
	}
	row := list[len(list)-1]
	if len(list) == 1 {
		delete(r.byVals, enc)
	} else {
		list[len(list)-1] = nil
		r.byVals[enc] = list[:len(list)-1]
	}
	row.dead = true
	for gi, p := range row.parts {
		if k := slices.Index(p.rows, row); k >= 0 {
			p.rows = slices.Delete(p.rows, k, k+1)
		}
		r.touch(r.groups[gi], p)
	}
	r.markDirty(row)
	return nil
}

func (r *overRun) touch(g *owGroup, p *owPart) {
	if !p.touched {
		p.touched = true
		g.touch = append(g.touch, p)
	}
}

func (r *overRun) markDirty(row *owRow) {
	if !row.dirty {
		row.dirty = true
		r.dirty = append(r.dirty, row)
	}
}

// flush recomputes the touched partitions and returns the epoch's changes
// (nil: none).
func (r *overRun) flush() (*Chunk, error) {
	for _, g := range r.groups {
		var batch []owSpan
		for _, p := range g.touch {
			p.touched = false
			if len(p.rows) == 0 {
				delete(g.parts, p.enc)
				continue
			}
			batch = append(batch, owSpan{rows: p.rows, from: 0, to: len(p.rows)})
		}
		clear(g.touch)
		g.touch = g.touch[:0]
		if err := r.recompute(g, batch); err != nil {
			return nil, err
		}
	}
	return r.emitDirty()
}

// owSpan is one partition's rows (in order) given to the batch engine, of
// which rows[from:to] take the results.
type owSpan struct {
	rows     []*owRow
	from, to int
}

// recompute runs g's calls over the partitions of spans with the batch
// engine, all in one exec.Window (it partitions them again, and orders
// ties by position, that is by arrival), and stores the results of each
// span's rows[from:to]; rows whose results change become dirty. If the
// batch fails (a window function's error), each span is computed alone,
// and a span that fails gets NULL results (Env.OnRowError).
func (r *overRun) recompute(g *owGroup, spans []owSpan) error {
	if len(spans) == 0 {
		return nil
	}
	var rows []*owRow
	var take []bool
	for _, sp := range spans {
		for k := range sp.rows {
			take = append(take, k >= sp.from && k < sp.to)
		}
		rows = append(rows, sp.rows...)
	}
	err := r.compute(g, rows, take)
	if err == nil || r.env.OnRowError == nil || r.env.Ctx.Err() != nil {
		return err
	}
	if len(spans) > 1 {
		for _, sp := range spans {
			if err := r.recompute(g, []owSpan{sp}); err != nil {
				return err
			}
		}
		return nil
	}
	r.env.OnRowError(err)
	sp := spans[0]
	for _, row := range sp.rows[sp.from:sp.to] {
		for _, ci := range g.calls {
			if row.res[ci] != nil || row.out == nil {
				row.res[ci] = nil
				r.markDirty(row)
			}
		}
	}
	return nil
}

// compute runs g's calls over rows and stores the results of the rows
// take selects.
func (r *overRun) compute(g *owGroup, rows []*owRow, take []bool) error {
	rec, err := r.partRecord(rows)
	if err != nil {
		return err
	}
	node := g.node
	node.Input = &exec.FuncScan{Name: "over window partitions", Cols: node.Cols[:len(r.in)+1],
		Produce: func(*exec.Context) ([]arrow.RecordBatch, error) { return []arrow.RecordBatch{rec}, nil }}
	it, err := node.Open(r.xctx)
	if err != nil {
		return err
	}
	defer it.Close()
	base := len(r.in) + 1
	for {
		b, err := it.Next()
		if err != nil {
			return fmt.Errorf("stream: over window: %w", err)
		}
		if b == nil {
			return nil
		}
		pos := b.Column(len(r.in)).(*array.Int64)
		for i := 0; i < int(b.NumRows()); i++ {
			k := int(pos.Value(i))
			if !take[k] {
				continue
			}
			row := rows[k]
			for j, ci := range g.calls {
				v := ownDeep(types.ValueAt(b.Column(base+j), i, r.w.Cols[len(r.in)+ci].Type))
				if row.out == nil || tnIdentity(v, row.res[ci]) != 0 {
					row.res[ci] = v
					r.markDirty(row)
				}
			}
		}
		b.Release()
	}
}

// partRecord builds a record of rows (the input's columns, then each
// row's position in rows).
func (r *overRun) partRecord(rows []*owRow) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, len(r.in)+1)
	for j, c := range r.in {
		b := types.NewBuilder(r.ectx.Allocator(), c.Type)
		b.Reserve(len(rows))
		for _, row := range rows {
			if err := types.AppendValue(b, row.vals[j], c.Type); err != nil {
				b.Release()
				return nil, fmt.Errorf("stream: over window: %w", err)
			}
		}
		cols[j] = b.NewArray()
		b.Release()
	}
	pb := array.NewInt64Builder(r.ectx.Allocator())
	pb.Reserve(len(rows))
	for k := range rows {
		pb.Append(int64(k))
	}
	cols[len(r.in)] = pb.NewArray()
	pb.Release()
	schema := types.ArrowSchema(append(slices.Clone(r.in), types.Column{Name: "?pos", Type: types.TInt8}))
	return array.NewRecordBatch(schema, cols, int64(len(rows))), nil
}

// emitDirty emits the dirty rows' changes: Deletes, update pairs, then
// Inserts (nil: nothing changed).
func (r *overRun) emitDirty() (*Chunk, error) {
	bs := make([]array.Builder, len(r.w.Cols))
	for j, c := range r.w.Cols {
		bs[j] = types.NewBuilder(r.ectx.Allocator(), c.Type)
	}
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	var ops []Op
	add := func(op Op, row *owRow, res []types.Value) error {
		for j, v := range row.vals {
			if err := types.AppendValue(bs[j], v, r.in[j].Type); err != nil {
				return fmt.Errorf("stream: over window output: %w", err)
			}
		}
		for j, v := range res {
			if err := types.AppendValue(bs[len(r.in)+j], v, r.w.Cols[len(r.in)+j].Type); err != nil {
				return fmt.Errorf("stream: over window output: %w", err)
			}
		}
		ops = append(ops, op)
		return nil
	}
	for pass := 0; pass < 3; pass++ {
		for _, row := range r.dirty {
			var err error
			switch {
			case pass == 0 && row.dead && row.out != nil:
				err = add(Delete, row, row.out)
				r.ckRow(row)
			case pass == 1 && !row.dead && row.out != nil && !sameValues(row.out, row.res):
				if err = add(UpdateBefore, row, row.out); err == nil {
					err = add(UpdateAfter, row, row.res)
				}
				row.out = slices.Clone(row.res)
				r.ckRow(row)
			case pass == 2 && !row.dead && row.out == nil:
				err = add(Insert, row, row.res)
				row.out = slices.Clone(row.res)
				if r.eowc == nil {
					r.ckRow(row)
				}
			}
			if err != nil {
				return nil, err
			}
		}
	}
	for _, row := range r.dirty {
		row.dirty = false
	}
	clear(r.dirty)
	r.dirty = r.dirty[:0]
	if len(ops) == 0 {
		return nil, nil
	}
	cols := make([]arrow.Array, len(bs))
	for j, b := range bs {
		cols[j] = b.NewArray()
	}
	c := &Chunk{Rec: array.NewRecordBatch(r.schema, cols, int64(len(ops))), Ops: ops}
	if !slices.ContainsFunc(ops, func(o Op) bool { return o != Insert }) {
		c.Ops = nil
	}
	return c, nil
}

// sameValues compares two results by identity.
func sameValues(a, b []types.Value) bool {
	for i := range a {
		if tnIdentity(a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}
