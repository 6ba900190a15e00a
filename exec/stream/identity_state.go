package stream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/types"
)

// decodeIdentityRow decodes n values appendKey (rowkey.go) encoded and
// returns the rest. Unlike appendStateRow's PostgreSQL binary forms, this
// encoding keeps every value's identity (a NaN's bits, a numeric's
// scale), so that operators comparing rows by identity (TopN, EOWC,
// OverWindow) find a restored row equal to the one they held. Values of
// Go forms appendKey does not know (tag 12) cannot be decoded.
func decodeIdentityRow(b []byte, n int) ([]types.Value, []byte, error) {
	row := make([]types.Value, n)
	for i := range row {
		var err error
		if row[i], b, err = decodeIdentityValue(b); err != nil {
			return nil, nil, err
		}
	}
	return row, b, nil
}

// errShortValue is decodeIdentityValue's error for a value cut short (made
// once: an error made per value was a tenth of a recovery's time).
var errShortValue = errors.New("checkpointed value: truncated")

func decodeIdentityValue(b []byte) (types.Value, []byte, error) {
	short := errShortValue
	if len(b) == 0 {
		return nil, nil, short
	}
	tag := b[0]
	b = b[1:]
	u64 := func() (uint64, bool) {
		if len(b) < 8 {
			return 0, false
		}
		x := binary.LittleEndian.Uint64(b)
		b = b[8:]
		return x, true
	}
	str := func() ([]byte, bool) {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, false
		}
		s := b[k : k+int(l)]
		b = b[k+int(l):]
		return s, true
	}
	switch tag {
	case 0:
		return nil, b, nil
	case 1:
		if len(b) < 1 {
			return nil, nil, short
		}
		return b[0] != 0, b[1:], nil
	case 2, 3, 7, 8, 9:
		x, ok := u64()
		if !ok {
			return nil, nil, short
		}
		switch tag {
		case 2:
			return int64(x), b, nil
		case 3:
			return math.Float64frombits(x), b, nil
		case 7:
			return types.DateValue(int32(x)), b, nil
		case 8:
			return types.TimeValue(int64(x)), b, nil
		}
		return types.TimestampValue(int64(x)), b, nil
	case 4, 5, 6:
		s, ok := str()
		if !ok {
			return nil, nil, short
		}
		switch tag {
		case 4:
			d, _, err := apd.NewFromString(string(s))
			if err != nil {
				return nil, nil, fmt.Errorf("checkpointed numeric: %w", err)
			}
			return d, b, nil
		case 5:
			return string(s), b, nil
		}
		return append([]byte(nil), s...), b, nil
	case 10:
		x, ok := u64()
		if !ok || len(b) < 8 {
			return nil, nil, short
		}
		v := types.IntervalValue{Micros: int64(x), Months: int32(binary.LittleEndian.Uint32(b)), Days: int32(binary.LittleEndian.Uint32(b[4:]))}
		return v, b[8:], nil
	case 11:
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, nil, short
		}
		return decodeIdentityRow(b[k:], int(l))
	}
	return nil, nil, fmt.Errorf("checkpointed value: tag %d cannot be decoded", tag)
}
