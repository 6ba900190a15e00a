package membudget

import "github.com/apache/arrow-go/v18/arrow"

// ArrayBytes is the length of an array's buffers, children included (a
// slice counts its whole buffers: an upper bound of what keeping it
// retains). Measured, not estimated.
func ArrayBytes(a arrow.Array) int64 {
	if a == nil {
		return 0
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
