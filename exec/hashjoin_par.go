package exec

import (
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// Parallel hash join probe. Once the build side is indexed (hash table or
// dense array, both read-only from then on), the left input's batches are
// probed W at a time by W goroutines, each with its own probe scratch
// (hashTable.view) and its own copy of the joiner's output state; the
// output batches are queued in input order, so the join returns
// exactly the rows, in the order, of the serial probe. Inner, left, semi
// and anti joins only: right and full joins record which build rows
// matched, shared state that stays on one goroutine; joins whose keys or
// residual condition are not parallelSafe stay serial too. The build
// itself is serial.

// parallelProbeOK reports whether the join's probe may run on several
// goroutines.
func (h *HashJoin) parallelProbeOK() bool {
	switch h.Kind {
	case InnerJoin, LeftJoin, SemiJoin, AntiJoin:
	default:
		return false
	}
	return parallelSafe(h.LeftKeys...) && parallelSafe(h.Residual)
}

// parProbe is a running parallel probe, used by the iterator's goroutine.
// The left input is read on that goroutine only, W batches a round, and
// the W batches are probed at once while it waits: nothing runs the left
// subtree (whose expressions may use the statement's shared caches, such
// as uncorrelated subquery results) concurrently with the operators above
// the join, and no goroutine outlives a Next call.
type parProbe struct {
	it    *hashJoinIter
	probe func(wk int, b arrow.RecordBatch) ([]arrow.RecordBatch, error)
	w     int
	out   []arrow.RecordBatch
	done  bool
}

// startParProbe prepares probing the left input on w goroutines.
func (it *hashJoinIter) startParProbe(w int) *parProbe {
	type worker struct {
		table *hashTable
		gids  []int32
		j     *joiner
	}
	ws := make([]worker, w)
	for i := range ws {
		jc := *it.j
		jc.out, jc.leftHit = batchQueue{}, nil
		ws[i].j = &jc
		if it.table != nil {
			ws[i].table = it.table.view()
		}
	}
	ctx := it.j.ctx
	probe := func(wk int, b arrow.RecordBatch) ([]arrow.RecordBatch, error) {
		s := &ws[wk]
		pl, pr, gids, err := it.pairs(ctx, s.table, b, s.gids)
		s.gids = gids
		if err != nil {
			return nil, err
		}
		if err := s.j.emit(b, pl, pr); err != nil {
			return nil, err
		}
		out := s.j.out.q
		s.j.out = batchQueue{}
		return out, nil
	}
	return &parProbe{it: it, probe: probe, w: w}
}

// next returns the next output batch, in the serial probe's order.
func (p *parProbe) next() (arrow.RecordBatch, error) {
	for len(p.out) == 0 {
		if p.done {
			return nil, nil
		}
		if err := p.round(); err != nil {
			return nil, err
		}
	}
	b := p.out[0]
	p.out = p.out[1:]
	return b, nil
}

// round reads up to w left batches and probes them in parallel.
func (p *parProbe) round() error {
	ctx := p.it.j.ctx
	var bs []arrow.RecordBatch
	for len(bs) < p.w {
		if err := canceled(ctx); err != nil {
			return err
		}
		b, err := p.it.left.Next()
		if err != nil {
			return err
		}
		if b == nil {
			p.done = true
			break
		}
		bs = append(bs, b)
	}
	res := make([][]arrow.RecordBatch, len(bs))
	errs := make([]error, len(bs))
	var wg sync.WaitGroup
	for i := 1; i < len(bs); i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer recoverErr(&errs[i])
			res[i], errs[i] = p.probe(i, bs[i])
		}(i)
	}
	if len(bs) > 0 {
		func() {
			defer recoverErr(&errs[0])
			res[0], errs[0] = p.probe(0, bs[0])
		}()
	}
	wg.Wait()
	for i := range bs {
		if errs[i] != nil {
			return errs[i]
		}
		p.out = append(p.out, res[i]...)
	}
	return nil
}
