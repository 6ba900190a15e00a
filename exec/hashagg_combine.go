package exec

import (
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/membudget"
)

// Parallel hash aggregation with partial states, the fast path of
// parAggIter when every aggregate's state is a merger (count, integer
// sum/avg, integer min/max). Each of W workers aggregates the batches it
// is handed into its own table and states, with no copying of the input;
// at the end the workers' groups are merged, worker by worker, into one
// run whose results are returned. The states are exact and insensitive to
// order, so the results equal the serial path's.
//
// Memory: the workers' runs are charged to their accounts and counted
// together; when they pass work_mem (and the statement may spill), the
// workers stop aggregating (each batch they are handed from then on comes
// back unaggregated, in input order), their runs are merged, and the rest
// of the input is aggregated by the serial pass starting from the merged
// groups: rows of new keys spill to partitions as in the serial path.

// localAgg is one worker's partial aggregation; mu is held while it folds a
// batch and while the consumer merges it.
type localAgg struct {
	mu   sync.Mutex
	run  *aggRun
	acct *membudget.Account
}

// combinable reports whether every state of r can be merged.
func combinable(r *aggRun) bool {
	for _, st := range r.states {
		if _, ok := st.(merger); !ok {
			return false
		}
	}
	return true
}

// startCombine aggregates rest with partial states per worker; dst is an
// empty run (whose states are all mergers) that receives the groups.
func (it *parAggIter) startCombine(rest Iterator, dst *aggRun) error {
	w := it.w
	final := it.newSub(nopIter{})
	final.started = true
	it.subs = []*hashAggIter{final}
	locals := make([]*localAgg, w)
	defer func() {
		for _, l := range locals {
			if l != nil {
				l.acct.Release()
			}
		}
	}()
	for i := range locals {
		r, err := newRun(it.ctx, it.h)
		if err != nil {
			return err
		}
		locals[i] = &localAgg{run: r, acct: membudget.NewAccount(budgetOf(it.ctx))}
	}
	workMem := budgetOf(it.ctx).WorkMem()
	var held atomic.Int64
	var overflow atomic.Bool
	fold := func(wk int, b arrow.RecordBatch) (arrow.RecordBatch, error) {
		l := locals[wk]
		l.mu.Lock()
		defer l.mu.Unlock()
		if overflow.Load() {
			return b, nil
		}
		before := l.acct.Used()
		if err := final.fold(l.run, b, nil, l.acct); err != nil {
			return nil, err
		}
		if final.canSpill && held.Add(l.acct.Used()-before) > workMem {
			overflow.Store(true)
		}
		return nil, nil
	}
	pm := startParMap(it.ctx, rest.Next, w, fold)
	defer pm.stop()
	next := func() (arrow.RecordBatch, error) {
		for {
			b, ok, err := pm.next()
			if err != nil || !ok {
				return nil, err
			}
			if b != nil {
				return b, nil
			}
		}
	}
	first, err := next()
	if err != nil {
		return err
	}
	// Either the input has ended or the workers have stopped folding:
	// each local run is merged once its worker is done with it.
	for _, l := range locals {
		l.mu.Lock()
		err := mergeRun(it.ctx, dst, l.run, final.acct)
		l.run = nil
		l.mu.Unlock()
		if err != nil {
			return err
		}
		l.acct.Release()
	}
	if first == nil {
		final.out, err = final.results(dst)
		return err
	}
	final.out, err = final.passFrom(dst, (&prefixIter{bs: []arrow.RecordBatch{first}, rest: funcIter(next)}).Next, 0)
	return err
}

// mergeRun adds src's groups to dst (every state a merger), charging dst's
// new keys to acct.
func mergeRun(ctx *Context, dst, src *aggRun, acct *membudget.Account) error {
	if src.table == nil || len(src.keyParts) == 0 {
		return nil
	}
	mem := alloc(ctx)
	base := 0
	keys := make([]arrow.Array, len(src.keyParts))
	for c := range src.keyParts[0] {
		for k := range keys {
			keys[k] = src.keyParts[k][c]
		}
		n := keys[0].Len()
		dst.gids = dst.table.insert(keys, n, dst.gids, false)
		if nr := dst.table.newRows; len(nr) > 0 {
			grown := int64(len(nr)) * int64(groupBytes+8*len(dst.states))
			for k, a := range keys {
				part := a
				if len(nr) != n {
					part = takeArray(mem, a, nr)
				}
				grown += arrayBytes(part)
				dst.keyParts[k] = append(dst.keyParts[k], part)
			}
			if err := acct.Grow(grown); err != nil {
				return err
			}
		}
		dst.ngroups = dst.table.len()
		for i, st := range dst.states {
			st.grow(dst.ngroups)
			st.(merger).mergeFrom(src.states[i], base, dst.gids)
		}
		base += n
	}
	return nil
}

// funcIter is an Iterator over a next function, with nothing to close.
type funcIter func() (arrow.RecordBatch, error)

func (f funcIter) Next() (arrow.RecordBatch, error) { return f() }
func (f funcIter) Close() error                     { return nil }
