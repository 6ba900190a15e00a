package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/types"
)

// Shared machinery of the hash and nested-loop joins: both produce
// candidate (left row, right row) pairs for one left batch, in left row
// order; joiner filters them with the condition and shapes the output for
// the join kind.

func (k JoinKind) String() string {
	switch k {
	case InnerJoin:
		return "inner"
	case LeftJoin:
		return "left"
	case RightJoin:
		return "right"
	case FullJoin:
		return "full"
	case SemiJoin:
		return "semi"
	case AntiJoin:
		return "anti"
	}
	return fmt.Sprintf("JoinKind(%d)", uint8(k))
}

// joiner holds a join's materialized right side and output state.
type joiner struct {
	ctx        *Context
	kind       JoinKind
	cond       expr.Expr     // residual, may be nil
	pairSchema *arrow.Schema // left ++ right, for evaluating cond
	outSchema  *arrow.Schema
	right      []arrow.Array // right columns, all rows
	nRight     int
	rightHit   []bool // right rows matched so far (right and full joins)
	leftHit    []bool // scratch: left rows of the current batch matched
	out        batchQueue
	acct       *membudget.Account // the right side kept; released at Close
}

func newJoiner(ctx *Context, kind JoinKind, cond expr.Expr, left, right []types.Column, out []types.Column) *joiner {
	pair := append(append([]types.Column(nil), left...), right...)
	return &joiner{ctx: ctx, acct: membudget.NewAccount(budgetOf(ctx)), kind: kind, cond: cond, pairSchema: types.ArrowSchema(pair), outSchema: types.ArrowSchema(out)}
}

// loadRight drains the right input and concatenates it.
func (j *joiner) loadRight(in Iterator, cols []types.Column) ([]arrow.RecordBatch, error) {
	bs, err := drainInto(j.ctx, in, j.acct)
	if err != nil {
		return nil, err
	}
	// materialize copies the batches into one array per column.
	var sz int64
	for _, b := range bs {
		sz += membudget.BatchBytes(b)
	}
	if err := j.acct.Grow(sz); err != nil {
		return nil, err
	}
	arrs, n, err := materialize(alloc(j.ctx), cols, bs)
	if err != nil {
		return nil, err
	}
	j.right, j.nRight = arrs, n
	if j.kind == RightJoin || j.kind == FullJoin {
		j.rightHit = make([]bool, n)
	}
	return bs, nil
}

// emit filters the candidate pairs (pl[i], pr[i]) of left batch b with the
// condition and queues the output rows of this batch.
func (j *joiner) emit(b arrow.RecordBatch, pl, pr []int32) error {
	mem := alloc(j.ctx)
	n := int(b.NumRows())
	left := b.Columns()
	if j.cond != nil && len(pl) > 0 {
		size := j.ctx.Size()
		var kl, kr []int32
		for s := 0; s < len(pl); s += size {
			e := min(s+size, len(pl))
			cand := j.pairBatch(left, pl[s:e], pr[s:e])
			m, err := eval(j.ctx, j.cond, cand)
			if err != nil {
				return err
			}
			mask, ok := m.(*array.Boolean)
			if !ok {
				return fmt.Errorf("exec: join condition is %s, not boolean", m.DataType())
			}
			for i := s; i < e; i++ {
				if boolTrue(mask, i-s) {
					kl = append(kl, pl[i])
					kr = append(kr, pr[i])
				}
			}
		}
		pl, pr = kl, kr
	}
	if j.rightHit != nil {
		for _, r := range pr {
			j.rightHit[r] = true
		}
	}
	var ol, or []int32
	switch j.kind {
	case InnerJoin, RightJoin:
		ol, or = pl, pr
	case LeftJoin, FullJoin:
		ol = make([]int32, 0, len(pl)+n)
		or = make([]int32, 0, len(pl)+n)
		p := 0
		for i := 0; i < n; i++ {
			if p < len(pl) && pl[p] == int32(i) {
				for p < len(pl) && pl[p] == int32(i) {
					ol, or = append(ol, pl[p]), append(or, pr[p])
					p++
				}
			} else {
				ol, or = append(ol, int32(i)), append(or, -1)
			}
		}
	case SemiJoin, AntiJoin:
		hit := j.hits(n, pl)
		for i := 0; i < n; i++ {
			if hit[i] == (j.kind == SemiJoin) {
				ol = append(ol, int32(i))
			}
		}
		if len(ol) == n {
			j.out.push(rebatch(j.outSchema, b))
			return nil
		}
		j.queue(mem, left, ol, nil)
		return nil
	}
	j.queue(mem, left, ol, or)
	return nil
}

