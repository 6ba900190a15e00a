package nexmark

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// strCol builds one Arrow String column: one offsets buffer and one data
// buffer for the whole batch.
type strCol struct {
	offs []int32
	data []byte
}

// newStrCol sizes the buffers for rows values of avgLen bytes on average and
// at most maxLen: the total of many values stays well within an eighth of
// the spread above the mean, so appends almost never reallocate, while the
// (zeroed) data buffer stays close to what is used.
func newStrCol(rows, avgLen, maxLen int) strCol {
	return strCol{offs: make([]int32, 1, rows+1), data: make([]byte, 0, rows*avgLen+rows/8*(maxLen-avgLen)+maxLen)}
}

// end closes the current value (whatever was appended to data since the
// previous end).
func (c *strCol) end() { c.offs = append(c.offs, int32(len(c.data))) }

func (c *strCol) add(b []byte) {
	c.data = append(c.data, b...)
	c.offs = append(c.offs, int32(len(c.data)))
}

func (c *strCol) addString(s string) {
	c.data = append(c.data, s...)
	c.offs = append(c.offs, int32(len(c.data)))
}

func (c *strCol) array() arrow.Array {
	n := len(c.offs) - 1
	d := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{
		nil,
		memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(c.offs)),
		memory.NewBufferBytes(c.data),
	}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

var tsType = &arrow.TimestampType{Unit: arrow.Microsecond}

// int64Array wraps v (not copied) as an Int64 array, or as a Timestamp(µs)
// array when ts is set.
func int64Array(v []int64, ts bool) arrow.Array {
	var t arrow.DataType = arrow.PrimitiveTypes.Int64
	if ts {
		t = tsType
	}
	d := array.NewData(t, len(v), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(v))}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

func record(schema *arrow.Schema, rows int, cols ...arrow.Array) arrow.RecordBatch {
	rec := array.NewRecordBatch(schema, cols, int64(rows))
	for _, c := range cols {
		c.Release()
	}
	return rec
}
