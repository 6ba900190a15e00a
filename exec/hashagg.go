package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/types"
)

// Columns returns the group keys then the aggregates.
func (h *HashAgg) Columns() []types.Column { return h.Cols }

// Children returns the input.
func (h *HashAgg) Children() []Node { return []Node{h.Input} }

// Explain returns "HashAggregate: aggs group by keys" ("Aggregate" without keys).
func (h *HashAgg) Explain() string {
	var sb strings.Builder
	if len(h.GroupBy) > 0 {
		sb.WriteString("HashAggregate")
	} else {
		sb.WriteString("Aggregate")
	}
	if len(h.Aggs) > 0 {
		parts := make([]string, len(h.Aggs))
		for i, a := range h.Aggs {
			s := a.Fn.Name + "("
			if a.Distinct {
				s += "DISTINCT "
			}
			if len(a.Args) == 0 && a.Fn.Name == "count" {
				s += "*"
			}
			s += exprList(a.Args)
			if len(a.OrderBy) > 0 {
				s += " ORDER BY " + sortKeyList(a.OrderBy)
			}
			s += ")"
			if a.Filter != nil {
				s += " FILTER (WHERE " + a.Filter.String() + ")"
			}
			parts[i] = s
		}
		sb.WriteString(": " + strings.Join(parts, ", "))
	}
	if len(h.GroupBy) > 0 {
		sb.WriteString(" group by " + exprList(h.GroupBy))
	}
	return sb.String()
}

// Open opens the input; aggregation happens on the first Next.
func (h *HashAgg) Open(ctx *Context) (Iterator, error) {
	in, err := OpenNode(ctx, h.Input)
	if err != nil {
		return nil, err
	}
	if w := workers(ctx); w > 1 && h.parallelOK() {
		return &parAggIter{ctx: ctx, h: h, in: in, w: w}, nil
	}
	acct := membudget.NewAccount(budgetOf(ctx))
	it := &hashAggIter{ctx: ctx, h: h, in: in, acct: acct}
	it.canSpill = len(h.GroupBy) > 0 && ctx != nil && ctx.TempDir != "" && budgetOf(ctx).WorkMem() > 0
	return it, nil
}

// parallelOK reports whether the aggregation can run partitioned over
// several goroutines (hashagg_par.go): it has group keys, and every
// expression it evaluates is parallelSafe.
func (h *HashAgg) parallelOK() bool {
	if len(h.GroupBy) == 0 || !parallelSafe(h.GroupBy...) {
		return false
	}
	for _, a := range h.Aggs {
		if !parallelSafe(a.Args...) || !parallelSafe(a.Filter) {
			return false
		}
		for _, k := range a.OrderBy {
			if !parallelSafe(k.E) {
				return false
			}
		}
	}
	return true
}

// groupBytes is what one more group costs beyond its key values: its hash
// table slot and one state slot per aggregate (a fixed measure of the
// flat per-group slices, not of what a state keeps: memSizer counts that).
const groupBytes = 32

// stateBytes is what the states that keep their input hold (memSizer).
func stateBytes(states []aggState) int64 {
	var n int64
	for _, st := range states {
		if m, ok := st.(memSizer); ok {
			n += m.memBytes()
		}
	}
	return n
}

// aggRun is the in-memory part of one aggregation pass: the hash table,
// the states, and the group key values in group order. Used by one
// goroutine at a time.
type aggRun struct {
	table    *hashTable // nil without GROUP BY
	states   []aggState
	keyParts [][]arrow.Array // per key column, parts in group order
	ngroups  int
	kept     int64 // state bytes charged so far
	dense    int64 // bytes of the table's dense index charged so far
	gids     []int32
	fgids    []int32
}

// newRun makes an empty run of h's aggregation.
func newRun(ctx *Context, h *HashAgg) (*aggRun, error) {
	r := &aggRun{states: make([]aggState, len(h.Aggs)), keyParts: make([][]arrow.Array, len(h.GroupBy))}
	for i := range h.Aggs {
		st, err := newAggState(ctx, &h.Aggs[i])
		if err != nil {
			return nil, err
		}
		r.states[i] = st
	}
	shareStates(h.Aggs, r.states)
	if len(h.GroupBy) > 0 {
		r.table = newHashTable(exprTypes(h.GroupBy))
		r.table.allowDense(budgetOf(ctx).WorkMem() / 4) // charged: chargeDense
	}
	return r, nil
}

// chargeDense charges acct for what the table's dense index has grown by
// (it is never given back: leaving the index for hashed slots keeps the
// charge, which the hashed slots' groupBytes then stand for).
func (r *aggRun) chargeDense(acct *membudget.Account) error {
	if b := int64(4 * len(r.table.dn.slots)); b > r.dense {
		if err := acct.Grow(b - r.dense); err != nil {
			return err
		}
		r.dense = b
	}
	return nil
}

// pass aggregates the batches next returns (the input, or a spill
// partition at depth > 0) and returns the result batches of the groups it
// kept in memory; with spilling allowed, rows of groups it did not keep go
// to new partitions (it.parts).
func (it *hashAggIter) pass(next func() (arrow.RecordBatch, error), depth int) ([]arrow.RecordBatch, error) {
	r, err := newRun(it.ctx, it.h)
	if err != nil {
		return nil, err
	}
	return it.passFrom(r, next, depth)
}

