package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/twmb/franz-go/pkg/kgo"
)

// epochBatch is the encoded records of one checkpoint epoch of an
// exactly-once writer (every row written since the previous checkpoint),
// kept until the epoch is committed: they are what PreCommit returns as
// pending, and what a commit resends when the transaction that carried
// them early was lost. Owned by the writer's goroutine.
//
// chunks hold the records in the pending encoding (below), so that
// PreCommit's pending is their concatenation plus a trailer (without a
// copy when there is one chunk); records already handed to a producer
// point into the chunks, which are only ever appended to within their
// capacity.
type epochBatch struct {
	epoch  uint64
	chunks [][]byte // the records in the pending encoding, in order; a record is never split
	size   int      // bytes in chunks
	n      int      // records
	cuts   []int    // record counts where the parts end, increasing; the last is n once prepared
	cutAt  int      // size at the last cut
	starts []recPos // where each part begins in chunks (partStarts), once asked for
	z      []byte   // the chunks compressed (encodeChunks), once prepared and pending grew large; nil before
	shared bool     // chunks alias memory the writer does not own (a pending handed out or restored): never recycled

	early    int       // records produced into the early transaction: a prefix ending at a cut (earlyParts)
	noEarly  bool      // its early transaction was aborted: never start one again
	slot     *slot     // the early transaction's producer; nil when none
	earlyOn  bool      // still producing early
	flushed  bool      // the early records are all acknowledged
	openedAt time.Time // when the first row came
}

// Chunk sizes: an epoch's first chunk is sized from the last epoch's
// bytes (hint), within these bounds, and each further chunk doubles. A
// full chunk is left as it is: records already handed to a producer point
// into it, and nothing is copied as an epoch grows.
const (
	minChunk = 64 << 10
	maxChunk = 4 << 20
)

// Record encoding inside data: uvarint(len(key)+1) key uvarint(len(value)+1)
// value, where a length of 0 is nil (no key, or a tombstone).
func appendRec(dst, key, value []byte) []byte {
	dst = appendBytes(dst, key)
	return appendBytes(dst, value)
}

func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendUvarint(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(len(b))+1)
	return append(dst, b...)
}

// add appends one record and cuts a part when the bytes since the last
// cut reach maxBytes. It returns the record's key and value inside the batch's
// chunks. hint sizes the first chunk (the bytes of the last epoch); a new
// chunk comes from pool when it has one (pool may be nil).
func (b *epochBatch) add(key, value []byte, maxBytes, hint int, pool *chunkPool) (k, v []byte) {
	need := len(key) + len(value) + 2*binary.MaxVarintLen64
	last := len(b.chunks) - 1
	if last < 0 || cap(b.chunks[last])-len(b.chunks[last]) < need {
		size := min(maxChunk, hint+hint/8)
		if last >= 0 {
			size = min(maxChunk, 2*cap(b.chunks[last]))
		}
		b.chunks = append(b.chunks, pool.get(max(size, minChunk, need), need))
		last++
	}
	c := b.chunks[last]
	n0 := len(c)
	c, k = appendKept(c, key)
	c, v = appendKept(c, value)
	b.chunks[last] = c
	b.size += len(c) - n0
	b.n++
	if b.size-b.cutAt >= maxBytes {
		b.cut()
	}
	return k, v
}

// recPos is a record's place in an epochBatch's chunks.
type recPos struct{ chunk, off int }

// partStarts returns where each part begins, finding them in one pass
// over the records the first time (a resend asks for every part in turn).
func (b *epochBatch) partStarts() ([]recPos, error) {
	if len(b.starts) == len(b.cuts) {
		return b.starts, nil
	}
	b.starts = append(b.starts[:0], recPos{})
	i, next := 0, 0 // record index; the cut whose end is the next part's start
	err := b.scan(recPos{}, func(at recPos, _, _ []byte) bool {
		if next < len(b.cuts)-1 && b.cuts[next] == i {
			b.starts = append(b.starts, at)
			next++
		}
		i++
		return true
	})
	if err != nil {
		return nil, err
	}
	if len(b.starts) != len(b.cuts) {
		return nil, errPending
	}
	return b.starts, nil
}

