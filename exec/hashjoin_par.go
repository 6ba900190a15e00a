package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// Parallel hash join probe. Once the build side is indexed (hash table or
// dense array, both read-only from then on), the left input's batches are
// probed by W goroutines, each with its own probe scratch (hashTable.view)
// and its own copy of the joiner's output state; the output batches of
// each left batch come back in input order (parMap), so the join returns
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

// parProbe is a running parallel probe; used by the iterator's goroutine.
type parProbe struct {
	pm  *parMap[[]arrow.RecordBatch]
	out []arrow.RecordBatch
}

// startParProbe starts probing the left input on w goroutines.
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
	return &parProbe{pm: startParMap(ctx, it.left.Next, w, probe)}
}

// next returns the next output batch, in the serial probe's order.
func (p *parProbe) next() (arrow.RecordBatch, error) {
	for len(p.out) == 0 {
		bs, ok, err := p.pm.next()
		if err != nil || !ok {
			p.pm.stop()
			return nil, err
		}
		p.out = bs
	}
	b := p.out[0]
	p.out = p.out[1:]
	return b, nil
}
