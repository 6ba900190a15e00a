package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
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
// data holds the records in the pending encoding (below), so that
// PreCommit's pending is data plus a trailer, usually without a copy;
// records already handed to a producer point into data, which is only
// ever appended to.
type epochBatch struct {
	epoch uint64
	data  []byte
	n     int   // records
	cuts  []int // record counts where the parts end, increasing; the last is n once prepared
	cutAt int   // len(data) at the last cut

	early    int       // records produced into the early transaction (a prefix; part 0 when > 0)
	slot     *slot     // the early transaction's producer; nil when none
	earlyOn  bool      // still producing early
	flushed  bool      // the early records are all acknowledged
	openedAt time.Time // when the first row came
}

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
// cut reach max. It returns the record's key and value inside data.
func (b *epochBatch) add(key, value []byte, max int) (k, v []byte) {
	b.data, k = appendKept(b.data, key)
	b.data, v = appendKept(b.data, value)
	b.n++
	if !b.earlyOn && len(b.data)-b.cutAt >= max {
		b.cut()
	}
	return k, v
}

// appendKept appends x as appendBytes does and returns its copy in dst
// (which a later append may move: the copy stays valid where it is).
func appendKept(dst, x []byte) ([]byte, []byte) {
	if x == nil {
		return append(dst, 0), nil
	}
	dst = binary.AppendUvarint(dst, uint64(len(x))+1)
	s := len(dst)
	dst = append(dst, x...)
	return dst, dst[s:len(dst):len(dst)]
}

// cut ends the current part after the last record (no-op when empty).
func (b *epochBatch) cut() {
	if last := len(b.cuts); (last == 0 && b.n > 0) || (last > 0 && b.cuts[last-1] < b.n) {
		b.cuts = append(b.cuts, b.n)
		b.cutAt = len(b.data)
	}
}

// stopEarly ends early production: the records produced so far are part 0.
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
	recs := make([]*kgo.Record, 0, to-from)
	slab := make([]kgo.Record, to-from)
	now := time.Now()
	off := 0
	for i := 0; i < to; i++ {
		key, value, next, err := readRec(b.data, off)
		if err != nil {
			return nil, err
		}
		off = next
		if i >= from {
			r := &slab[i-from]
			r.Key, r.Value, r.Timestamp = key, value, now
			recs = append(recs, r)
		}
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

// Pending format: the batches' data one after the other, then a trailer:
// for each batch uvarint epoch, uvarint len(data), uvarint records,
// uvarint parts, uvarint cut...; then uvarint batches, a 4-byte
// little-endian trailer length and the magic. A pending of more than
// compressAbove bytes is s2-compressed whole and ends with magicS2.
const (
	magicRaw      = "SKK1"
	magicS2       = "SKZ1"
	compressAbove = 256 << 10
)

// encodePending returns the pending bytes of batches (prepared, epoch
// order). With one batch the records are not copied unless compressed.
func encodePending(batches []*epochBatch) []byte {
	if len(batches) == 0 {
		return nil
	}
	var out []byte
	if len(batches) == 1 {
		// The trailer goes into the spare capacity; the batch's data is
		// capped so that nothing is ever written there again (the
		// runtime may be reading this pending on another goroutine).
		b := batches[0]
		out = b.data
		b.data = b.data[:len(b.data):len(b.data)]
	} else {
		for _, b := range batches {
			out = append(out, b.data...)
		}
	}
	t0 := len(out)
	for _, b := range batches {
		out = binary.AppendUvarint(out, b.epoch)
		out = binary.AppendUvarint(out, uint64(len(b.data)))
		out = binary.AppendUvarint(out, uint64(b.n))
		out = binary.AppendUvarint(out, uint64(len(b.cuts)))
		for _, c := range b.cuts {
			out = binary.AppendUvarint(out, uint64(c))
		}
	}
	out = binary.AppendUvarint(out, uint64(len(batches)))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(out)-t0))
	out = append(out, magicRaw...)
	if len(out) > compressAbove {
		z := s2.Encode(nil, out)
		if len(z)+len(magicS2) < len(out) {
			return append(z, magicS2...)
		}
	}
	return out
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
	switch string(p[len(p)-4:]) {
	case magicS2:
		raw, err := s2.Decode(nil, p[:len(p)-4])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errPending, err)
		}
		p = raw
	case magicRaw:
	default:
		return nil, errPending
	}
	if len(p) < 8 || string(p[len(p)-4:]) != magicRaw {
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
		b := &epochBatch{epoch: vals[0], n: int(vals[2])}
		size, ncut := int(vals[1]), int(vals[3])
		vals = vals[4:]
		if ncut > len(vals) || size < 0 || off+size > t0 {
			return nil, errPending
		}
		for _, c := range vals[:ncut] {
			b.cuts = append(b.cuts, int(c))
		}
		vals = vals[ncut:]
		b.data = p[off : off+size : off+size]
		b.cutAt = size
		off += size
		out = append(out, b)
	}
	if len(vals) != 0 || off != t0 {
		return nil, errPending
	}
	return out, nil
}
