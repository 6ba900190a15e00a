// Package position encodes the positions source readers report for
// checkpoints (connector.Positioner): a format byte that names the
// connector and the version of its layout, then unsigned varints. The
// format byte lets a layout change later and makes a position of one
// connector fail clearly when handed to another.
//
// Functions are pure and safe for concurrent use.
package position

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/streamsql/streamsql/pgerr"
)

// Format bytes: the high nibble names the connector, the low one the
// version of its layout.
const (
	DatagenV1 byte = 0x11 // row number
	NexmarkV1 byte = 0x21 // next event number
	// NexmarkV2: a split reader's next event number, then the blocks in
	// each of the groups the split readers are dealt.
	NexmarkV2 byte = 0x22
	FileV1    byte = 0x31 // byte offset, lines consumed, flags
	// KafkaV1: the number of partitions, then (partition, next offset) for
	// each, by partition (EncodeOffsets).
	KafkaV1 byte = 0x41
	// PgCDCV1: the PostgreSQL LSN (of the end of the last transaction
	// applied, or the slot's consistent point while the initial snapshot
	// is being copied), then the phase (0 snapshot, 1 streaming).
	PgCDCV1 byte = 0x51
)

// EncodeOffsets encodes per-partition next offsets (KafkaV1), by partition.
func EncodeOffsets(next map[int32]int64) []byte {
	ps := make([]int32, 0, len(next))
	for p := range next {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	vals := make([]uint64, 0, 1+2*len(ps))
	vals = append(vals, uint64(len(ps)))
	for _, p := range ps {
		vals = append(vals, uint64(p), uint64(next[p]))
	}
	return Encode(KafkaV1, vals...)
}

// DecodeOffsets decodes a KafkaV1 position (XX001 when malformed).
func DecodeOffsets(pos []byte) (map[int32]int64, error) {
	bad := func(why string) error {
		return pgerr.New(pgerr.DataCorrupted, "invalid kafka reader position %x: %s", pos, why).
			WithHint("A position must come from a reader of the same source.")
	}
	if len(pos) == 0 || pos[0] != KafkaV1 {
		return nil, bad("unknown format")
	}
	rest := pos[1:]
	next := func() (uint64, bool) {
		v, k := binary.Uvarint(rest)
		if k <= 0 {
			return 0, false
		}
		rest = rest[k:]
		return v, true
	}
	n, ok := next()
	if !ok || n > uint64(len(rest)) {
		return nil, bad("truncated")
	}
	m := make(map[int32]int64, n)
	for range n {
		p, ok1 := next()
		o, ok2 := next()
		if !ok1 || !ok2 {
			return nil, bad("truncated")
		}
		if p > math.MaxInt32 || o > math.MaxInt64 {
			return nil, bad("out of range")
		}
		if _, dup := m[int32(p)]; dup {
			return nil, bad("a partition twice")
		}
		m[int32(p)] = int64(o)
	}
	if len(rest) != 0 {
		return nil, bad("trailing bytes")
	}
	return m, nil
}

// compareOffsets orders two KafkaV1 positions partition by partition (a
// partition missing from one counts as offset 0 there): -1 when a is
// behind or equal everywhere and behind somewhere, 1 the other way; not
// ok when each is ahead somewhere (or one is malformed).
func compareOffsets(a, b []byte) (int, bool) {
	x, err1 := DecodeOffsets(a)
	y, err2 := DecodeOffsets(b)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	less, more := false, false
	for p, o := range x {
		less = less || o < y[p]
		more = more || o > y[p]
	}
	for p, o := range y {
		if _, ok := x[p]; !ok {
			less = less || o > 0
		}
	}
	switch {
	case less && more:
		return 0, false
	case less:
		return -1, true
	case more:
		return 1, true
	}
	return 0, true
}

// Encode returns format followed by vals as unsigned varints.
func Encode(format byte, vals ...uint64) []byte {
	b := make([]byte, 1, 1+len(vals)*binary.MaxVarintLen64)
	b[0] = format
	for _, v := range vals {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

// Decode returns the n values of pos, which must have been encoded with
// format and n values; otherwise it returns an XX001 (data corrupted)
// error naming what (the connector) and showing pos.
func Decode(pos []byte, format byte, n int, what string) ([]uint64, error) {
	bad := func(why string) error {
		return pgerr.New(pgerr.DataCorrupted, "invalid %s reader position %x: %s", what, pos, why).
			WithHint("A position must come from a reader of the same source.")
	}
	if len(pos) == 0 {
		return nil, bad("empty")
	}
	if pos[0] != format {
		return nil, bad("unknown format")
	}
	vals := make([]uint64, n)
	rest := pos[1:]
	for i := range vals {
		v, k := binary.Uvarint(rest)
		if k <= 0 {
			return nil, bad("truncated")
		}
		vals[i], rest = v, rest[k:]
	}
	if len(rest) != 0 {
		return nil, bad("trailing bytes")
	}
	return vals, nil
}

// Compare orders two positions of one reader: by their first value, which
// every format but KafkaV1 makes the count that grows as the reader goes on
// (a row, an event or a byte offset); KafkaV1 partition by partition. ok is
// false when they are not comparable (different formats, malformed, or
// Kafka positions each ahead in some partition).
func Compare(a, b []byte) (c int, ok bool) {
	if len(a) == 0 || len(b) == 0 || a[0] != b[0] {
		return 0, false
	}
	if a[0] == KafkaV1 {
		return compareOffsets(a, b)
	}
	x, k := binary.Uvarint(a[1:])
	y, m := binary.Uvarint(b[1:])
	if k <= 0 || m <= 0 {
		return 0, false
	}
	switch {
	case x < y:
		return -1, true
	case x > y:
		return 1, true
	}
	return 0, true
}

// Reached reports whether a reader at a has read at least as far as b
// (both from readers of one source): every partition of a KafkaV1 position
// at or past b's, else Compare >= 0. Positions that cannot be compared at
// all (different formats, malformed) count as reached, so that nobody
// waits for them forever.
func Reached(a, b []byte) bool {
	if len(a) > 0 && len(b) > 0 && a[0] == KafkaV1 && b[0] == KafkaV1 {
		x, err1 := DecodeOffsets(a)
		y, err2 := DecodeOffsets(b)
		if err1 != nil || err2 != nil {
			return true
		}
		for p, o := range y {
			if x[p] < o {
				return false
			}
		}
		return true
	}
	c, ok := Compare(a, b)
	return !ok || c >= 0
}
