package storage

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The column codec: a compact binary form of Arrow arrays for the log.
//
// Every field starts at a multiple of 8 bytes from the start of the record
// payload, so that decoding can point Arrow buffers straight into the payload
// (which is read into its own, 8-aligned allocation) without copying.
//
// An array of n rows (n is known from the enclosing record) is:
//
//	u64 null count; if > 0: validity bitmap, ceil(n/8) bytes (padded to 8)
//	then by layout:
//	  fixed width:        n*width bytes (padded)
//	  boolean:            ceil(n/8) bytes of bits (padded)
//	  string / binary:    (n+1) int32 offsets starting at 0 (padded), data bytes (padded)
//	  list:               (n+1) int32 offsets starting at 0 (padded), then the child array
//	                      of offsets[n] rows, recursively
//	  struct:             each field's array of n rows, recursively
//	  null:               nothing
//
// Bitmaps and offsets are re-based to start at row 0, so sliced arrays encode
// like fresh ones.

// errCorrupt reports a record that passed its checksum but does not decode:
// a bug or a file written by something else.
var errCorrupt = errors.New("storage: corrupt log record")

// encoder appends 8-aligned fields to a byte slice.
type encoder struct {
	buf []byte
}

func (e *encoder) pad() {
	for len(e.buf)%8 != 0 {
		e.buf = append(e.buf, 0)
	}
}

func (e *encoder) u64(v uint64) {
	e.buf = binary.LittleEndian.AppendUint64(e.buf, v)
}

// bytes appends b and pads to 8.
func (e *encoder) bytes(b []byte) {
	e.buf = append(e.buf, b...)
	e.pad()
}

// bitmap appends n bits of src starting at bit off, re-based to bit 0.
func (e *encoder) bitmap(src []byte, off, n int) {
	nb := int(bitutil.BytesForBits(int64(n)))
	start := len(e.buf)
	e.buf = append(e.buf, make([]byte, nb)...)
	if off%8 == 0 {
		copy(e.buf[start:], src[off/8:off/8+nb])
		if r := n % 8; r != 0 { // clear bits past n in the last byte
			e.buf[start+nb-1] &= byte(1<<r) - 1
		}
	} else {
		bitutil.CopyBitmap(src, off, n, e.buf[start:], 0)
	}
	e.pad()
}

// bufBytes returns buffer i's bytes, nil when it is absent (an empty array,
// such as the values of a list column whose rows are all NULL, may have
// no buffers).
func bufBytes(bufs []*memory.Buffer, i int) []byte {
	if i >= len(bufs) || bufs[i] == nil {
		return nil
	}
	return bufs[i].Bytes()
}

// encodeArray appends a's rows to e.
func encodeArray(e *encoder, a arrow.Array) error {
	n := a.Len()
	d := a.Data()
	off := d.Offset()
	bufs := d.Buffers()
	if a.DataType().ID() == arrow.NULL {
		e.u64(uint64(n))
		return nil
	}
	nulls := a.NullN()
	e.u64(uint64(nulls))
	if nulls > 0 {
		e.bitmap(bufs[0].Bytes(), off, n)
	}
	switch dt := a.DataType().(type) {
	case *arrow.BooleanType:
		e.bitmap(bufBytes(bufs, 1), off, n)
	case arrow.FixedWidthDataType:
		w := dt.BitWidth() / 8
		e.bytes(bufBytes(bufs, 1)[off*w : (off+n)*w])
	case *arrow.StringType, *arrow.BinaryType:
		offs := rawOffsets(a)
		encodeOffsets(e, offs)
		var data []byte
		if len(bufs) > 2 && bufs[2] != nil {
			data = bufs[2].Bytes()
		}
		e.bytes(data[offs[0]:offs[n]])
	case *arrow.ListType:
		offs := rawOffsets(a)
		encodeOffsets(e, offs)
		child := a.(*array.List).ListValues()
		sub := array.NewSlice(child, int64(offs[0]), int64(offs[n]))
		defer sub.Release()
		return encodeArray(e, sub)
	case *arrow.StructType: // a composite type's value: each field's n rows in turn
		s := a.(*array.Struct) // its fields are already sliced to the struct's rows
		for j := 0; j < s.NumField(); j++ {
			if err := encodeArray(e, s.Field(j)); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("storage: cannot encode arrow type %s", dt)
	}
	return nil
}

// rawOffsets returns the n+1 int32 offsets of a string, binary or list array
// of n rows (not re-based).
func rawOffsets(a arrow.Array) []int32 {
	d := a.Data()
	n := a.Len()
	if n == 0 || len(d.Buffers()) < 2 || d.Buffers()[1] == nil {
		return []int32{0}
	}
	return arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())[d.Offset() : d.Offset()+n+1]
}

