package stream

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// joinOutRows bounds the rows of one output chunk.
const joinOutRows = 4096

// joinMaxPairs bounds the candidate pairs gathered before Cond runs on them.
const joinMaxPairs = 1 << 16

// errJoinStopped reports that the output could not be sent (the graph stops).
var errJoinStopped = errors.New("stream: hash join stopped")

// joinRun is one running HashJoin, owned by its goroutine.
//
// A chunk from side s (the other side being o) is consumed in row order, and
// each row's output is queued before the next row changes the state, so the
// output changelog never retracts a row before inserting it. While s's chunk
// is consumed, o's rows do not change: the rows of o matching each row (its
// key's group, filtered by Cond in batches) can be found up front. Per row:
//
//   - joined rows (inner, left, right, full): one per matching o row, with
//     the row's op (UpdateBefore counts as Delete, UpdateAfter as Insert);
//   - if o is preserved, each o row whose match count leaves or reaches 0
//     swaps its unmatched form (NULL-padded, or its semi/anti row) in or out;
//   - if s is preserved and the row matches nothing: its NULL-padded row
//     (outer) or itself (anti); semi emits it when it matches something;
//   - the row is then added to or retracted from s's state.
//
// Without Cond every row of a group matches every row of the other side's
// group, so match counts are the groups' row counts; with Cond, preserved
// sides keep a match count per row.
type joinRun struct {
	j        *HashJoin
	env      *Env
	out      chan<- Message
	ectx     *expr.Context
	kind     exec.JoinKind
	keys     *keyTable
	sides    [2]*joinSide
	joinRows bool // the kind outputs joined pairs
	outSides int  // 2, or 1 for semi and anti (left columns only)
	schema   *arrow.Schema
	pairs    *arrow.Schema // left ++ right, for Cond
	cmps     []pairCompare // HashJoin.Compares, checked
	residual expr.Expr     // what of Cond is evaluated on pairs: Residual, or Cond without Compares
	stopped  bool
	clean    *joinCleaner // nil without HashJoin.Clean
	iv       *intervalRun // nil without HashJoin.Interval
	marks    *alignMarks  // the inputs' watermarks (not used by interval joins)
	based    bool         // a snapshot was taken or restored (join_state.go)
	// lookup makes the run a TemporalJoin's: left rows are joined and
	// emitted but never held, so right rows have nothing to join with.
	lookup bool

	// The chunk being consumed.
	s      int
	one    [1]arrow.RecordBatch
	hashes []uint64

	// Queued output rows: op, the consumed chunk's row (seg 0 or nullRef),
	// the other side's row.
	ops  []Op
	sref []ref
	oref []ref

	pl, pe []int32 // candidate pairs: chunk row, other side's entry

	nulls []arrow.Array // per output column of HashJoin.Pruned: all NULL, sliced per chunk
}

func (j *HashJoin) newRun(env *Env, out chan<- Message) (*joinRun, error) {
	lc, rc := j.Left.Columns(), j.Right.Columns()
	if len(j.LeftKeys) != len(j.RightKeys) {
		return nil, fmt.Errorf("stream: hash join has %d left keys and %d right keys", len(j.LeftKeys), len(j.RightKeys))
	}
	if int(j.Kind) >= len(joinKindNames) {
		return nil, fmt.Errorf("stream: hash join of unknown kind %d", j.Kind)
	}
	r := &joinRun{j: j, env: env, out: out, ectx: env.evalContext(), kind: j.Kind, outSides: 2, marks: newAlignMarks()}
	switch j.Kind {
	case exec.InnerJoin, exec.LeftJoin, exec.RightJoin, exec.FullJoin:
		r.joinRows = true
	default:
		r.outSides = 1
	}
	want := lc
	if r.outSides == 2 {
		want = append(append([]types.Column(nil), lc...), rc...)
	}
	if len(j.Cols) != len(want) {
		return nil, fmt.Errorf("stream: hash join outputs %d columns, its inputs give %d", len(j.Cols), len(want))
	}
	for i, c := range j.Cols {
		if !arrow.TypeEqual(c.Type.ArrowType(), want[i].Type.ArrowType()) {
			return nil, fmt.Errorf("stream: hash join column %q is %s, its input gives %s", c.Name, c.Type.ArrowType(), want[i].Type.ArrowType())
		}
	}
	lp := j.Kind == exec.LeftJoin || j.Kind == exec.FullJoin || j.Kind == exec.SemiJoin || j.Kind == exec.AntiJoin
	rp := j.Kind == exec.RightJoin || j.Kind == exec.FullJoin
	r.sides = [2]*joinSide{newJoinSide(lc, lp), newJoinSide(rc, rp)}
	kt := func(es []expr.Expr) []types.T {
		ts := make([]types.T, len(es))
		for i, e := range es {
			ts[i] = e.Type()
		}
		return ts
	}
	lt, rt := kt(j.LeftKeys), kt(j.RightKeys)
	for k := range lt {
		if !sameKeyClass(lt[k], rt[k]) {
			return nil, pgerr.Internal("stream: hash join key %d compares %s with %s", k+1, lt[k], rt[k])
		}
	}
	r.keys = newKeyTable(lt, rt)
	r.schema = types.ArrowSchema(j.Cols)
	if j.Clean != nil {
		var err error
		if r.clean, err = newJoinCleaner(j); err != nil {
			return nil, err
		}
	}
	if j.Interval != nil {
		var err error
		if r.iv, err = newIntervalRun(j); err != nil {
			return nil, err
		}
	}
	if j.Cond != nil {
		r.pairs = types.ArrowSchema(append(append([]types.Column(nil), lc...), rc...))
		r.residual = j.Cond
		if len(j.Compares) > 0 {
			var err error
			if r.cmps, err = newPairCompares(j.Compares, lc, rc); err != nil {
				return nil, err
			}
			r.residual = j.Residual
		}
	} else if len(j.Compares) > 0 || j.Residual != nil {
		return nil, pgerr.Internal("stream: hash join with comparisons or a residual but no condition")
	}
	if j.Pruned != nil {
		if len(j.Pruned) != len(j.Cols) {
			return nil, pgerr.Internal("stream: hash join prunes %d of %d columns", len(j.Pruned), len(j.Cols))
		}
		r.nulls = make([]arrow.Array, len(j.Cols))
	}
	return r, nil
}

