package kafka

import (
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recordPool recycles the kgo.Records a writer produces. franz-go does not
// touch a record after calling its promise, so a promise puts the record
// back (put, on the client's promise goroutine) and the writer takes
// records (get, on its own goroutine). Allocating a record per row costs
// about a tenth of a sink's CPU time otherwise.
type recordPool struct {
	mu   sync.Mutex
	back []*kgo.Record // put back by promises; guarded by mu

	free []*kgo.Record // the writer goroutine's
}

// maxPooledRecords bounds the records a pool keeps.
const maxPooledRecords = 1 << 16

// get returns a zeroed record. Writer goroutine only.
func (p *recordPool) get() *kgo.Record {
	if len(p.free) == 0 {
		p.mu.Lock()
		p.free, p.back = p.back, p.free[:0]
		p.mu.Unlock()
		if len(p.free) == 0 {
			slab := make([]kgo.Record, 1024)
			for i := range slab {
				p.free = append(p.free, &slab[i])
			}
		}
	}
	r := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	return r
}

// put takes back a record the client is done with (its promise was
// called). Any goroutine.
func (p *recordPool) put(r *kgo.Record) {
	*r = kgo.Record{}
	p.mu.Lock()
	if len(p.back) < maxPooledRecords {
		p.back = append(p.back, r)
	}
	p.mu.Unlock()
}

// firstErr keeps err in p unless p holds an error already. It takes the
// address of its own copy of err: a promise that took &err itself would
// move its err to the heap on every call, an allocation per record.
//
//go:noinline
func firstErr(p *atomic.Pointer[error], err error) {
	p.CompareAndSwap(nil, &err)
}
