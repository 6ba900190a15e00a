package exec

import (
	"hash/maphash"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/membudget"
)

// Parallel hash aggregation (GROUP BY). With W workers the group keys are
// split into W partitions by a hash of the key; every group lives in one
// partition and each partition is aggregated by one goroutine with the
// serial code (hashAggIter.pass), spilling included. The input is read by
// one feeder and split by W goroutines (evaluate the keys, hash them, take
// each partition's rows); the pieces reach each partition in input order
// (parMap), so every group sees exactly the rows the serial path gives it,
// in the same order: sums of floats, string_agg, array_agg, DISTINCT and
// ORDER BY aggregates give bit-identical results, and no aggregate needs a
// combine function. Groups come out partition by partition (each in its
// order of first appearance), an order SQL leaves unspecified.
//
// What stays serial: aggregation without GROUP BY (one group), inputs of
// at most one batch (not worth the goroutines), and aggregates whose
// expressions are not parallelSafe (subqueries, volatile functions).
// Memory: each partition has its own account and spills past work_mem
// like the serial path (PostgreSQL's parallel workers likewise each get
// work_mem); between the feeder and the partitions at most 2W+2 input
// batches are in flight, plus 4 pieces queued per partition.

// parSeed hashes text and encoded keys for partitioning: one seed for all
// splitters, so that a key goes to one partition whoever splits it.
var parSeed = maphash.MakeSeed()

// parAggIter is a parallel HashAgg's execution. Next is called by one
// goroutine; the workers run inside the first Next and have all ended when
// it returns.
type parAggIter struct {
	ctx     *Context
	h       *HashAgg
	in      Iterator
	w       int
	started bool
	subs    []*hashAggIter // per partition, after the parallel pass
	cur     int
}

// partitionOf maps a key hash to one of w partitions, with bits the hash
// table of the partition does not use for its slots.
func partitionOf(hv uint64, w int) int {
	return int((mix64(hv^0x2545F4914F6CDD1D) >> 32) * uint64(w) >> 32)
}

func (it *parAggIter) Next() (_ arrow.RecordBatch, err error) {
	defer recoverErr(&err)
	if !it.started {
		it.started = true
		if err := it.start(); err != nil {
			return nil, err
		}
	}
	for it.cur < len(it.subs) {
		b, err := it.subs[it.cur].Next()
		if err != nil || b != nil {
			return b, err
		}
		it.cur++
	}
	return nil, nil
}

// newSub is a hashAggIter for one partition (or the serial fallback)
// reading in.
func (it *parAggIter) newSub(in Iterator) *hashAggIter {
	s := &hashAggIter{ctx: it.ctx, h: it.h, in: in, acct: membudget.NewAccount(budgetOf(it.ctx))}
	s.canSpill = it.ctx != nil && it.ctx.TempDir != "" && budgetOf(it.ctx).WorkMem() > 0
	return s
}

