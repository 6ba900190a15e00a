package stream

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// HashAgg is incremental GROUP BY aggregation with retractions. Its output
// rows are the GroupBy values then one value per Agg, described by Cols;
// the group keys are the output's stream key.
//
// Rows add to (Insert, UpdateAfter) or retract from (Delete, UpdateBefore)
// their group. Nothing is emitted until the epoch's barrier: then, for each
// group whose output row changed during the epoch, HashAgg emits an Insert
// (new group), a Delete (its row count fell to 0; its state is freed) or an
// UpdateBefore/UpdateAfter pair, in one chunk ordered by internal group id
// (ids are handed out in order of first appearance, freed ones reused
// first), and then forwards the barrier. A group whose row is unchanged at the
// barrier (say, a row inserted and deleted in the same epoch) emits nothing.
// Without GroupBy there is exactly one group, which always exists: its row
// (count 0, other aggregates NULL when empty) is inserted at the first
// barrier and only updated after. With GroupBy and no Aggs it is SELECT
// DISTINCT: a group is inserted when it appears and deleted when it
// vanishes. A watermark on an input column that is a GROUP BY key (a
// plain column reference) becomes one on that key's output column, sent
// after the epoch's rows (which may be older), before the barrier; other
// watermarks are dropped.
//
// Aggregates are computed a chunk at a time: group keys are hashed
// column-wise to dense group ids (freed ids are reused), and each
// aggregate's state lives in slices indexed by group id (see aggCol). The
// result types and values are the batch engine's (AggSpec.ResultType).
// Memory is per live group (plus, for min/max over a retracting input and
// DISTINCT aggregates, per distinct value of a group).
type HashAgg struct {
	Input   Node
	GroupBy []expr.Expr
	Aggs    []AggSpec
	Cols    []types.Column
	// AppendOnly says the input never retracts (the planner sets it over
	// append-only sources): min and max then keep only their running
	// extreme instead of every value, and a retraction fails.
	AppendOnly bool
	// Clean, if set, closes groups by the watermark of one key and emits
	// each once, when it closes (see AggClean); nil: the behaviour above.
	Clean *AggClean

	// noDistinctShare (tests) keeps every DISTINCT aggregate's pairs apart
	// (aggdistinct_share.go).
	noDistinctShare bool
}

// Columns implements Node.
func (h *HashAgg) Columns() []types.Column { return h.Cols }

// Inputs implements Node.
func (h *HashAgg) Inputs() []Node { return []Node{h.Input} }

// Explain implements Node.
func (h *HashAgg) Explain() string {
	parts := make([]string, 0, len(h.GroupBy)+len(h.Aggs))
	for _, a := range h.Aggs {
		parts = append(parts, a.String())
	}
	s := "StreamHashAgg: " + strings.Join(parts, ", ")
	if len(h.GroupBy) > 0 {
		keys := make([]string, len(h.GroupBy))
		for i, g := range h.GroupBy {
			keys[i] = g.String()
		}
		s += " GROUP BY " + strings.Join(keys, ", ")
	}
	if c := h.Clean; c != nil && c.Key >= 0 && c.Key < len(h.GroupBy) {
		s += " (emit on window close: each group goes out and is freed when the watermark passes " + h.GroupBy[c.Key].String()
		if c.Delay > 0 {
			s += " + " + time.Duration(c.Delay*1000).String()
		}
		s += ")"
	}
	return s
}

// Start implements Node.
func (h *HashAgg) Start(env *Env, inputs []<-chan Message) <-chan Message {
	out := make(chan Message, ChannelSize)
	go func() {
		defer close(out)
		r, err := h.newRun(env)
		if err == nil {
			err = env.restore(h, hashAggState{r})
		}
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
			case <-env.Ctx.Done():
				return
			}
			bc.start()
			if !ok {
				return
			}
			if r.clean != nil && m.Kind != KindBarrier {
				msgs, err := r.handleCleanMsg(m)
				if err != nil {
					env.Fail(err)
					return
				}
				for _, o := range msgs {
					if !send(env, out, o) {
						return
					}
				}
				continue
			}
			if m.Kind == KindChunk {
				if err := r.consume(m.Chunk); err != nil {
					env.Fail(err)
					return
				}
				m.Chunk.ReturnBuffers() // the state holds copies of the values, never the arrays
				continue
			}
			if m.Kind == KindWatermark {
				r.marks.note(m.Watermark)
				continue
			}
			if m.Kind == KindBarrier && r.clean != nil {
				r.flushClean()
			} else if m.Kind == KindBarrier {
				c, err := r.flush()
				if err != nil {
					env.Fail(err)
					return
				}
				if c != nil && !send(env, out, ChunkMsg(c)) {
					return
				}
				if !r.marks.send(env, out) {
					return
				}
			}
			if err := env.snapshot(h, m.Barrier, hashAggState{r}); err != nil {
				env.Fail(err)
				return
			}
			if !send(env, out, m) {
				return
			}
		}
	}()
	return out
}

