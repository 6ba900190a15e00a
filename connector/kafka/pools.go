package kafka

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// fetchPools lets franz-go reuse the memory of fetched messages: the
// slices of kgo.Record a fetched batch is decoded into and the buffers
// compressed batches are decompressed into (kgo.PoolRecords,
// kgo.PoolDecompressBytes). Without them every fetch allocates both anew,
// and the garbage collector's share of a fast source is larger than the
// JSON decoding's. A record goes back with kgo.Record.Recycle once the
// reader has copied what it needs into its Arrow builders (Reader.partition);
// a batch's slices return to the pool when its last record is recycled.
// Safe for concurrent use (sync.Pool).
type fetchPools struct {
	recs  sync.Pool // *[]kgo.Record
	bytes sync.Pool // *[]byte
}

// pools is shared by every reader of the process: the buffers are sized by
// fetches, not by sources.
var pools = &fetchPools{}

// maxPooledBytes bounds a decompression buffer kept for reuse (a fetch of
// one partition is at most fetchMaxPartBytes compressed).
const maxPooledBytes = 16 << 20

func (p *fetchPools) GetRecords(n int) []kgo.Record {
	if v, ok := p.recs.Get().(*[]kgo.Record); ok && cap(*v) >= n {
		return (*v)[:0]
	}
	return make([]kgo.Record, 0, max(n, 512))
}

func (p *fetchPools) PutRecords(r []kgo.Record) {
	r = r[:0]
	p.recs.Put(&r)
}

func (p *fetchPools) GetDecompressBytes(compressed []byte, _ kgo.CompressionCodecType) []byte {
	want := 4 * len(compressed) // JSON compresses about 3-5x; franz-go grows a short buffer
	if v, ok := p.bytes.Get().(*[]byte); ok && cap(*v) >= want {
		return (*v)[:0]
	}
	return make([]byte, 0, want)
}

func (p *fetchPools) PutDecompressBytes(b []byte) {
	if cap(b) > maxPooledBytes {
		return
	}
	b = b[:0]
	p.bytes.Put(&b)
}
