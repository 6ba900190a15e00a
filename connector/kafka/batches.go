package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A fetched partition's record batches are read here, without franz-go's
// consumer: the consumer builds a kgo.Record (about 170 bytes, with
// pointers the collector scans) for every message, which cost about a
// third of the source's CPU. A reader only needs each message's offset,
// timestamp, key and value for as long as it decodes it into Arrow
// builders, so the batches are checked (CRC-32C), decompressed (franz-go's
// decompressor, into recycled buffers) and filtered of aborted
// transactions and control batches here, and a message is a view into the
// batch's bytes (message), valid until the fetch is released.

// message is one Kafka message of a fetch. Key and Value point into the
// fetch's buffers: they are valid until its release.
type message struct {
	Partition int32
	Offset    int64
	Timestamp int64 // milliseconds since the epoch
	Key       []byte
	Value     []byte
}

// recordBatch is one committed data batch of a fetched partition, its
// records decompressed.
type recordBatch struct {
	baseOffset int64
	attrs      int16
	firstTS    int64 // first timestamp (or the log append time), ms
	logAppend  bool  // every record's timestamp is firstTS
	records    []byte
	count      int32
}

// Batch attribute bits (Kafka's RecordBatch v2).
const (
	attrCodec         = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
)

// batchHeaderLen is the length of a v2 record batch's header, up to its
// records.
const batchHeaderLen = 61

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// errCorruptBatch marks a batch that fails its checks.
var errCorruptBatch = errors.New("kafka: corrupt record batch")

// decompressBuffers recycles the buffers batches are decompressed into
// (kgo.PoolDecompressBytes): a fetch gives its buffers back on release,
// so a reader that keeps up decompresses into the same memory again
// instead of allocating (and zeroing) a buffer per batch. Safe for
// concurrent use.
type decompressBuffers struct {
	mu    sync.Mutex
	free  [][]byte // by capacity, ascending
	bytes int      // their capacity in all
}

// maxFreeDecompressBytes bounds the memory decompressBuffers keeps.
const maxFreeDecompressBytes = 64 << 20

// GetDecompressBytes returns the smallest free buffer that holds what
// compressed decompresses to (exactly known for snappy, guessed as four
// times its size otherwise), or a new one.
func (p *decompressBuffers) GetDecompressBytes(compressed []byte, codec kgo.CompressionCodecType) []byte {
	need := 4 * len(compressed)
	if codec == kgo.CodecSnappy {
		if n, err := s2.DecodedLen(compressed); err == nil {
			need = n
		}
	}
	p.mu.Lock()
	i := sort.Search(len(p.free), func(i int) bool { return cap(p.free[i]) >= need })
	if i < len(p.free) {
		b := p.free[i]
		p.free = append(p.free[:i], p.free[i+1:]...)
		p.bytes -= cap(b)
		p.mu.Unlock()
		return b[:0]
	}
	p.mu.Unlock()
	return make([]byte, 0, max(need, 16<<10))
}

// PutDecompressBytes keeps b for reuse, within maxFreeDecompressBytes.
func (p *decompressBuffers) PutDecompressBytes(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bytes+cap(b) > maxFreeDecompressBytes {
		return
	}
	i := sort.Search(len(p.free), func(i int) bool { return cap(p.free[i]) >= cap(b) })
	p.free = append(p.free, nil)
	copy(p.free[i+1:], p.free[i:])
	p.free[i] = b[:0]
	p.bytes += cap(b)
}

// partitionFetch is what one fetch brought for one partition, ready to be
// decoded by the reader's Run goroutine.
type partitionFetch struct {
	partition int32
	from      int64 // the offset the fetch asked for: records before it are skipped
	next      int64 // the offset after the last batch read (messages, aborted batches and markers)
	hwm, lso  int64 // the broker's high watermark and last stable offset (-1: not known)
	batches   []recordBatch
	legacy    []message // messages of a pre-0.11 message set (kgo decoded them)
	warn      error     // a warning to report (data lost before it was read)
	buffers   [][]byte  // decompression buffers to give back on release
}

// release gives the fetch's decompression buffers back to pool; its
// messages must not be used after.
func (f *partitionFetch) release(pool *decompressBuffers) {
	for _, b := range f.buffers {
		pool.PutDecompressBytes(b)
	}
	f.buffers = nil
	f.batches = nil
	f.legacy = nil
}

