package nexmark

import (
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// strCol builds one Arrow String column: one offsets buffer and one data
// buffer for the whole batch. Both are allocated at full length and written
// by index, so the hot path stores no slice headers (no GC write barriers);
// they grow only when an estimate is exceeded.
type strCol struct {
	offs []int32 // offs[0] = 0; offs[i+1] ends value i
	data []byte  // len(data) == cap(data); data[:n] is used
	rows int     // values ended so far
	n    int     // bytes used
}

// newStrCol sizes the buffers for rows values of avgLen bytes on average and
// at most maxLen: the total of many values stays well within an eighth of
// the spread above the mean, so the data buffer almost never grows, while
// the (zeroed) buffer stays close to what is used.
func newStrCol(rows, avgLen, maxLen int) strCol {
	return strCol{offs: make([]int32, rows+1), data: make([]byte, rows*avgLen+rows/8*(maxLen-avgLen)+maxLen)}
}

func (c *strCol) grow(k int) {
	d := make([]byte, max(2*len(c.data), c.n+k))
	copy(d, c.data[:c.n])
	c.data = d
}

func (c *strCol) write(b []byte) {
	if c.n+len(b) > len(c.data) {
		c.grow(len(b))
	}
	c.n += copy(c.data[c.n:], b)
}

func (c *strCol) writeString(s string) {
	if c.n+len(s) > len(c.data) {
		c.grow(len(s))
	}
	c.n += copy(c.data[c.n:], s)
}

func (c *strCol) writeByte(b byte) {
	if c.n == len(c.data) {
		c.grow(1)
	}
	c.data[c.n] = b
	c.n++
}

func (c *strCol) writeInt(v int64) {
	var buf [20]byte
	c.write(strconv.AppendInt(buf[:0], v, 10))
}

// end closes the current value (whatever was written since the previous end).
func (c *strCol) end() {
	c.rows++
	if c.rows == len(c.offs) {
		c.offs = append(c.offs, make([]int32, len(c.offs))...)
	}
	c.offs[c.rows] = int32(c.n)
}

func (c *strCol) add(b []byte)         { c.write(b); c.end() }
func (c *strCol) addString(s string)   { c.writeString(s); c.end() }
func (c *strCol) valueLen(i int) int64 { return int64(c.offs[i+1] - c.offs[i]) }

// reset empties c, keeping its buffers.
func (c *strCol) reset() { c.rows, c.n = 0, 0 }

// array wraps c's buffers (not copied; copied when cp is set) as a String
// array.
func (c *strCol) array(cp bool) arrow.Array {
	offs, data := c.offs[:c.rows+1], c.data[:c.n]
	if cp {
		offs, data = slices.Clone(offs), slices.Clone(data)
	}
	d := array.NewData(arrow.BinaryTypes.String, c.rows, []*memory.Buffer{
		nil,
		memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offs)),
		memory.NewBufferBytes(data),
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

// int64Buf is the empty buffer of int64 column i for rows values when k
// has it, else nil (never written): lent by pool when it is not nil.
func int64Buf(pool *bufPool, k colSet, i, rows int) []int64 {
	switch {
	case !k.has(i):
		return nil
	case pool != nil:
		return pool.lend(rows)
	}
	return make([]int64, 0, rows)
}

// strColOf is newStrCol for column i when k has it, else an empty strCol
// (never written).
func strColOf(k colSet, i, rows, avgLen, maxLen int) strCol {
	if !k.has(i) {
		return strCol{}
	}
	return newStrCol(rows, avgLen, maxLen)
}

// recordBuilder collects the built columns of a batch in table order,
// copying the buffers when copy is set (scratch columns kept for the next
// step).
type recordBuilder struct {
	cols []arrow.Array
	copy bool
	pool *bufPool // when copying: the int64 columns' lender (nil: the heap)
}

func (b *recordBuilder) int64s(k colSet, i int, v []int64, ts bool) {
	if k.has(i) {
		switch {
		case b.copy && b.pool != nil:
			v = b.pool.clone(v)
		case b.copy:
			v = slices.Clone(v)
		}
		b.cols = append(b.cols, int64Array(v, ts))
	}
}

func (b *recordBuilder) strings(k colSet, i int, c *strCol) {
	if k.has(i) {
		b.cols = append(b.cols, c.array(b.copy))
	}
}

// record is the batch of rows rows (the columns' length; a projection
// of no column still counts its rows).
func (b *recordBuilder) record(schema *arrow.Schema, rows int) arrow.RecordBatch {
	rec := array.NewRecordBatch(schema, b.cols, int64(rows))
	for _, c := range b.cols {
		c.Release()
	}
	return rec
}