// earlyParts is the number of parts the early transaction carries: early
// production stops only at a cut (stopEarly), so its records are whole
// parts.
func (b *epochBatch) earlyParts() int {
	return sort.SearchInts(b.cuts, b.early+1)
}

// appendKept appends x as appendBytes does and returns its copy in dst
// (dst has room: it is not moved).
func appendKept(dst, x []byte) ([]byte, []byte) {
	if x == nil {
		return append(dst, 0), nil
	}
	dst = binary.AppendUvarint(dst, uint64(len(x))+1)
	s := len(dst)
	dst = append(dst, x...)
	return dst, dst[s:len(dst):len(dst)]
}

// scan calls fn with each record of the batch from the one at from on,
// in order, with its place, until fn returns false.
func (b *epochBatch) scan(from recPos, fn func(at recPos, key, value []byte) bool) error {
	off := from.off
	for c := from.chunk; c < len(b.chunks); c, off = c+1, 0 {
		chunk := b.chunks[c]
		for off < len(chunk) {
			key, value, next, err := readRec(chunk, off)
			if err != nil {
				return err
			}
			if !fn(recPos{c, off}, key, value) {
				return nil
			}
			off = next
		}
	}
	return nil
}

// cut ends the current part after the last record (no-op when empty).
func (b *epochBatch) cut() {
	if last := len(b.cuts); (last == 0 && b.n > 0) || (last > 0 && b.cuts[last-1] < b.n) {
		b.cuts = append(b.cuts, b.n)
		b.cutAt = b.size
	}
}

// mayStartLate reports whether an early transaction may still start for
// the batch, which has none: it never had one, none was aborted, and the
// epoch is younger than limit (the rows kept so far go out first).
func (b *epochBatch) mayStartLate(limit time.Duration) bool {
	return b.slot == nil && b.early == 0 && !b.noEarly && (b.openedAt.IsZero() || time.Since(b.openedAt) < limit)
}

// stopEarly ends early production: the records produced so far end a
// part.
func (b *epochBatch) stopEarly() {
	if b.earlyOn {
		b.earlyOn = false
		b.cut()
	}
}

func (b *epochBatch) parts() int { return len(b.cuts) }

// part returns the records of part k as new kgo records (for a resend).
func (b *epochBatch) part(k int) ([]*kgo.Record, error) {
	from := 0
	if k > 0 {
		from = b.cuts[k-1]
	}
	to := b.cuts[k]
	starts, err := b.partStarts()
	if err != nil {
		return nil, err
	}
	recs := make([]*kgo.Record, 0, to-from)
	slab := make([]kgo.Record, to-from)
	now := time.Now()
	err = b.scan(starts[k], func(_ recPos, key, value []byte) bool {
		r := &slab[len(recs)]
		r.Key, r.Value, r.Timestamp = key, value, now
		recs = append(recs, r)
		return len(recs) < to-from
	})
	if err != nil {
		return nil, err
	}
	if len(recs) != to-from {
		return nil, errPending
	}
	return recs, nil
}

var errPending = errors.New("kafka sink: malformed pending data")

func readBytes(data []byte, off int) ([]byte, int, error) {
	n, w := binary.Uvarint(data[off:])
	if w <= 0 {
		return nil, 0, errPending
	}
	off += w
	if n == 0 {
		return nil, off, nil
	}
	end := off + int(n-1)
	if n-1 > uint64(len(data)) || end > len(data) {
		return nil, 0, errPending
	}
	return data[off:end:end], end, nil
}

func readRec(data []byte, off int) (key, value []byte, next int, err error) {
	if key, off, err = readBytes(data, off); err != nil {
		return
	}
	value, next, err = readBytes(data, off)
	return
}

