package stream

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// parAggRun runs a HashAgg as n instances behind a Splitter, as the
// runtime's hash exchange does (exec/dataflow/parallel.go): chunks are
// split by the vnode of the plain-column group keys, each instance
// flushes at the barrier, and the outputs are concatenated (the merge).
// The brute-force tests run it at parallelism 1, 3 and 8.
type parAggRun struct {
	runs []*aggRun
	sp   *Splitter
}

func startParRun(t *testing.T, h *HashAgg, n int) *parAggRun {
	t.Helper()
	p := &parAggRun{}
	for range n {
		p.runs = append(p.runs, startRun(t, h))
	}
	if n > 1 {
		cols, ok := ColumnKeys(h.GroupBy)
		if !ok || len(cols) == 0 {
			t.Fatalf("parallel aggregation without plain column keys")
		}
		ts := make([]types.T, len(cols))
		for i, g := range h.GroupBy {
			ts[i] = g.Type()
		}
		p.sp = NewSplitter(cols, ts, n)
	}
	return p
}

func (p *parAggRun) consume(c *Chunk) error {
	if p.sp == nil {
		return p.runs[0].consume(c)
	}
	for k, part := range p.sp.Split(c) {
		if part == nil {
			continue
		}
		if err := p.runs[k].consume(part); err != nil {
			return err
		}
	}
	return nil
}

func (p *parAggRun) flush() (*Chunk, error) {
	var recs []arrow.RecordBatch
	var ops []Op
	for _, r := range p.runs {
		c, err := r.flush()
		if err != nil {
			return nil, err
		}
		if c == nil || c.Len() == 0 {
			continue
		}
		recs = append(recs, c.Rec)
		for i := 0; i < c.Len(); i++ {
			ops = append(ops, c.Op(i))
		}
	}
	switch len(recs) {
	case 0:
		return nil, nil
	case 1:
		return &Chunk{Rec: recs[0], Ops: ops}, nil
	}
	cols := make([]arrow.Array, recs[0].NumCols())
	for c := range cols {
		parts := make([]arrow.Array, len(recs))
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, err
		}
		cols[c] = a
	}
	return &Chunk{Rec: array.NewRecordBatch(recs[0].Schema(), cols, int64(len(ops))), Ops: ops}, nil
}

// groups is the number of live groups over the instances.
func (p *parAggRun) groups() int {
	n := 0
	for _, r := range p.runs {
		n += r.table.len()
	}
	return n
}

// TestSplitterKeepsGroupsTogether: rows with equal keys (under GROUP BY's
// equality: int widths, -0 and 0, numeric scales, char padding) reach the
// same instance, and every instance gets some of many keys.
func TestSplitterKeepsGroupsTogether(t *testing.T) {
	var h VNodeHasher
	ints := func(vs ...int64) arrow.Array {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		b.AppendValues(vs, nil)
		return b.NewArray()
	}
	i32 := array.NewInt32Builder(memory.DefaultAllocator)
	i32.AppendValues([]int32{7, -1}, nil)
	a := h.VNodes([]arrow.Array{ints(7, -1)}, []types.T{types.TInt8}, 2, nil)
	b := h.VNodes([]arrow.Array{i32.NewArray()}, []types.T{types.TInt4}, 2, nil)
	if a[0] != b[0] || a[1] != b[1] {
		t.Fatalf("int8 and int4 keys hash apart: %v %v", a, b)
	}
	str := func(vs ...string) arrow.Array {
		b := array.NewStringBuilder(memory.DefaultAllocator)
		b.AppendValues(vs, nil)
		return b.NewArray()
	}
	num := h.VNodes([]arrow.Array{str("1.50", "1.5", "2")}, []types.T{types.TNumeric}, 3, nil)
	if num[0] != num[1] {
		t.Fatalf("numeric 1.50 and 1.5 hash apart: %v", num)
	}
	seen := map[int]bool{}
	var vals []int64
	for i := range int64(1000) {
		vals = append(vals, i)
	}
	for _, v := range h.VNodes([]arrow.Array{ints(vals...)}, []types.T{types.TInt8}, len(vals), nil) {
		seen[VNodeOwner(v, 8)] = true
	}
	if len(seen) != 8 {
		t.Fatalf("1000 keys reached %d of 8 instances", len(seen))
	}
}