// passFrom is pass starting from the groups of r (empty, or merged from
// parallel workers), whose memory it.acct holds.
func (it *hashAggIter) passFrom(r *aggRun, next func() (arrow.RecordBatch, error), depth int) (_ []arrow.RecordBatch, err error) {
	ctx := it.ctx
	var sp *aggSpiller // non-nil once new groups go to partitions
	defer func() {
		if err != nil && sp != nil {
			sp.abort()
		}
	}()
	canSpill := it.canSpill && depth < maxAggSpillDepth
	if canSpill && r.ngroups > 0 && it.acct.OverWorkMem() {
		sp = &aggSpiller{ctx: ctx, depth: depth}
	}
	for {
		if err := canceled(ctx); err != nil {
			return nil, err
		}
		b, err := next()
		if err != nil {
			return nil, err
		}
		if b == nil {
			break
		}
		if err := it.fold(r, b, sp, it.acct); err != nil {
			return nil, err
		}
		if canSpill && sp == nil && it.acct.OverWorkMem() {
			sp = &aggSpiller{ctx: ctx, depth: depth}
		}
	}
	if sp != nil {
		parts, err := sp.finish()
		sp = nil
		if err != nil {
			return nil, err
		}
		it.parts = append(it.parts, parts...)
		it.spilled += len(parts)
	}
	return it.results(r)
}

// fold aggregates one batch into r, charging what r grows by to acct; with
// sp set, rows of keys r does not have go to sp's partitions instead.
func (it *hashAggIter) fold(r *aggRun, b arrow.RecordBatch, sp *aggSpiller, acct *membudget.Account) error {
	ctx, h := it.ctx, it.h
	n := int(b.NumRows())
	if r.table != nil {
		table := r.table
		keys, err := evalAll(ctx, h.GroupBy, b)
		if err != nil {
			return err
		}
		if sp != nil {
			r.gids = table.lookup(keys, n, r.gids, false)
			if err := sp.spill(b, r.gids, table.hv[:n]); err != nil {
				return err
			}
		} else {
			r.gids = table.insert(keys, n, r.gids, false)
		}
		if len(table.newRows) > 0 {
			mem := alloc(ctx)
			grown := int64(len(table.newRows)) * int64(groupBytes+8*len(h.Aggs))
			for k, a := range keys {
				part := takeArray(mem, a, table.newRows)
				grown += arrayBytes(part)
				r.keyParts[k] = append(r.keyParts[k], part)
			}
			if err := acct.Grow(grown); err != nil {
				return err
			}
		}
		r.ngroups = table.len()
		if err := r.chargeDense(acct); err != nil {
			return err
		}
	} else {
		if cap(r.gids) < n {
			r.gids = make([]int32, n)
		}
		r.gids = r.gids[:n]
		r.ngroups = 1
	}
	for i := range h.Aggs {
		r.states[i].grow(r.ngroups)
		g, err := it.feed(&h.Aggs[i], r.states[i], b, r.gids, r.fgids)
		if err != nil {
			return err
		}
		r.fgids = g
	}
	if now := stateBytes(r.states); now > r.kept {
		if err := acct.Grow(now - r.kept); err != nil {
			return err
		}
		r.kept = now
	}
	return nil
}

// results finishes r's states and returns its groups as batches.
func (it *hashAggIter) results(r *aggRun) ([]arrow.RecordBatch, error) {
	ctx, h := it.ctx, it.h
	mem := alloc(ctx)
	ngroups := r.ngroups
	if r.table == nil {
		ngroups = 1
	}
	for _, st := range r.states {
		st.grow(ngroups)
		if f, ok := st.(finisher); ok {
			if err := f.finish(); err != nil {
				return nil, err
			}
		}
	}
	if ngroups == 0 {
		return nil, nil
	}
	cols := make([]arrow.Array, 0, len(h.Cols))
	for k, e := range h.GroupBy {
		switch len(r.keyParts[k]) {
		case 1:
			cols = append(cols, r.keyParts[k][0])
		default:
			a, err := array.Concatenate(r.keyParts[k], mem)
			if err != nil {
				return nil, fmt.Errorf("exec: group keys of %s: %w", e, err)
			}
			cols = append(cols, a)
		}
	}
	for i, st := range r.states {
		bld := types.NewBuilder(mem, h.Aggs[i].Fn.Return)
		bld.Reserve(ngroups)
		for g := 0; g < ngroups; g++ {
			if err := st.appendResult(bld, g); err != nil {
				return nil, err
			}
		}
		cols = append(cols, bld.NewArray())
		bld.Release()
	}
	if len(cols) != len(h.Cols) {
		return nil, fmt.Errorf("exec: HashAgg has %d columns, computed %d", len(h.Cols), len(cols))
	}
	return chunkArrays(types.ArrowSchema(h.Cols), cols, ngroups, ctx.Size()), nil
}

// feed evaluates one aggregate's arguments (and FILTER) over b and updates
// its state; fgids is scratch space for filtered group ids.
func (it *hashAggIter) feed(call *AggCall, st aggState, b arrow.RecordBatch, gids, fgids []int32) ([]int32, error) {
	args, err := evalAll(it.ctx, call.Args, b)
	if err != nil {
		return fgids, err
	}
	use := gids
	if call.Filter != nil {
		m, err := eval(it.ctx, call.Filter, b)
		if err != nil {
			return fgids, err
		}
		mask, ok := m.(*array.Boolean)
		if !ok {
			return fgids, fmt.Errorf("exec: FILTER is %s, not boolean", m.DataType())
		}
		fgids = append(fgids[:0], gids...)
		for i := range fgids {
			if !boolTrue(mask, i) {
				fgids[i] = -1
			}
		}
		use = fgids
	}
	if o, ok := st.(*orderedAgg); ok {
		ks := make([]arrow.Array, len(call.OrderBy))
		for k, sk := range call.OrderBy {
			if ks[k], err = eval(it.ctx, sk.E, b); err != nil {
				return fgids, err
			}
		}
		o.setKeys(ks)
	}
	return fgids, st.update(args, use)
}
