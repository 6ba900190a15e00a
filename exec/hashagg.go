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
	acct := membudget.NewAccount(budgetOf(ctx))
	it := &hashAggIter{ctx: ctx, h: h, in: in, acct: acct}
	it.canSpill = len(h.GroupBy) > 0 && ctx != nil && ctx.TempDir != "" && budgetOf(ctx).WorkMem() > 0
	return it, nil
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

// pass aggregates the batches next returns (the input, or a spill
// partition at depth > 0) and returns the result batches of the groups it
// kept in memory; with spilling allowed, rows of groups it did not keep go
// to new partitions (it.parts).
func (it *hashAggIter) pass(next func() (arrow.RecordBatch, error), depth int) (_ []arrow.RecordBatch, err error) {
	ctx, h := it.ctx, it.h
	var sp *aggSpiller // non-nil once new groups go to partitions
	defer func() {
		if err != nil && sp != nil {
			sp.abort()
		}
	}()
	mem := alloc(ctx)
	states := make([]aggState, len(h.Aggs))
	for i := range h.Aggs {
		st, err := newAggState(ctx, &h.Aggs[i])
		if err != nil {
			return nil, err
		}
		states[i] = st
	}
	var table *hashTable
	if len(h.GroupBy) > 0 {
		table = newHashTable(exprTypes(h.GroupBy))
	}
	canSpill := it.canSpill && depth < maxAggSpillDepth
	keyParts := make([][]arrow.Array, len(h.GroupBy)) // group key values, in group order
	ngroups := 0
	var gids, fgids []int32
	var kept int64 // state bytes charged so far
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
		n := int(b.NumRows())
		if table != nil {
			keys, err := evalAll(ctx, h.GroupBy, b)
			if err != nil {
				return nil, err
			}
			if sp != nil {
				gids = table.lookup(keys, n, gids, false)
				if err := sp.spill(b, gids, table.hv[:n]); err != nil {
					return nil, err
				}
			} else {
				gids = table.insert(keys, n, gids, false)
			}
			if len(table.newRows) > 0 {
				grown := int64(len(table.newRows)) * int64(groupBytes+8*len(h.Aggs))
				for k, a := range keys {
					part := takeArray(mem, a, table.newRows)
					grown += arrayBytes(part)
					keyParts[k] = append(keyParts[k], part)
				}
				if err := it.acct.Grow(grown); err != nil {
					return nil, err
				}
			}
			ngroups = table.len()
		} else {
			if cap(gids) < n {
				gids = make([]int32, n)
			}
			gids = gids[:n]
			ngroups = 1
		}
		for i := range h.Aggs {
			states[i].grow(ngroups)
			g, err := it.feed(&h.Aggs[i], states[i], b, gids, fgids)
			if err != nil {
				return nil, err
			}
			fgids = g
		}
		if now := stateBytes(states); now > kept {
			if err := it.acct.Grow(now - kept); err != nil {
				return nil, err
			}
			kept = now
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
	if table == nil {
		ngroups = 1
	}
	for _, st := range states {
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
		switch len(keyParts[k]) {
		case 1:
			cols = append(cols, keyParts[k][0])
		default:
			a, err := array.Concatenate(keyParts[k], mem)
			if err != nil {
				return nil, fmt.Errorf("exec: group keys of %s: %w", e, err)
			}
			cols = append(cols, a)
		}
	}
	for i, st := range states {
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