// aggRun is one running HashAgg's state, owned by its goroutine. Per-group
// slices are indexed by group id; without GROUP BY the one group is id 0.
type aggRun struct {
	h      *HashAgg
	env    *Env
	ectx   *expr.Context
	schema *arrow.Schema
	table  *groupTable // nil without GROUP BY
	clean  *aggCleaner // nil without HashAgg.Clean
	marks  *keyMarks   // the watermarks mapped to key columns (not with clean)
	aggs   []aggCol
	argT   []types.T
	shares []*distinctShare // DISTINCT aggregates sharing their pairs

	keys    []*cellCol // per key column: each group's key value
	prev    []*cellCol // per aggregate: each group's result as last emitted
	rows    []int64    // per group: its live input rows
	emitted []bool     // per group: its row is live downstream
	mark    []bool     // per group: in touched
	touched []int32    // groups changed this epoch
	ngroups int        // length of the per-group slices
	started bool       // the global group was emitted once

	// checkpoints (hashagg_state.go)
	ckpt     bool    // the job checkpoints: track dirty groups
	based    bool    // a Snapshot or Restore happened: snapshots are incremental
	dirty    bitmap  // per group: changed since the last Snapshot
	dirtyIDs []int32 // the groups in dirty
	freeAt   []int32 // per free group id: its position in the table's free list

	// per-chunk scratch
	zeros   []int32
	signs   []int64
	filters aggFilters
	fl      flushScratch
}

func (h *HashAgg) newRun(env *Env) (*aggRun, error) {
	if len(h.Cols) != len(h.GroupBy)+len(h.Aggs) {
		return nil, fmt.Errorf("stream: hashagg has %d columns for %d keys and %d aggregates", len(h.Cols), len(h.GroupBy), len(h.Aggs))
	}
	r := &aggRun{h: h, env: env, ectx: env.evalContext(), schema: types.ArrowSchema(h.Cols),
		marks: newKeyMarks(h.GroupBy), ckpt: env.Checkpoints != nil}
	r.fl.res = make([][]cell, len(h.Aggs))
	if len(h.GroupBy) > 0 {
		ts := make([]types.T, len(h.GroupBy))
		for i, g := range h.GroupBy {
			ts[i] = g.Type()
			r.keys = append(r.keys, newCellCol(ts[i]))
		}
		r.table = newGroupTable(ts, false)
	}
	for i, a := range h.Aggs {
		var t types.T
		if a.Arg != nil {
			t = a.Arg.Type()
		}
		st, err := newAggCol(a, t, h.AppendOnly)
		if err != nil {
			return nil, err
		}
		r.aggs = append(r.aggs, st)
		r.argT = append(r.argT, t)
		r.prev = append(r.prev, newCellCol(h.Cols[len(h.GroupBy)+i].Type))
	}
	if !h.noDistinctShare {
		r.shares = shareDistinct(h.Aggs, r.aggs)
	}
	if r.table == nil {
		r.grow(1)
	}
	if h.Clean != nil {
		var err error
		if r.clean, err = newAggCleaner(h); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// grow makes the per-group slices hold n groups.
func (r *aggRun) grow(n int) {
	if n <= r.ngroups {
		return
	}
	n = max(n, 2*r.ngroups) // amortize the aggregates' grow calls
	r.ngroups = n
	r.rows, r.emitted, r.mark = growSlice(r.rows, n), growSlice(r.emitted, n), growSlice(r.mark, n)
	if r.ckpt {
		r.dirty.grow(n)
	}
	if r.table != nil {
		r.freeAt = growSlice(r.freeAt, n)
	}
	for _, k := range r.keys {
		k.grow(n)
	}
	for j, a := range r.aggs {
		a.grow(n)
		r.prev[j].grow(n)
	}
}

// consume applies one chunk to the groups.
func (r *aggRun) consume(c *Chunk) error {
	n := c.Len()
	if n == 0 {
		return nil
	}
	var gids []int32
	if r.table != nil {
		keys := make([]arrow.Array, len(r.h.GroupBy))
		for i, e := range r.h.GroupBy {
			a, err := evalOrNull(r.env, r.ectx, e, c.Rec)
			if err != nil {
				return err
			}
			defer a.Release()
			keys[i] = a
		}
		gids = r.table.probe(keys, nil, n, false)
		r.grow(r.table.cap())
		if r.clean != nil {
			r.clean.noteNew(r, keys, gids)
		}
		for _, row := range r.table.newRows {
			g := gids[row]
			for k, a := range keys {
				r.keys[k].set(g, cellAt(a, int(row), r.keys[k].st, r.keys[k].t))
			}
		}
	} else {
		r.zeros = growSlice(r.zeros, n)
		gids = r.zeros[:n]
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
	for _, s := range r.shares {
		s.begin(gids)
	}
	return updateAggs(r.env, r.ectx, r.h.Aggs, r.aggs, c.Rec, gids, signs, &r.filters)
}

// count updates the groups' row counts and marks them touched.
func (r *aggRun) count(gids []int32, signs []int64) error {
	rows, mark := r.rows, r.mark
	if signs == nil {
		for _, g := range gids {
			rows[g]++
			if !mark[g] {
				mark[g] = true
				r.touched = append(r.touched, g)
			}
		}
		return nil
	}
	neg := false
	for i, g := range gids {
		rows[g] += signs[i]
		neg = neg || rows[g] < 0
		if !mark[g] {
			mark[g] = true
			r.touched = append(r.touched, g)
		}
	}
	if neg {
		return pgerr.Internal("stream: hashagg: a retraction for a row its group does not hold")
	}
	return nil
}

// free forgets group g, whose rows are all retracted; its id is reused.
func (r *aggRun) free(g int32) {
	r.table.remove(g)
	r.freeAt[g] = int32(len(r.table.free) - 1)
	r.markDirty(g)
	for _, a := range r.aggs {
		a.reset(g)
	}
	for _, k := range r.keys {
		k.clear(g)
	}
	for _, p := range r.prev {
		p.clear(g)
	}
	r.emitted[g], r.rows[g] = false, 0
}
