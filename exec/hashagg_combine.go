package exec

import (
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/membudget"
)

// Parallel hash aggregation with partial states, the fast path of
// parAggIter when every aggregate's state is a merger (count, integer
// sum/avg, integer min/max) and the first batches do not estimate
// groupsMany groups or more (manyGroups: then every worker's table would
// hold nearly every group, and partitions cost less). Morsel-driven, as DuckDB's and HyPer's
// operators are: each of W workers (the calling goroutine is worker 0)
// takes the input's next batch under a lock and aggregates it into its own
// table and states, with no copying of the input and no goroutine between
// the input and the workers (a hand-off a batch cost more than a small
// aggregation's work on a 2-core machine); at the end the workers' groups
// are merged into the first worker's run, whose results are returned. The
// states are exact and insensitive to order, so the results equal the
// serial path's.
//
// Memory: the workers' runs are charged to their accounts and counted
// together; when they pass work_mem (and the statement may spill), the
// workers stop taking batches, their runs are merged, and the rest of the
// input is aggregated by the serial pass starting from the merged groups:
// rows of new keys spill to partitions as in the serial path.

// combinable reports whether every state of r can be merged.
func combinable(r *aggRun) bool {
	for _, st := range r.states {
		if _, ok := st.(merger); !ok {
			return false
		}
	}
	return true
}

// startCombine aggregates rest with partial states per worker; first is an
// empty run (whose states are all mergers): worker 0's.
func (it *parAggIter) startCombine(rest Iterator, first *aggRun) error {
	w := it.w
	final := it.newSub(nopIter{})
	final.started = true
	it.subs = []*hashAggIter{final}
	runs := make([]*aggRun, w)
	accts := make([]*membudget.Account, w)
	defer func() {
		for _, a := range accts {
			if a != nil {
				a.Release()
			}
		}
	}()
	runs[0] = first
	for i := range runs {
		if i > 0 {
			r, err := newRun(it.ctx, it.h)
			if err != nil {
				return err
			}
			runs[i] = r
		}
		accts[i] = membudget.NewAccount(budgetOf(it.ctx))
	}
	workMem := budgetOf(it.ctx).WorkMem()
	var (
		mu       sync.Mutex // held while reading the input
		ended    bool       // the input has ended (or failed)
		held     atomic.Int64
		overflow atomic.Bool
		stopped  atomic.Bool // a worker failed
	)
	// take returns the input's next batch, nil at its end (and after).
	take := func() (b arrow.RecordBatch, err error) {
		mu.Lock()
		defer mu.Unlock()
		if ended {
			return nil, nil
		}
		defer func() { ended = b == nil || err != nil }()
		defer recoverErr(&err)
		return rest.Next()
	}
	errs := make([]error, w)
	err := parallelDo(w, func(wk int) {
		ok := false
		defer func() {
			if !ok { // failed or panicking: the others stop too
				stopped.Store(true)
			}
		}()
		for !overflow.Load() && !stopped.Load() {
			if errs[wk] = canceled(it.ctx); errs[wk] != nil {
				return
			}
			b, err := take()
			if errs[wk] = err; err != nil {
				return
			}
			if b == nil {
				break
			}
			before := accts[wk].Used()
			if errs[wk] = final.fold(runs[wk], b, nil, accts[wk]); errs[wk] != nil {
				return
			}
			if final.canSpill && held.Add(accts[wk].Used()-before) > workMem {
				overflow.Store(true)
			}
		}
		ok = true
	})
	if err := firstError(errs, err); err != nil {
		return err
	}
	// Every worker has ended: merge their runs into worker 0's.
	dst := runs[0]
	if err := final.acct.Grow(accts[0].Used()); err != nil {
		return err
	}
	accts[0].Release()
	for i, r := range runs[1:] {
		err := mergeRun(it.ctx, dst, r, final.acct)
		runs[i+1] = nil
		if err != nil {
			return err
		}
		accts[i+1].Release()
	}
	if !overflow.Load() {
		final.out, err = final.results(dst)
		return err
	}
	final.out, err = final.passFrom(dst, take, 0)
	return err
}

// firstError is the first non-nil error of errs, else other.
func firstError(errs []error, other error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return other
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
		if err := dst.chargeDense(acct); err != nil {
			return err
		}
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
