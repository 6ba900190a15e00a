package nexmark

import (
	"math/bits"
	"sync"
	"weak"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Recycled batches (docs/contributing/parallel.md, "Recycled parts"): a
// generator builds its batches' integer columns in buffers it takes from
// a pool (a routed one copies each part's out of its scratch into them),
// and the operator that consumes a batch can hand them back
// (Reader.Recycle) once it is done with it. Written into fresh heap
// memory instead, the columns cost a cache miss a line when the collector
// had last given that memory to the other core: at two cores that made
// the generator a third slower per event than at one (docs/benchmarks.md,
// "Recycled parts").

// bufPool lends a generator's int64 column buffers and takes them
// back. Buffers come in power-of-two capacities; each class keeps at most
// poolClassMax free buffers, handed out last returned first (most likely
// still in a cache near the generator), and the pool keeps
// at most poolFreeBytes free in all. Only buffers it lent and has not
// forgotten come back: it remembers the last poolLoans loans, by weak
// pointers, so a batch that is never given back (its consumer keeps or
// copies it) is garbage as soon as its consumer drops it, as before. A
// pool none of whose last poolLoans loans came back (its batches go to a
// join, or to a share's several scans) turns off for good and lends
// plain heap memory, unremembered.
//
// lend runs on the generator's goroutine; put on any consumer's. mu
// guards everything.
type bufPool struct {
	mu        sync.Mutex
	free      [poolClasses][][]int64
	freeBytes int
	loans     map[weak.Pointer[int64]]loan
	ring      [poolLoans]weak.Pointer[int64] // the loans in the order they were made
	next      int                            // ring's slot for the next loan
	back      int                            // loans given back since next was last 0
	off       bool                           // nothing came back: lend the heap's memory
}

const (
	poolClasses   = 21 // capacities 1<<0 .. 1<<20 (MaxBatchRows)
	poolMinClass  = 10 // no buffer smaller than 1,024 values
	poolClassMax  = 16
	poolFreeBytes = 2 << 20
	// poolLoans covers the loans a pipeline holds in flight: reader,
	// Project, exchange and aggregate hold up to three channels of
	// ChannelSize batches per instance, four lent columns each. At 256,
	// the heavy aggregation (a Project before its exchange) gave back
	// every batch too late: the pool had forgotten them.
	poolLoans = 1024
)

// loan is a lent buffer's capacity and its slot in the ring.
type loan struct {
	cap  int
	slot int
}

func newBufPool() *bufPool { return &bufPool{loans: make(map[weak.Pointer[int64]]loan, poolLoans)} }

// class is the capacity class of n values: the smallest power of two at
// least n (and at least 1<<poolMinClass).
func class(n int) int {
	if n <= 1<<poolMinClass {
		return poolMinClass
	}
	return bits.Len(uint(n - 1))
}

// lend returns an empty buffer with room for n values, lent: a batch
// whose column starts at its first value can come back (put).
func (p *bufPool) lend(n int) []int64 {
	c := class(n)
	if c >= poolClasses {
		return make([]int64, 0, n)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.off {
		return make([]int64, 0, n)
	}
	var b []int64
	if q := p.free[c]; len(q) > 0 {
		b = q[len(q)-1]
		p.free[c] = q[:len(q)-1]
		p.freeBytes -= cap(b) * 8
	} else {
		b = make([]int64, 1<<c)
	}
	var none weak.Pointer[int64]
	if old := p.ring[p.next]; old != none {
		delete(p.loans, old) // forgotten: never comes back to the pool
	}
	key := weak.Make(&b[0])
	p.loans[key] = loan{cap: cap(b), slot: p.next}
	p.ring[p.next] = key
	p.next = (p.next + 1) % poolLoans
	if p.next == 0 {
		if p.back == 0 { // a whole ring of loans and none came back
			p.off, p.loans, p.ring = true, nil, [poolLoans]weak.Pointer[int64]{}
		}
		p.back = 0
	}
	return b[:0]
}

// clone returns a lent copy of v (v itself when empty).
func (p *bufPool) clone(v []int64) []int64 {
	if len(v) == 0 {
		return v
	}
	return append(p.lend(len(v)), v...)
}

// put takes back the lent buffers of rec's int64 and timestamp columns.
// The caller must not read rec afterwards.
func (p *bufPool) put(rec arrow.RecordBatch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, col := range rec.Columns() {
		v := int64Values(col)
		if len(v) == 0 {
			continue
		}
		key := weak.Make(&v[0])
		// Arrow keeps the capacity of the slice an array was made over
		// (int64Array): a column whose values do not reach it is not the
		// lent buffer's whole and is left alone.
		if l, ok := p.loans[key]; ok && cap(v) == l.cap {
			delete(p.loans, key)
			p.ring[l.slot] = weak.Pointer[int64]{}
			p.back++
			b := v[:cap(v)]
			c := class(cap(b))
			if len(p.free[c]) < poolClassMax && p.freeBytes+cap(b)*8 <= poolFreeBytes {
				p.free[c] = append(p.free[c], b)
				p.freeBytes += cap(b) * 8
			}
		}
	}
}

// int64Values is the values of an int64 or timestamp column (nil for
// another type), as Arrow keeps them: from the column's offset, with the
// capacity of the slice the column was made over.
func int64Values(col arrow.Array) []int64 {
	switch a := col.(type) {
	case *array.Int64:
		return a.Int64Values()
	case *array.Timestamp:
		return arrow.Int64Traits.CastFromBytes(arrow.TimestampTraits.CastToBytes(a.TimestampValues()))
	}
	return nil
}

// Recycle takes back the buffers of a batch or part that Next returned,
// once its consumer is done with it: the generator may then write them
// again. A batch it did not lend, or no longer remembers, is left to the
// garbage collector. Safe from any goroutine; call it at most once per
// batch, and read nothing of rec afterwards.
func (g *Generator) Recycle(rec arrow.RecordBatch) {
	if g.pool != nil && rec != nil {
		g.pool.put(rec)
	}
}

// close drops the pool's free buffers and turns it off: its generator
// has ended, so nothing will be lent again, and buffers given back later
// are left to the garbage collector (loans are forgotten).
func (p *bufPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.off, p.loans, p.ring = true, nil, [poolLoans]weak.Pointer[int64]{}
	p.free, p.freeBytes = [poolClasses][][]int64{}, 0
}

// closePool drops the free buffers of a recycling generator that ended
// (its reader's run returned): a finished source keeps no memory.
func (g *Generator) closePool() {
	if g.pool != nil {
		g.pool.close()
	}
}
