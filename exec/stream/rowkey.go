package stream

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/types"
)

// rowValues reads row i of rec as Values (types.ValueAt), one per column.
func rowValues(rec arrow.RecordBatch, i int, cols []types.Column) []types.Value {
	row := make([]types.Value, len(cols))
	for c := range cols {
		row[c] = types.ValueAt(rec.Column(c), i, cols[c].Type)
	}
	return row
}

// appendKey appends a self-delimiting encoding of row[idx...] (of every
// column when idx is nil). The encoding is identity, not SQL equality:
// numeric 1.0 and 1.00, or -0 and 0, encode differently, because a
// retraction must name exactly the row it removes.
func appendKey(dst []byte, row []types.Value, idx []int) []byte {
	if idx == nil {
		for _, v := range row {
			dst = appendValueKey(dst, v)
		}
		return dst
	}
	for _, c := range idx {
		dst = appendValueKey(dst, row[c])
	}
	return dst
}

// appendValueKey appends a tag byte and v's bytes. Tags keep values of
// different Go forms apart; lengths make variable-size values
// self-delimiting.
func appendValueKey(dst []byte, v types.Value) []byte {
	u64 := func(tag byte, x uint64) []byte {
		return binary.LittleEndian.AppendUint64(append(dst, tag), x)
	}
	str := func(tag byte, s []byte) []byte {
		dst = binary.AppendUvarint(append(dst, tag), uint64(len(s)))
		return append(dst, s...)
	}
	switch x := v.(type) {
	case nil:
		return append(dst, 0)
	case bool:
		if x {
			return append(dst, 1, 1)
		}
		return append(dst, 1, 0)
	case int64:
		return u64(2, uint64(x))
	case float64:
		return u64(3, math.Float64bits(x))
	case *apd.Decimal:
		return str(4, []byte(x.String()))
	case string:
		return str(5, []byte(x))
	case []byte:
		return str(6, x)
	case types.DateValue:
		return u64(7, uint64(x))
	case types.TimeValue:
		return u64(8, uint64(x))
	case types.TimestampValue:
		return u64(9, uint64(x))
	case types.IntervalValue:
		dst = u64(10, uint64(x.Micros))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(x.Months))
		return binary.LittleEndian.AppendUint32(dst, uint32(x.Days))
	case []types.Value:
		dst = binary.AppendUvarint(append(dst, 11), uint64(len(x)))
		for _, e := range x {
			dst = appendValueKey(dst, e)
		}
		return dst
	}
	return str(12, []byte(fmt.Sprintf("%T:%v", v, v)))
}
