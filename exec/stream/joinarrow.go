package stream

import (
	"bytes"
	"hash/maphash"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// Column-at-a-time helpers of HashJoin: gathering rows spread over several
// record batches, hashing and comparing whole rows (identity, for
// retractions) and reading join keys (SQL equality). All are pure functions
// over immutable Arrow data.

// ref locates a row: recs[seg] row row. seg < 0 stands for a NULL row (the
// missing side of an outer join).
type ref struct{ seg, row int32 }

var nullRef = ref{seg: -1}

// gather builds an array of type t whose row k is column col of
// recs[refs[k].seg] at refs[k].row (NULL for nullRef).
func gather(t types.T, recs []arrow.RecordBatch, col int, refs []ref) arrow.Array {
	dt := t.ArrowType()
	switch dt.ID() {
	case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64:
		return gatherFixed[int64](dt, recs, col, refs)
	case arrow.INT32, arrow.DATE32:
		return gatherFixed[int32](dt, recs, col, refs)
	case arrow.UINT32:
		return gatherFixed[uint32](dt, recs, col, refs)
	case arrow.INT16:
		return gatherFixed[int16](dt, recs, col, refs)
	case arrow.FLOAT64:
		return gatherFixed[float64](dt, recs, col, refs)
	case arrow.FLOAT32:
		return gatherFixed[float32](dt, recs, col, refs)
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return gatherFixed[arrow.MonthDayNanoInterval](dt, recs, col, refs)
	case arrow.STRING, arrow.BINARY:
		return gatherVar(dt, recs, col, refs)
	}
	b := types.NewBuilder(memory.DefaultAllocator, t)
	defer b.Release()
	b.Reserve(len(refs))
	for _, r := range refs {
		var v types.Value
		if r.seg >= 0 {
			v = types.ValueAt(recs[r.seg].Column(col), int(r.row), t)
		}
		// Values read from arrays of t's storage type always append.
		_ = types.AppendValue(b, v, t)
	}
	return b.NewArray()
}

// validity collects a validity bitmap, allocated at the first NULL.
type validity struct {
	bits  []byte
	nulls int
}

func (v *validity) null(k, n int) {
	if v.bits == nil {
		v.bits = make([]byte, bitutil.BytesForBits(int64(n)))
		bitutil.SetBitsTo(v.bits, 0, int64(k), true)
	}
	v.nulls++
}

func (v *validity) valid(k int) {
	if v.bits != nil {
		bitutil.SetBit(v.bits, k)
	}
}

func (v *validity) buffer() *memory.Buffer {
	if v.bits == nil {
		return nil
	}
	return memory.NewBufferBytes(v.bits)
}

// segCacheSize is how many segments gatherFixed and gatherVar keep their
// columns' buffers for (direct-mapped by segment number). Rows of
// neighbouring outputs often alternate between a few segments (a join's
// stored side at parallelism N gets its chunks from N senders whose rows
// interleave in key order): re-reading a segment's column, buffers and
// NULL count at every switch cost more than the copy itself (q9 at
// parallelism 2).
const segCacheSize = 8

// fixedSeg is one segment's column as gatherFixed reads it.
type fixedSeg[T arrow.FixedWidthType] struct {
	seg   int32 // the segment + 1 (0: empty)
	a     arrow.Array
	src   []T
	nulls bool
}

// fixedSegs caches one column of the last segments read, direct-mapped
// by segment number; the zero value is empty.
type fixedSegs[T arrow.FixedWidthType] [segCacheSize]fixedSeg[T]

// at is column col of segment seg of recs, from the cache when it holds
// it. Callers keep the last one and call at only when the segment
// changes.
func (c *fixedSegs[T]) at(recs []arrow.RecordBatch, col int, seg int32) *fixedSeg[T] {
	s := &c[seg%segCacheSize]
	if s.seg != seg+1 {
		a := recs[seg].Column(col)
		*s = fixedSeg[T]{seg: seg + 1, a: a, src: arrow.GetValues[T](a.Data(), 1), nulls: a.NullN() > 0}
	}
	return s
}

func gatherFixed[T arrow.FixedWidthType](dt arrow.DataType, recs []arrow.RecordBatch, col int, refs []ref) arrow.Array {
	n := len(refs)
	vals := make([]T, n)
	var v validity
	var cache fixedSegs[T]
	cur := &cache[0]
	for k, r := range refs {
		if r.seg < 0 {
			v.null(k, n)
			continue
		}
		if cur.seg != r.seg+1 {
			cur = cache.at(recs, col, r.seg)
		}
		if cur.nulls && cur.a.IsNull(int(r.row)) {
			v.null(k, n)
			continue
		}
		v.valid(k)
		vals[k] = cur.src[r.row]
	}
	d := array.NewData(dt, n, []*memory.Buffer{v.buffer(), memory.NewBufferBytes(arrow.GetBytes(vals))}, nil, v.nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// varArray is the part of *array.String and *array.Binary gatherVar uses.
type varArray interface {
	arrow.Array
	ValueOffsets() []int32
	ValueBytes() []byte
}

// varSeg is one segment's column as gatherVar reads it.
type varSeg struct {
	seg   int32 // the segment + 1 (0: empty)
	a     varArray
	offs  []int32
	raw   []byte
	nulls bool
}

// varSegs caches the columns of segCacheSize segments.
type varSegs [segCacheSize]varSeg

// at returns segment s's column (col of recs[s]), cached.
func (c *varSegs) at(recs []arrow.RecordBatch, col int, s int32) *varSeg {
	e := &c[s%segCacheSize]
	if e.seg != s+1 {
		a := recs[s].Column(col).(varArray)
		*e = varSeg{seg: s + 1, a: a, offs: a.ValueOffsets(), raw: a.ValueBytes(), nulls: a.NullN() > 0}
	}
	return e
}

// gatherVar gathers strings or binaries, building offsets and data directly.
func gatherVar(dt arrow.DataType, recs []arrow.RecordBatch, col int, refs []ref) arrow.Array {
	n := len(refs)
	offs := make([]int32, n+1)
	var v validity
	var cache varSegs
	cur := &cache[0]
	size := 0
	for _, r := range refs {
		if r.seg < 0 {
			continue
		}
		if cur.seg != r.seg+1 {
			cur = cache.at(recs, col, r.seg)
		}
		size += int(cur.offs[r.row+1] - cur.offs[r.row])
	}
	data := make([]byte, 0, size)
	for k, r := range refs {
		if r.seg < 0 {
			v.null(k, n)
			offs[k+1] = int32(len(data))
			continue
		}
		if cur.seg != r.seg+1 {
			cur = cache.at(recs, col, r.seg)
		}
		s := cur
		if s.nulls && s.a.IsNull(int(r.row)) {
			v.null(k, n)
			offs[k+1] = int32(len(data))
			continue
		}
		v.valid(k)
		base := s.offs[0]
		data = append(data, s.raw[s.offs[r.row]-base:s.offs[r.row+1]-base]...)
		offs[k+1] = int32(len(data))
	}
	d := array.NewData(dt, n, []*memory.Buffer{v.buffer(), memory.NewBufferBytes(arrow.GetBytes(offs)), memory.NewBufferBytes(data)}, nil, v.nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// joinSeed seeds the hashes of text keys and rows; fixed per process.
var joinSeed = maphash.MakeSeed()

func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func hashStep(h, v uint64) uint64 { return mix64(h*0x9E3779B97F4A7C15 + v) }

const nullHash = 0x6e756c6c

// rowHashes hashes every row of rec over all its columns by identity (the
// bytes stored, as retractions name rows), column by column into dst.
func rowHashes(rec arrow.RecordBatch, cols []types.Column, dst []uint64) []uint64 {
	n := int(rec.NumRows())
	if cap(dst) < n {
		dst = make([]uint64, n)
	}
	h := dst[:n]
	for i := range h {
		h[i] = 0
	}
	for c, col := range cols {
		a := rec.Column(c)
		hasNulls := a.NullN() > 0
		step := func(i int, v uint64) {
			if hasNulls && a.IsNull(i) {
				v = nullHash
			}
			h[i] = hashStep(h[i], v)
		}
		switch x := a.(type) {
		case *array.Boolean:
			for i := 0; i < n; i++ {
				v := uint64(0)
				if x.Value(i) {
					v = 1
				}
				step(i, v)
			}
		case *array.String:
			for i := 0; i < n; i++ {
				step(i, maphash.String(joinSeed, x.Value(i)))
			}
		case *array.Binary:
			for i := 0; i < n; i++ {
				step(i, maphash.Bytes(joinSeed, x.Value(i)))
			}
		default:
			fw, ok := a.DataType().(arrow.FixedWidthDataType)
			switch {
			case ok && fw.BitWidth() == 64:
				vals := arrow.GetValues[uint64](a.Data(), 1)
				if !hasNulls {
					for i, v := range vals {
						h[i] = hashStep(h[i], v)
					}
					continue
				}
				for i, v := range vals {
					step(i, v)
				}
			case ok && fw.BitWidth() == 32:
				for i, v := range arrow.GetValues[uint32](a.Data(), 1) {
					step(i, uint64(v))
				}
			case ok && fw.BitWidth() == 16:
				for i, v := range arrow.GetValues[uint16](a.Data(), 1) {
					step(i, uint64(v))
				}
			default:
				var buf []byte
				for i := 0; i < n; i++ {
					buf = appendValueKey(buf[:0], types.ValueAt(a, i, col.Type))
					step(i, maphash.Bytes(joinSeed, buf))
				}
			}
		}
	}
	return h
}

// sameRowAt reports whether row i of a and row j of b are identical.
func sameRowAt(a arrow.RecordBatch, i int, b arrow.RecordBatch, j int, cols []types.Column) bool {
	for c, col := range cols {
		if !sameValueAt(a.Column(c), i, b.Column(c), j, col.Type) {
			return false
		}
	}
	return true
}

func sameValueAt(a arrow.Array, i int, b arrow.Array, j int, t types.T) bool {
	an, bn := a.IsNull(i), b.IsNull(j)
	if an || bn {
		return an && bn
	}
	switch x := a.(type) {
	case *array.Boolean:
		return x.Value(i) == b.(*array.Boolean).Value(j)
	case *array.String:
		return x.Value(i) == b.(*array.String).Value(j)
	case *array.Binary:
		return bytes.Equal(x.Value(i), b.(*array.Binary).Value(j))
	}
	if fw, ok := a.DataType().(arrow.FixedWidthDataType); ok && fw.BitWidth()%8 == 0 {
		w := fw.BitWidth() / 8
		ab := a.Data().Buffers()[1].Bytes()[(a.Data().Offset()+i)*w:]
		bb := b.Data().Buffers()[1].Bytes()[(b.Data().Offset()+j)*w:]
		return bytes.Equal(ab[:w], bb[:w])
	}
	return string(appendValueKey(nil, types.ValueAt(a, i, t))) == string(appendValueKey(nil, types.ValueAt(b, j, t)))
}

// intClass groups the key types whose Arrow values compare as integers:
// 0 for other types. Keys of one class on both sides use the int64 fast
// path.
func intClass(t types.T) int {
	switch t.Kind {
	case types.Int2, types.Int4, types.Int8:
		return 1
	case types.Date:
		return 2
	case types.Time:
		return 3
	case types.Timestamp, types.TimestampTZ:
		return 4
	case types.Oid, types.RegClass, types.RegType, types.RegProc:
		return 5
	}
	return 0
}

// sameKeyClass reports whether keys of types a and b encode alike when
// equal (the planner casts join keys to a common type; integer widths and
// float widths may still differ).
func sameKeyClass(a, b types.T) bool {
	switch {
	case intClass(a) != 0 || intClass(b) != 0:
		return intClass(a) == intClass(b)
	case rawText(a) || rawText(b):
		return rawText(a) && rawText(b)
	case a.Kind == types.Float4 || a.Kind == types.Float8:
		return b.Kind == types.Float4 || b.Kind == types.Float8
	}
	return a.Kind == b.Kind
}

// rawText reports the types whose equality is byte equality of the stored text.
func rawText(t types.T) bool {
	switch t.Kind {
	case types.Text, types.Varchar, types.Name, types.Char, types.Unknown, types.JSONB:
		return true
	}
	return false
}

// intKeys returns a's values (an int-class array) as int64s: 64-bit
// values in place (read only), others converted into *scratch.
func intKeys(a arrow.Array, scratch *[]int64) []int64 {
	switch a.DataType().ID() {
	case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64:
		return arrow.GetValues[int64](a.Data(), 1)
	}
	n := a.Len()
	if cap(*scratch) < n {
		*scratch = make([]int64, n)
	}
	dst := (*scratch)[:n]
	switch a.DataType().ID() {
	case arrow.INT32, arrow.DATE32:
		for i, v := range arrow.GetValues[int32](a.Data(), 1) {
			dst[i] = int64(v)
		}
	case arrow.INT16:
		for i, v := range arrow.GetValues[int16](a.Data(), 1) {
			dst[i] = int64(v)
		}
	case arrow.UINT32:
		for i, v := range arrow.GetValues[uint32](a.Data(), 1) {
			dst[i] = int64(v)
		}
	}
	return dst
}