func (r *joinRun) release() {
	r.sides[0].release()
	r.sides[1].release()
	for i, a := range r.nulls {
		if a != nil {
			a.Release()
			r.nulls[i] = nil
		}
	}
}

// watermark forwards the combined watermark of key pair w.Col.
func (r *joinRun) watermark(w Watermark) bool {
	lc, rc, _ := r.j.keyColumns(w.Col)
	if r.clean != nil && w.Col == r.clean.key {
		r.clean.advance(r, w.Value)
	}
	if !send(r.env, r.out, WatermarkMsg(Watermark{Col: lc, Value: w.Value})) {
		return false
	}
	if r.outSides == 2 {
		return send(r.env, r.out, WatermarkMsg(Watermark{Col: len(r.sides[0].cols) + rc, Value: w.Value}))
	}
	return true
}

// consume applies chunk c of side s and sends its output.
func (r *joinRun) consume(s int, c *Chunk) error {
	n := c.Len()
	if n == 0 {
		return nil
	}
	S := r.sides[s]
	if err := checkJoinInput(c.Rec, S.cols); err != nil {
		return err
	}
	if r.iv != nil {
		kept, owned, err := r.iv.dropLate(r.env, r.j, s, S.cols, c)
		if err != nil || kept == nil {
			return err
		}
		if owned {
			defer kept.Rec.Release()
		}
		c, n = kept, kept.Len()
	}
	exprs := r.j.LeftKeys
	if s == 1 {
		exprs = r.j.RightKeys
	}
	keys := make([]arrow.Array, 0, len(exprs))
	defer func() {
		for _, a := range keys {
			a.Release()
		}
	}()
	for _, e := range exprs {
		a, err := evalOrNull(r.env, r.ectx, e, c.Rec)
		if err != nil {
			return fmt.Errorf("stream: hash join key %s: %w", e, err)
		}
		keys = append(keys, a)
	}
	gids := r.keys.lookup(s, keys, n)
	if r.clean != nil {
		r.clean.note(r.keys, keys, gids)
	}
	if S.index == nil && c.Ops != nil {
		for _, op := range c.Ops {
			if op.Sign() < 0 {
				S.buildIndex()
				break
			}
		}
	}
	if S.index != nil {
		r.hashes = rowHashes(c.Rec, S.cols, r.hashes)
	}
	r.s, r.one[0] = s, c.Rec
	S.beginChunk(c.Rec)
	err := r.rows(c, gids)
	r.flush()
	if renum := S.endChunk(&r.keys.groups, s); renum != nil && r.iv != nil {
		r.iv.remap(s, renum)
	}
	for _, g := range gids {
		if g >= 0 {
			r.keys.freeIfEmpty(g)
		}
	}
	r.keys.compact(r.sides)
	if r.clean != nil {
		r.clean.afterCompact(r.keys)
	}
	r.one[0] = nil
	if err == nil && r.stopped {
		err = errJoinStopped
	}
	return err
}

// joinRunRows bounds the rows consumed per run, so that the groups and
// entries a run's first phase loads are still cached in its second.
const joinRunRows = 1024

