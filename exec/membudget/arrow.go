package membudget

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// ArrayBytes is the length of an array's values: for a slice of a larger
// array (a table scan's batch, a slice of a sorted run) only the rows it
// covers, so that many slices of one buffer are not counted many times;
// nested types count their buffers whole. Measured, not estimated.
func ArrayBytes(a arrow.Array) int64 {
	if a == nil {
		return 0
	}
	n := int64(a.Len())
	bitmap := (n + 7) / 8
	switch x := a.(type) {
	case *array.String:
		if n == 0 {
			return 0
		}
		return bitmap + 4*(n+1) + int64(x.ValueOffset(int(n)-1)+len(x.Value(int(n)-1))-x.ValueOffset(0))
	case *array.Binary:
		if n == 0 {
			return 0
		}
		return bitmap + 4*(n+1) + int64(x.ValueOffset(int(n)-1)+len(x.Value(int(n)-1))-x.ValueOffset(0))
	}
	if fw, ok := a.DataType().(arrow.FixedWidthDataType); ok {
		return bitmap + (n*int64(fw.BitWidth())+7)/8
	}
	return dataBytes(a.Data())
}

func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	return n
}

// BatchBytes is the length of a batch's buffers.
func BatchBytes(b arrow.RecordBatch) int64 {
	if b == nil {
		return 0
	}
	var n int64
	for _, c := range b.Columns() {
		n += ArrayBytes(c)
	}
	return n
}