// Pending formats. Raw: the batches' data one after the other, then a
// trailer: for each batch uvarint epoch, uvarint len(data), uvarint
// records, uvarint parts, uvarint cut...; then uvarint batches, a 4-byte
// little-endian trailer length and magicRaw. Pendings of more than
// compressAbove bytes are written compressed: each batch's chunks as
// s2 blocks (uvarint length, block), then the trailer, which for each
// batch also has uvarint compressed bytes after its cuts, ending with
// magicChunks. magicS2 (the raw format s2-compressed whole) is what
// earlier versions wrote; it is still read.
const (
	magicRaw      = "SKK1"
	magicS2       = "SKZ1"
	magicChunks   = "SKC1"
	compressAbove = 256 << 10
)

// encodePending returns the pending bytes of batches (prepared, epoch
// order). With one batch of one chunk the records are not copied unless
// compressed; a batch's compressed form is kept for the next PreCommit
// (a batch stays prepared until its epoch commits).
func encodePending(batches []*epochBatch) []byte {
	if len(batches) == 0 {
		return nil
	}
	total := 0
	for _, b := range batches {
		total += b.size
	}
	if total > compressAbove {
		return encodeChunks(batches)
	}
	var out []byte
	if len(batches) == 1 && len(batches[0].chunks) == 1 {
		// The trailer goes into the spare capacity; the chunk is capped
		// so that nothing is ever written there again (the runtime may
		// be reading this pending on another goroutine).
		b := batches[0]
		out = b.chunks[0]
		b.chunks[0] = out[:len(out):len(out)]
		b.shared = true
	} else {
		out = make([]byte, 0, total+64+40*len(batches))
		for _, b := range batches {
			for _, c := range b.chunks {
				out = append(out, c...)
			}
		}
	}
	t0 := len(out)
	for _, b := range batches {
		out = appendBatchHead(out, b)
	}
	return endTrailer(out, t0, len(batches), magicRaw)
}

// encodeChunks writes the compressed format. A batch compressed for
// an earlier PreCommit (it is still prepared) is copied; the others are
// compressed straight into the pending, and keep it as their z.
func encodeChunks(batches []*epochBatch) []byte {
	size := 64
	for _, b := range batches {
		if b.z == nil {
			size += zBound(b.chunks)
		} else {
			size += len(b.z)
		}
		size += 48 + 8*len(b.cuts)
	}
	out := make([]byte, 0, size)
	for _, b := range batches {
		if b.z == nil {
			s := len(out)
			out = appendCompressed(out, b.chunks)
			b.z = out[s:len(out):len(out)]
		} else {
			out = append(out, b.z...)
		}
	}
	t0 := len(out)
	for _, b := range batches {
		out = appendBatchHead(out, b)
		out = binary.AppendUvarint(out, uint64(len(b.z)))
	}
	return endTrailer(out, t0, len(batches), magicChunks)
}

// zBound is the most bytes appendCompressed can add for chunks.
func zBound(chunks [][]byte) int {
	n := 0
	for _, c := range chunks {
		n += binary.MaxVarintLen64 + s2.MaxEncodedLen(len(c))
	}
	return n
}

// appendCompressed appends chunks as s2 blocks, each after its uvarint
// length; z must have zBound(chunks) bytes of room. Each block is
// compressed in place after room for the longest length and moved back
// behind the length written (no buffer grows or is copied whole).
func appendCompressed(z []byte, chunks [][]byte) []byte {
	for _, c := range chunks {
		at := len(z) + binary.MaxVarintLen64
		blk := s2.Encode(z[at:at:cap(z)], c)
		z = binary.AppendUvarint(z, uint64(len(blk)))
		z = append(z, blk...) // within capacity; overlapping moves are safe
	}
	return z
}