// rows consumes the chunk in runs. First, for a run's rows, the matching
// rows of the other side are collected (candidate pairs, then filtered by
// Cond): independent loads, which the CPU overlaps. Then the rows are
// applied one by one. Without Cond, semi and anti joins need no pairs (only
// the groups' row counts).
func (r *joinRun) rows(c *Chunk, gids []int32) error {
	n := c.Len()
	o := 1 - r.s
	O := r.sides[o]
	pairs := r.joinRows || r.j.Cond != nil
	if !pairs {
		for i := 0; i < n; i++ {
			if err := r.row(i, c.Op(i).Sign(), gids[i], nil); err != nil {
				return err
			}
		}
		return nil
	}
	groups := &r.keys.groups
	byTime := r.iv != nil && r.keys.mode == keyCross && r.iv.frees[o] // a keyless interval join
	for start := 0; start < n; {
		pl, pe := r.pl[:0], r.pe[:0]
		end := start
		for ; end < n && end-start < joinRunRows && len(pl) < joinMaxPairs; end++ {
			if byTime {
				pl, pe = r.iv.candidates(O, o, end, pl, pe)
				continue
			}
			if g := gids[end]; g >= 0 {
				for e := groups.at(g).head[o]; e >= 0; e = O.entries.at(e).next {
					pl, pe = append(pl, int32(end)), append(pe, e)
				}
			}
		}
		r.pl, r.pe = pl, pe
		if len(r.cmps) > 0 {
			pl, pe = r.comparePairs(pl, pe)
		}
		if r.residual != nil && len(pl) > 0 {
			var err error
			if pl, pe, err = r.filterPairs(pl, pe); err != nil {
				return err
			}
		}
		p := 0
		for i := start; i < end; i++ {
			q := p
			for q < len(pl) && pl[q] == int32(i) {
				q++
			}
			if err := r.row(i, c.Op(i).Sign(), gids[i], pe[p:q]); err != nil {
				return err
			}
			p = q
		}
		start = end
	}
	return nil
}

// filterPairs keeps the pairs (chunk row pl[k], other side's entry pe[k])
// for which the residual condition (Cond, or what Compares leave of it)
// is true, in place.
func (r *joinRun) filterPairs(pl, pe []int32) ([]int32, []int32, error) {
	O := r.sides[1-r.s]
	keep := 0
	sref := make([]ref, 0, min(len(pl), joinOutRows))
	oref := make([]ref, 0, min(len(pl), joinOutRows))
	for from := 0; from < len(pl); from += joinOutRows {
		to := min(from+joinOutRows, len(pl))
		sref, oref = sref[:0], oref[:0]
		for k := from; k < to; k++ {
			sref = append(sref, ref{0, pl[k]})
			oref = append(oref, O.entries.at(pe[k]).ref)
		}
		rec := newLazyPairs(r, sref, oref) // gathers only the columns Cond reads
		m, err := evalOrNull(r.env, r.ectx, r.residual, rec)
		rec.Release()
		if err != nil {
			return nil, nil, fmt.Errorf("stream: hash join condition: %w", err)
		}
		mask, ok := m.(*array.Boolean)
		if !ok {
			m.Release()
			return nil, nil, pgerr.Internal("stream: hash join condition is %s, not boolean", m.DataType())
		}
		for k := from; k < to; k++ {
			if mask.IsValid(k-from) && mask.Value(k-from) {
				pl[keep], pe[keep] = pl[k], pe[k]
				keep++
			}
		}
		m.Release()
	}
	return pl[:keep], pe[:keep], nil
}

// row consumes row i (sign +1 adds, -1 retracts) of key group g (-1: a
// NULL key, which matches nothing and is not held). ms are the other side's
// entries that match the row (the group's, filtered by Cond); nil for semi
// and anti joins without Cond, which do not need them.
func (r *joinRun) row(i int, sign int64, g int32, ms []int32) error {
	s, o := r.s, 1-r.s
	S, O := r.sides[s], r.sides[o]
	op := Insert
	if sign < 0 {
		op = Delete
	}
	var total int64 // rows of o matching the row
	if g >= 0 {
		grp := r.keys.groups.at(g)
		cond := r.j.Cond != nil
		if O.preserved {
			if cond {
				for _, e := range ms {
					en := O.entries.at(e)
					before := en.matches
					en.matches += sign
					O.touch(e)
					if (before == 0) != (en.matches == 0) {
						r.transition(e, before == 0)
					}
				}
			} else if before := grp.rows[s]; (before == 0) != (before+sign == 0) {
				for e := grp.head[o]; e >= 0; e = O.entries.at(e).next {
					r.transition(e, before == 0)
				}
			}
		}
		if cond {
			for _, e := range ms {
				total += int64(O.entries.at(e).count)
			}
		} else {
			total = grp.rows[o]
		}
		if r.joinRows {
			for _, e := range ms {
				en := O.entries.at(e)
				for k := int32(0); k < en.count; k++ {
					r.emit(op, ref{0, int32(i)}, en.ref)
				}
			}
		}
	}
	if S.preserved && (total > 0) == (r.kind == exec.SemiJoin) {
		r.emit(op, ref{0, int32(i)}, nullRef)
	}
	if g < 0 || r.lookup && s == 0 {
		return nil
	}
	var h uint64
	if S.index != nil {
		h = r.hashes[i]
	}
	if sign > 0 {
		if r.iv != nil && !r.iv.keep(s, i) {
			return nil
		}
		if e := S.add(&r.keys.groups, s, g, i, h, total); e >= 0 && r.iv != nil {
			r.iv.added(s, e, i)
		}
		return nil
	}
	if !S.remove(&r.keys.groups, s, g, i, h) {
		return pgerr.Internal("stream: hash join: a retraction of a row its input does not hold")
	}
	return nil
}

