package nexmark

import (
	"math/bits"
	"sync"

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
// forgotten come back: it remembers the last poolLoans loans, so a part
// that is never given back (its consumer keeps or copies it) costs
// nothing but garbage, as before.
//
// get runs on the generator's goroutine; put on any consumer's. mu guards
// everything.
type bufPool struct {
	mu        sync.Mutex
	free      [poolClasses][][]int64
	freeBytes int
	loans     map[*int64]loan
	ring      [poolLoans]*int64 // the loans in the order they were made
	next      int               // ring's slot for the next loan
}

const (
	poolClasses   = 21 // capacities 1<<0 .. 1<<20 (MaxBatchRows)
	poolMinClass  = 10 // no buffer smaller than 1,024 values
	poolClassMax  = 32
	poolFreeBytes = 8 << 20
	poolLoans     = 256
)

// loan is a lent buffer (its whole capacity) and its slot in the ring.
type loan struct {
	buf  []int64
	slot int
}

func newBufPool() *bufPool { return &bufPool{loans: make(map[*int64]loan, poolLoans)} }

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
	var b []int64
	if q := p.free[c]; len(q) > 0 {
		b = q[len(q)-1]
		p.free[c] = q[:len(q)-1]
		p.freeBytes -= cap(b) * 8
	}
	p.mu.Unlock()
	if b == nil {
		b = make([]int64, 1<<c)
	}
	p.mu.Lock()
	if old := p.ring[p.next]; old != nil {
		delete(p.loans, old) // forgotten: never comes back to the pool
	}
	key := &b[0]
	p.loans[key] = loan{buf: b, slot: p.next}
	p.ring[p.next] = key
	p.next = (p.next + 1) % poolLoans
	p.mu.Unlock()
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
	for _, col := range rec.Columns() {
		var v []int64
		switch a := col.(type) {
		case *array.Int64:
			v = a.Int64Values()
		case *array.Timestamp:
			v = arrow.Int64Traits.CastFromBytes(arrow.TimestampTraits.CastToBytes(a.TimestampValues()))
		default:
			continue
		}
		if len(v) == 0 {
			continue
		}
		p.mu.Lock()
		key := &v[0]
		if l, ok := p.loans[key]; ok {
			delete(p.loans, key)
			p.ring[l.slot] = nil
			b := l.buf
			c := class(cap(b))
			if len(p.free[c]) < poolClassMax && p.freeBytes+cap(b)*8 <= poolFreeBytes {
				p.free[c] = append(p.free[c], b)
				p.freeBytes += cap(b) * 8
			}
		}
		p.mu.Unlock()
	}
}

// Recycle takes back the buffers of a batch or part that Next returned,
// once its consumer is done with it: the generator may
// then write them again. A batch it did not lend, or no longer remembers,
// is left to the garbage collector. Safe from any goroutine; call it at
// most once per part, and read nothing of rec afterwards.
func (g *Generator) Recycle(rec arrow.RecordBatch) {
	if g.pool != nil && rec != nil {
		g.pool.put(rec)
	}
}