// hits marks the left rows that have at least one pair.
func (j *joiner) hits(n int, pl []int32) []bool {
	if cap(j.leftHit) < n {
		j.leftHit = make([]bool, n)
	}
	h := j.leftHit[:n]
	clear(h)
	for _, l := range pl {
		h[l] = true
	}
	return h
}

// pairBatch builds left ++ right rows for pairs.
func (j *joiner) pairBatch(left []arrow.Array, pl, pr []int32) arrow.RecordBatch {
	mem := alloc(j.ctx)
	cols := make([]arrow.Array, 0, len(left)+len(j.right))
	for _, a := range left {
		cols = append(cols, takeArray(mem, a, pl))
	}
	for _, a := range j.right {
		cols = append(cols, takeArray(mem, a, pr))
	}
	return array.NewRecordBatch(j.pairSchema, cols, int64(len(pl)))
}

// queue gathers output rows (right side omitted when or is nil) in batches.
func (j *joiner) queue(mem memory.Allocator, left []arrow.Array, ol, or []int32) {
	size := j.ctx.Size()
	for s := 0; s < len(ol); s += size {
		e := min(s+size, len(ol))
		cols := make([]arrow.Array, 0, len(left)+len(j.right))
		run := contiguous(ol[s:e])
		for _, a := range left {
			if run {
				cols = append(cols, array.NewSlice(a, int64(ol[s]), int64(ol[e-1])+1))
			} else {
				cols = append(cols, takeArray(mem, a, ol[s:e]))
			}
		}
		if or != nil {
			for _, a := range j.right {
				cols = append(cols, takeArray(mem, a, or[s:e]))
			}
		}
		j.out.push(array.NewRecordBatch(j.outSchema, cols, int64(e-s)))
	}
}

// contiguous reports whether rows are r, r+1, r+2, ... (a left batch's
// rows each matched once: the left columns are sliced, not copied).
func contiguous(rows []int32) bool {
	for i := 1; i < len(rows); i++ {
		if rows[i] != rows[0]+int32(i) {
			return false
		}
	}
	return len(rows) > 0 && rows[0] >= 0
}

// finishRight queues the unmatched right rows with NULL left columns.
func (j *joiner) finishRight(leftCols []types.Column) {
	if j.rightHit == nil {
		return
	}
	var rows []int32
	for r, hit := range j.rightHit {
		if !hit {
			rows = append(rows, int32(r))
		}
	}
	mem := alloc(j.ctx)
	size := j.ctx.Size()
	for s := 0; s < len(rows); s += size {
		e := min(s+size, len(rows))
		cols := make([]arrow.Array, 0, len(leftCols)+len(j.right))
		for _, c := range leftCols {
			cols = append(cols, nullArray(mem, c.Type, e-s))
		}
		for _, a := range j.right {
			cols = append(cols, takeArray(mem, a, rows[s:e]))
		}
		j.out.push(array.NewRecordBatch(j.outSchema, cols, int64(e-s)))
	}
	j.rightHit = nil
}

// joinDriver is the loop both joins share: prepare the right side once,
// then probe the left input batch by batch while serving the joiner's output
// queue, and at the end add the unmatched right rows (right and full joins).
// It owns both inputs.
type joinDriver struct {
	j              *joiner
	left, rightIn  Iterator
	leftCols       []types.Column
	prepared, done bool
}

// openDriver opens a join's inputs, right first (it is built or
// materialized first); on failure nothing stays open.
func openDriver(ctx *Context, left, right Node, j *joiner) (*joinDriver, error) {
	r, err := OpenNode(ctx, right)
	if err != nil {
		return nil, err
	}
	l, err := OpenNode(ctx, left)
	if err != nil {
		r.Close()
		return nil, err
	}
	return &joinDriver{j: j, left: l, rightIn: r, leftCols: left.Columns()}, nil
}

// step returns the join's next batch: prepare runs once before anything,
// probe for each left batch.
func (d *joinDriver) step(prepare func() error, probe func(arrow.RecordBatch) error) (arrow.RecordBatch, error) {
	if !d.prepared {
		if err := prepare(); err != nil {
			return nil, err
		}
		d.prepared = true
	}
	for {
		if b := d.j.out.pop(); b != nil {
			return b, nil
		}
		if d.done {
			return nil, nil
		}
		if err := canceled(d.j.ctx); err != nil {
			return nil, err
		}
		b, err := d.left.Next()
		if err != nil {
			return nil, err
		}
		if b == nil {
			d.done = true
			d.j.finishRight(d.leftCols)
			continue
		}
		if err := probe(b); err != nil {
			return nil, err
		}
	}
}

// Close closes both inputs.
func (d *joinDriver) Close() error {
	d.j.acct.Release()
	err := d.left.Close()
	if e := d.rightIn.Close(); err == nil {
		err = e
	}
	return err
}