// readBatches reads rp's record batches from offset from: it checks each
// batch's CRC, drops the batches of aborted transactions (rp's aborted
// list, as read_committed consumers do) and control batches, and
// decompresses the others. A truncated last batch (the broker cuts at the
// size limit) ends the read; the fetch's next offset is after the last
// whole batch. A corrupt batch ends the read with an error wrapping
// errCorruptBatch (next is then that batch's offset).
func readBatches(topic string, rp *kmsg.FetchResponseTopicPartition, from int64, dec kgo.Decompressor) (*partitionFetch, error) {
	f := &partitionFetch{partition: rp.Partition, from: from, next: from, hwm: rp.HighWatermark, lso: rp.LastStableOffset}
	raw := rp.RecordBatches
	aborted := rp.AbortedTransactions
	sort.Slice(aborted, func(i, j int) bool { return aborted[i].FirstOffset < aborted[j].FirstOffset })
	var abortedPIDs map[int64]bool
	for len(raw) >= 17 {
		base := int64(binary.BigEndian.Uint64(raw))
		length := int(int32(binary.BigEndian.Uint32(raw[8:])))
		if length < 0 {
			return f, fmt.Errorf("%w: negative length at offset %d", errCorruptBatch, base)
		}
		if len(raw) < 12+length {
			break // truncated by the broker's size limit: fetched again next time
		}
		if magic := raw[16]; magic < 2 {
			// A message set written before Kafka 0.11: franz-go reads it.
			return f, readLegacy(topic, rp, f, dec)
		}
		b := raw[:12+length]
		raw = raw[12+length:]
		if len(b) < batchHeaderLen {
			return f, fmt.Errorf("%w: short batch at offset %d", errCorruptBatch, base)
		}
		if crc := binary.BigEndian.Uint32(b[17:]); crc32.Checksum(b[21:], crc32c) != crc {
			return f, fmt.Errorf("%w: CRC mismatch at offset %d", errCorruptBatch, base)
		}
		attrs := int16(binary.BigEndian.Uint16(b[21:]))
		last := base + int64(int32(binary.BigEndian.Uint32(b[23:])))
		pid := int64(binary.BigEndian.Uint64(b[43:]))
		next := last + 1
		for len(aborted) > 0 && aborted[0].FirstOffset <= last {
			if abortedPIDs == nil {
				abortedPIDs = map[int64]bool{}
			}
			abortedPIDs[aborted[0].ProducerID] = true
			aborted = aborted[1:]
		}
		transactional := attrs&attrTransactional != 0
		if attrs&attrControl != 0 {
			if transactional && abortedPIDs[pid] {
				// The abort marker ends the producer's aborted transaction.
				if isAbort, err := controlIsAbort(b, attrs, dec, f); err != nil {
					return f, fmt.Errorf("%w: control batch at offset %d: %v", errCorruptBatch, base, err)
				} else if isAbort {
					delete(abortedPIDs, pid)
				}
			}
			f.next = max(f.next, next)
			continue
		}
		if (transactional && abortedPIDs[pid]) || last < from {
			f.next = max(f.next, next)
			continue
		}
		recs, err := batchRecords(b, attrs, dec, f)
		if err != nil {
			return f, fmt.Errorf("%w: batch at offset %d: %v", errCorruptBatch, base, err)
		}
		ts := int64(binary.BigEndian.Uint64(b[27:]))
		logAppend := attrs&attrLogAppendTime != 0
		if logAppend {
			ts = int64(binary.BigEndian.Uint64(b[35:])) // max timestamp: the append time
		}
		f.batches = append(f.batches, recordBatch{baseOffset: base, attrs: attrs, firstTS: ts, logAppend: logAppend,
			records: recs, count: int32(binary.BigEndian.Uint32(b[57:]))})
		f.next = max(f.next, next)
	}
	return f, nil
}

// batchRecords returns the records of batch b, decompressed; a buffer
// the decompressor took from the pool is noted in f to be given back.
func batchRecords(b []byte, attrs int16, dec kgo.Decompressor, f *partitionFetch) ([]byte, error) {
	recs := b[batchHeaderLen:]
	codec := kgo.CompressionCodecType(attrs & attrCodec)
	if codec == kgo.CodecNone {
		return recs, nil
	}
	out, err := dec.Decompress(recs, codec)
	if err != nil {
		return nil, err
	}
	f.buffers = append(f.buffers, out)
	return out, nil
}

// controlIsAbort reports whether control batch b holds an abort marker
// (its first record's key: version int16, type int16; 0 is abort).
func controlIsAbort(b []byte, attrs int16, dec kgo.Decompressor, f *partitionFetch) (bool, error) {
	recs, err := batchRecords(b, attrs, dec, f)
	if err != nil {
		return false, err
	}
	var abort bool
	found := false
	err = eachRecord(recordBatch{records: recs, count: 1}, func(_ int64, _ int64, key, _ []byte) bool {
		found = true
		abort = len(key) >= 4 && binary.BigEndian.Uint16(key[2:]) == 0
		return false
	})
	if err == nil && !found {
		err = errors.New("no marker record")
	}
	return abort, err
}

// eachRecord calls fn with each record of rb (its offset, timestamp in
// ms, key and value; key is nil for a null key, value nil for a null
// value) until fn returns false. A record that does not parse is an
// error.
func eachRecord(rb recordBatch, fn func(offset, ts int64, key, value []byte) bool) error {
	in := rb.records
	for range rb.count {
		length, used := kbin.Varint(in)
		if used <= 0 || length < 0 || len(in) < used+int(length) {
			return fmt.Errorf("a record of %d bytes in %d", length, len(in))
		}
		r := kbin.Reader{Src: in[used : used+int(length)]}
		in = in[used+int(length):]
		r.Int8() // attributes: unused
		tsDelta := r.Varlong()
		offDelta := r.Varint()
		key := r.VarintBytes()
		value := r.VarintBytes()
		// headers follow; a reader does not use them
		if !r.Ok() {
			return errors.New("a record is truncated")
		}
		ts := rb.firstTS
		if !rb.logAppend {
			ts += tsDelta
		}
		if !fn(rb.baseOffset+int64(offDelta), ts, key, value) {
			return nil
		}
	}
	return nil
}

// readLegacy reads rp's pre-0.11 message sets with franz-go into f.legacy.
func readLegacy(topic string, rp *kmsg.FetchResponseTopicPartition, f *partitionFetch, dec kgo.Decompressor) error {
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
		Offset: f.from, IsolationLevel: kgo.ReadCommitted(), Topic: topic, Partition: rp.Partition,
	}, rp, dec, nil)
	if fp.Err != nil {
		return fmt.Errorf("%w: %v", errCorruptBatch, fp.Err)
	}
	for _, rec := range fp.Records {
		f.legacy = append(f.legacy, message{Partition: rec.Partition, Offset: rec.Offset,
			Timestamp: rec.Timestamp.UnixMilli(), Key: rec.Key, Value: rec.Value})
		f.next = max(f.next, rec.Offset+1)
	}
	f.batches = nil
	return nil
}