func appendBatchHead(out []byte, b *epochBatch) []byte {
	out = binary.AppendUvarint(out, b.epoch)
	out = binary.AppendUvarint(out, uint64(b.size))
	out = binary.AppendUvarint(out, uint64(b.n))
	out = binary.AppendUvarint(out, uint64(len(b.cuts)))
	for _, c := range b.cuts {
		out = binary.AppendUvarint(out, uint64(c))
	}
	return out
}

func endTrailer(out []byte, t0, batches int, magic string) []byte {
	out = binary.AppendUvarint(out, uint64(batches))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(out)-t0))
	return append(out, magic...)
}

// decodePending reads what encodePending wrote. The batches' data alias p
// (or its decompressed copy).
func decodePending(p []byte) ([]*epochBatch, error) {
	if len(p) == 0 {
		return nil, nil
	}
	if len(p) < 8 {
		return nil, errPending
	}
	chunked := false
	switch string(p[len(p)-4:]) {
	case magicS2:
		raw, err := s2.Decode(nil, p[:len(p)-4])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errPending, err)
		}
		p = raw
		if len(p) < 8 || string(p[len(p)-4:]) != magicRaw {
			return nil, errPending
		}
	case magicChunks:
		chunked = true
	case magicRaw:
	default:
		return nil, errPending
	}
	tl := int(binary.LittleEndian.Uint32(p[len(p)-8:]))
	t0 := len(p) - 8 - tl
	if t0 < 0 {
		return nil, errPending
	}
	tr := p[t0 : len(p)-8]
	var vals []uint64
	for len(tr) > 0 {
		v, w := binary.Uvarint(tr)
		if w <= 0 {
			return nil, errPending
		}
		vals = append(vals, v)
		tr = tr[w:]
	}
	if len(vals) == 0 {
		return nil, errPending
	}
	nb := int(vals[len(vals)-1])
	vals = vals[:len(vals)-1]
	var out []*epochBatch
	off := 0
	for i := 0; i < nb; i++ {
		if len(vals) < 4 {
			return nil, errPending
		}
		b := &epochBatch{epoch: vals[0], n: int(vals[2]), shared: true}
		size, ncut := int(vals[1]), int(vals[3])
		vals = vals[4:]
		if ncut > len(vals) || size < 0 {
			return nil, errPending
		}
		for _, c := range vals[:ncut] {
			b.cuts = append(b.cuts, int(c))
		}
		vals = vals[ncut:]
		stored := size // bytes of the batch in p
		if chunked {
			if len(vals) == 0 {
				return nil, errPending
			}
			stored, vals = int(vals[0]), vals[1:]
		}
		if stored < 0 || off+stored > t0 {
			return nil, errPending
		}
		data := p[off : off+stored : off+stored]
		if chunked {
			var err error
			if data, err = decodeBlocks(data, size); err != nil {
				return nil, err
			}
		}
		if size > 0 {
			b.chunks = [][]byte{data}
		}
		b.size, b.cutAt = size, size
		off += stored
		out = append(out, b)
	}
	if len(vals) != 0 || off != t0 {
		return nil, errPending
	}
	return out, nil
}

// decodeBlocks decompresses a batch's s2 blocks (encodeChunks) into one
// buffer of size bytes.
func decodeBlocks(z []byte, size int) ([]byte, error) {
	out := make([]byte, 0, size)
	for len(z) > 0 {
		n, w := binary.Uvarint(z)
		if w <= 0 || n > uint64(len(z)-w) {
			return nil, errPending
		}
		blk := z[w : w+int(n)]
		z = z[w+int(n):]
		dl, err := s2.DecodedLen(blk)
		if err != nil || dl > cap(out)-len(out) {
			return nil, errPending
		}
		if _, err := s2.Decode(out[len(out):len(out)+dl], blk); err != nil {
			return nil, fmt.Errorf("%w: %w", errPending, err)
		}
		out = out[:len(out)+dl]
	}
	if len(out) != size {
		return nil, errPending
	}
	return out, nil
}