// start reads ahead two batches: a shorter input is aggregated serially;
// otherwise the partitions are aggregated in parallel (their first pass;
// what they spill is aggregated by Next, partition by partition).
func (it *parAggIter) start() error {
	var head []arrow.RecordBatch
	for len(head) < 2 {
		b, err := nextCharged(it.ctx, it.in, nil)
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		head = append(head, b)
	}
	rest := &prefixIter{bs: head, rest: it.in}
	if len(head) < 2 {
		it.subs = []*hashAggIter{it.newSub(rest)}
		return nil
	}
	if dst, err := newRun(it.ctx, it.h); err != nil {
		return err
	} else if combinable(dst) {
		many, err := it.manyGroups(head)
		if err != nil {
			return err
		}
		if !many {
			return it.startCombine(rest, dst)
		}
	}
	w := it.w
	scratch := make([]*hashTable, w)
	idx := make([][][]int32, w)
	for i := range scratch {
		scratch[i] = newHashTable(exprTypes(it.h.GroupBy))
		scratch[i].seed = parSeed
		idx[i] = make([][]int32, w)
	}
	split := func(wk int, b arrow.RecordBatch) ([]arrow.RecordBatch, error) {
		n := int(b.NumRows())
		keys, err := evalAll(it.ctx, it.h.GroupBy, b)
		if err != nil {
			return nil, err
		}
		ht, rows := scratch[wk], idx[wk]
		ht.prepare(keys, n)
		for p := range rows {
			rows[p] = rows[p][:0]
		}
		for i, hv := range ht.hv[:n] {
			p := partitionOf(hv, w)
			rows[p] = append(rows[p], int32(i))
		}
		pieces := make([]arrow.RecordBatch, w)
		mem := alloc(it.ctx)
		for p, r := range rows {
			switch len(r) {
			case 0:
			case n:
				pieces[p] = b
			default:
				pieces[p] = array.NewRecordBatch(b.Schema(), takeArrays(mem, b.Columns(), r), int64(len(r)))
			}
		}
		return pieces, nil
	}
	pm := startParMap(it.ctx, rest.Next, w, split)
	defer pm.stop()

	chans := make([]chan arrow.RecordBatch, w)
	failed := make(chan struct{})
	var failOnce sync.Once
	errs := make([]error, w)
	it.subs = make([]*hashAggIter, w)
	var wg sync.WaitGroup
	for p := 0; p < w; p++ {
		chans[p] = make(chan arrow.RecordBatch, 4)
		it.subs[p] = it.newSub(nopIter{})
		it.subs[p].started = true
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			err := func() (err error) {
				defer recoverErr(&err)
				next := func() (arrow.RecordBatch, error) {
					select {
					case b, ok := <-chans[p]:
						if !ok {
							return nil, nil
						}
						return b, nil
					case <-failed:
						return nil, errParStopped
					}
				}
				it.subs[p].out, err = it.subs[p].pass(next, 0)
				return err
			}()
			if err != nil {
				errs[p] = err
				failOnce.Do(func() { close(failed) })
			}
		}(p)
	}
	dispErr := func() error {
		defer func() {
			for _, c := range chans {
				close(c)
			}
		}()
		for {
			pieces, ok, err := pm.next()
			if err != nil || !ok {
				return err
			}
			for p, b := range pieces {
				if b == nil {
					continue
				}
				select {
				case chans[p] <- b:
				case <-failed:
					return nil
				}
			}
		}
	}()
	if dispErr != nil {
		failOnce.Do(func() { close(failed) })
	}
	wg.Wait()
	pm.stop()
	if dispErr != nil {
		return dispErr
	}
	for _, err := range errs {
		if err != nil && err != errParStopped {
			return err
		}
	}
	return nil
}

// groupsMany is the estimated number of groups from which partial states
// give way to partitions: each worker's partial table holds nearly every
// group, so W workers build W tables of that size and one goroutine merges
// them (BenchmarkHashAggHighCard, 1M groups: 2 workers took 470-570 ms
// with partial states, 360-375 ms with partitions, 420-460 ms alone); with
// fewer groups the tables stay small and the merge cheap, while partitions
// copy every input row once.
const groupsMany = 1 << 18

// manyGroups estimates from the first batches (n rows, d distinct keys)
// whether the input has groupsMany groups or more. Rows drawn from K
// equally likely keys repeat an earlier key about n²/2K times, so K is
// about n²/(2(n-d)); an input sorted by its keys looks like few groups and
// keeps partial states, which is what it costs least with.
func (it *parAggIter) manyGroups(head []arrow.RecordBatch) (bool, error) {
	ht := newHashTable(exprTypes(it.h.GroupBy))
	ht.seed = parSeed
	seen := make(map[uint64]struct{})
	n := 0
	for _, b := range head {
		rows := int(b.NumRows())
		keys, err := evalAll(it.ctx, it.h.GroupBy, b)
		if err != nil {
			return false, err
		}
		ht.prepare(keys, rows)
		for _, hv := range ht.hv[:rows] {
			seen[hv] = struct{}{}
		}
		n += rows
	}
	d := len(seen)
	return d >= n || float64(n)*float64(n)/(2*float64(n-d)) >= groupsMany, nil
}

func (it *parAggIter) Close() error {
	for _, s := range it.subs {
		s.in = nopIter{}
		s.Close()
	}
	it.subs = nil
	return it.in.Close()
}

// nopIter is an input that has ended.
type nopIter struct{}

func (nopIter) Next() (arrow.RecordBatch, error) { return nil, nil }
func (nopIter) Close() error                     { return nil }
