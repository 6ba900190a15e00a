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

	"github.com/streamsql/streamsql/pgerr"
)

// Format bytes: the high nibble names the connector, the low one the
// version of its layout.
const (
	DatagenV1 byte = 0x11 // row number
	NexmarkV1 byte = 0x21 // next event number
	FileV1    byte = 0x31 // byte offset, lines consumed, flags
)

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
// every format makes the count that grows as the reader goes on (a row,
// an event or a byte offset). ok is false when they are not comparable
// (different formats, malformed).
func Compare(a, b []byte) (c int, ok bool) {
	if len(a) == 0 || len(b) == 0 || a[0] != b[0] {
		return 0, false
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