// transition swaps the unmatched form of the other side's entry e in (it
// lost its last match) or out (gained, its first): the NULL-padded row of an
// outer join, the row itself for anti (and the reverse for semi).
func (r *joinRun) transition(e int32, gained bool) {
	en := r.sides[1-r.s].entries.at(e)
	op := Insert
	if gained != (r.kind == exec.SemiJoin) {
		op = Delete
	}
	for k := int32(0); k < en.count; k++ {
		r.emit(op, nullRef, en.ref)
	}
}

// emit queues one output row, sending a full chunk.
func (r *joinRun) emit(op Op, sref, oref ref) {
	r.ops = append(r.ops, op)
	r.sref = append(r.sref, sref)
	r.oref = append(r.oref, oref)
	if len(r.ops) >= joinOutRows {
		r.flush()
	}
}

// flush sends the queued rows as one chunk.
func (r *joinRun) flush() {
	n := len(r.ops)
	if n == 0 {
		return
	}
	if !r.stopped {
		cols := make([]arrow.Array, 0, len(r.j.Cols))
		cols = r.columns(cols, 0, r.sref, r.oref)
		if r.outSides == 2 {
			cols = r.columns(cols, 1, r.sref, r.oref)
		}
		rec := array.NewRecordBatch(r.schema, cols, int64(n))
		releaseAll(cols)
		var ops []Op
		for _, op := range r.ops {
			if op != Insert {
				ops = append([]Op(nil), r.ops...)
				break
			}
		}
		if !send(r.env, r.out, ChunkMsg(&Chunk{Rec: rec, Ops: ops})) {
			r.stopped = true
		}
	}
	r.ops, r.sref, r.oref = r.ops[:0], r.sref[:0], r.oref[:0]
}

// columns appends input side's columns for rows: sref for the consumed
// chunk's side, oref for the other.
func (r *joinRun) columns(dst []arrow.Array, side int, sref, oref []ref) []arrow.Array {
	sd := r.sides[side]
	recs, refs := sd.recs, oref
	if side == r.s {
		recs, refs = r.one[:], sref
	}
	out := 0 // the output column of the side's first
	if side == 1 {
		out = len(r.sides[0].cols)
	}
	for c, col := range sd.cols {
		if r.nulls != nil && r.j.Pruned[out+c] {
			dst = append(dst, r.nullColumn(out+c, col.Type, len(refs)))
			continue
		}
		dst = append(dst, gather(col.Type, recs, c, refs))
	}
	return dst
}

// nullColumn is n NULLs of output column i (HashJoin.Pruned), a slice of
// one array kept per column and grown when n exceeds it.
func (r *joinRun) nullColumn(i int, t types.T, n int) arrow.Array {
	if a := r.nulls[i]; a == nil || a.Len() < n {
		if a != nil {
			a.Release()
		}
		r.nulls[i] = array.MakeArrayOfNull(memory.DefaultAllocator, t.ArrowType(), max(n, joinOutRows))
	}
	return array.NewSlice(r.nulls[i], 0, int64(n))
}

// checkJoinInput refuses a chunk whose columns are not the input's.
func checkJoinInput(rec arrow.RecordBatch, cols []types.Column) error {
	if int(rec.NumCols()) != len(cols) {
		return pgerr.Internal("stream: hash join: input chunk has %d columns, want %d", rec.NumCols(), len(cols))
	}
	for i, c := range cols {
		if dt := rec.Column(i).DataType(); !arrow.TypeEqual(dt, c.Type.ArrowType()) {
			return pgerr.Internal("stream: hash join: input column %q is %s, want %s", c.Name, dt, c.Type.ArrowType())
		}
	}
	return nil
}

func releaseAll(arrs []arrow.Array) {
	for _, a := range arrs {
		a.Release()
	}
}