func encodeOffsets(e *encoder, offs []int32) {
	base := offs[0]
	for _, o := range offs {
		e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(o-base))
	}
	e.pad()
}

// decoder reads fields written by encoder; every method checks bounds and
// records the first error instead of panicking.
type decoder struct {
	buf []byte
	pos int
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errCorrupt
	}
}

func (d *decoder) u64() uint64 {
	if d.err != nil || d.pos+8 > len(d.buf) {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(d.buf[d.pos:])
	d.pos += 8
	return v
}

// count reads a u64 that must fit in an int no larger than limit.
func (d *decoder) count(limit int) int {
	v := d.u64()
	if v > uint64(limit) {
		d.fail()
		return 0
	}
	return int(v)
}

// bytes returns the next n bytes (a view into the payload) and skips padding.
func (d *decoder) bytes(n int) []byte {
	padded := (n + 7) &^ 7
	if d.err != nil || n < 0 || d.pos+padded > len(d.buf) {
		d.fail()
		return nil
	}
	b := d.buf[d.pos : d.pos+n : d.pos+n]
	d.pos += padded
	return b
}

// decodeArray reads n rows of type dt.
func decodeArray(d *decoder, dt arrow.DataType, n int) arrow.Array {
	data := decodeData(d, dt, n)
	if d.err != nil {
		return nil
	}
	defer data.Release()
	return array.MakeFromData(data)
}

func decodeData(d *decoder, dt arrow.DataType, n int) arrow.ArrayData {
	nb := int(bitutil.BytesForBits(int64(n)))
	if dt.ID() == arrow.NULL {
		if d.count(n) != n {
			d.fail()
		}
		return array.NewData(dt, n, []*memory.Buffer{nil}, nil, n, 0)
	}
	nulls := d.count(n)
	var validity *memory.Buffer
	if nulls > 0 {
		validity = memory.NewBufferBytes(d.bytes(nb))
	}
	switch dt := dt.(type) {
	case *arrow.BooleanType:
		vals := d.bytes(nb)
		return array.NewData(dt, n, []*memory.Buffer{validity, memory.NewBufferBytes(vals)}, nil, nulls, 0)
	case arrow.FixedWidthDataType:
		vals := d.bytes(n * (dt.BitWidth() / 8))
		return array.NewData(dt, n, []*memory.Buffer{validity, memory.NewBufferBytes(vals)}, nil, nulls, 0)
	case *arrow.StringType, *arrow.BinaryType:
		offBytes, end := decodeOffsets(d, n)
		vals := d.bytes(end)
		return array.NewData(dt, n, []*memory.Buffer{validity, memory.NewBufferBytes(offBytes), memory.NewBufferBytes(vals)}, nil, nulls, 0)
	case *arrow.ListType:
		offBytes, end := decodeOffsets(d, n)
		child := decodeData(d, dt.Elem(), end)
		if d.err != nil {
			return nil
		}
		defer child.Release()
		return array.NewData(dt, n, []*memory.Buffer{validity, memory.NewBufferBytes(offBytes)}, []arrow.ArrayData{child}, nulls, 0)
	case *arrow.StructType:
		children := make([]arrow.ArrayData, dt.NumFields())
		for j := range children {
			if children[j] = decodeData(d, dt.Field(j).Type, n); d.err != nil {
				for _, c := range children[:j] {
					c.Release()
				}
				return nil
			}
		}
		out := array.NewData(dt, n, []*memory.Buffer{validity}, children, nulls, 0)
		for _, c := range children {
			c.Release()
		}
		return out
	default:
		d.err = fmt.Errorf("storage: cannot decode arrow type %s", dt)
		return nil
	}
}

// decodeOffsets reads n+1 offsets, checks that they start at 0 and never
// decrease, and returns their bytes and the last offset.
func decodeOffsets(d *decoder, n int) ([]byte, int) {
	b := d.bytes(4 * (n + 1))
	if d.err != nil {
		return nil, 0
	}
	offs := arrow.Int32Traits.CastFromBytes(b)
	if offs[0] != 0 {
		d.fail()
		return nil, 0
	}
	for i := 1; i <= n; i++ {
		if offs[i] < offs[i-1] {
			d.fail()
			return nil, 0
		}
	}
	return b, int(offs[n])
}