// startParallel runs node as n instances behind a channel-level hash
// exchange (a Splitter for chunks, watermarks and barriers to every
// instance) merged by a Union: what the runtime's startParallel does
// (exec/dataflow/parallel.go), for operator tests over channels.
func startParallel(env *Env, node Node, keys []int, ts []types.T, n int, in <-chan Message) <-chan Message {
	return startParallelCk(env, node, keys, ts, n, in, nil)
}

// testExchange splits in's chunks over n channels by the vnode of keys,
// as the runtime's hash exchange does, and sends every other message to
// all of them.
func testExchange(env *Env, in <-chan Message, keys []int, ts []types.T, n int) []chan Message {
	chans := make([]chan Message, n)
	for k := range chans {
		chans[k] = make(chan Message, ChannelSize)
	}
	go func() {
		defer func() {
			for _, c := range chans {
				close(c)
			}
		}()
		sp := NewSplitter(keys, ts, n)
		for m := range in {
			if m.Kind != KindChunk {
				for _, c := range chans {
					if !send(env, c, m) {
						return
					}
				}
				continue
			}
			for k, part := range sp.Split(m.Chunk) {
				if part != nil && !send(env, chans[k], ChunkMsg(part)) {
					return
				}
			}
		}
	}()
	return chans
}

// startParallelCk is startParallel with a Checkpointer per instance (cks
// nil: none).
func startParallelCk(env *Env, node Node, keys []int, ts []types.T, n int, in <-chan Message, cks []Checkpointer) <-chan Message {
	ck := func(k int) Checkpointer {
		if cks == nil {
			return nil
		}
		return cks[k]
	}
	if n <= 1 {
		if cks == nil {
			return node.Start(env, []<-chan Message{in})
		}
		return node.Start(env.Instance(ck(0)), []<-chan Message{in})
	}
	chans := testExchange(env, in, keys, ts, n)
	outs := make([]<-chan Message, n)
	for k := range outs {
		outs[k] = node.Start(env.Instance(ck(k)), []<-chan Message{chans[k]})
	}
	return (&Union{Ins: []Node{node}, Cols: node.Columns()}).Start(env, outs)
}

// TestWidthFollowsFragments: a split scan's readers and a Parallel's
// instances set the width; fused operators (filter, projection, window
// expansion) keep their input's; any other operator is one instance, and
// an exchange's ExchangeExplain names the senders when there are several.
func TestWidthFollowsFragments(t *testing.T) {
	cols := []types.Column{{Name: "a", Type: types.TInt8}, {Name: "ts", Type: types.TTimestamp}}
	scan := &Scan{Name: "s", Kind: ScanSource, Cols: cols, Splittable: true, Readers: 3}
	table := &Scan{Name: "t", Kind: ScanTable, Cols: cols, Readers: 3} // a table is read once
	a := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}
	filter := &Filter{Input: scan, Cond: &expr.Const{V: true, T: types.TBool}}
	proj := &Project{Input: filter, Exprs: []expr.Expr{a}, Cols: cols[:1]}
	agg := &HashAgg{Input: proj, GroupBy: []expr.Expr{a}, Aggs: []AggSpec{{Kind: AggCountStar}}, Cols: cols[:1]}
	par := &Parallel{Input: agg, Keys: [][]int{{0}}, KeyTypes: []types.T{types.TInt8}, N: 4}
	above := &Project{Input: par, Exprs: []expr.Expr{a}, Cols: cols[:1]}
	global := &HashAgg{Input: above, Aggs: []AggSpec{{Kind: AggCountStar}}, Cols: cols[:1]}
	for _, c := range []struct {
		n     Node
		width int
		fused bool
	}{{scan, 3, false}, {table, 1, false}, {filter, 3, true}, {proj, 3, true}, {agg, 1, false}, {par, 4, false}, {above, 4, true}, {global, 1, false}} {
		if w := Width(c.n); w != c.width || Fused(c.n) != c.fused {
			t.Errorf("%s: width %d, fused %v; want %d, %v", c.n.Explain(), w, Fused(c.n), c.width, c.fused)
		}
	}
	if got, want := par.ExchangeExplain(0, 2, 1), "StreamExchange: fragment 2 (3 instances) into fragment 1 by hash(a) (256 vnodes over 4 instances)"; got != want {
		t.Errorf("exchange %q, want %q", got, want)
	}
}
