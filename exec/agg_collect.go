package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/membudget"
)

// memSizer is an aggregate state that keeps memory in proportion to its
// input (string_agg, array_agg): memBytes is what it holds now, charged to
// the statement's memory budget by the aggregation.
type memSizer interface{ memBytes() int64 }

// arrayBytes is membudget.ArrayBytes.
func arrayBytes(a arrow.Array) int64 { return membudget.ArrayBytes(a) }

// batchBytes is membudget.BatchBytes.
func batchBytes(b arrow.RecordBatch) int64 { return membudget.BatchBytes(b) }

// stringAgg is string_agg(text, text) and string_agg(bytea, bytea): each
// value after the first is preceded by its own row's delimiter.
type stringAgg struct {
	buf   [][]byte
	has   []bool
	bytes int64 // total length of buf, for the memory budget
}

// memBytes implements memSizer.
func (s *stringAgg) memBytes() int64 { return s.bytes }

// memBytes implements memSizer: the input arrays it keeps.
func (s *arrayAgg) memBytes() int64 { return s.bytes }

func (s *stringAgg) grow(n int) { s.buf = growSlice(s.buf, n); s.has = growSlice(s.has, n) }

func bytesAt(a arrow.Array, i int) []byte {
	switch x := a.(type) {
	case *array.String:
		return []byte(x.Value(i))
	case *array.Binary:
		return x.Value(i)
	}
	return nil
}

func (s *stringAgg) update(args []arrow.Array, gids []int32) error {
	v, d := args[0], args[1]
	for i, g := range gids {
		if g < 0 || v.IsNull(i) {
			continue
		}
		before := len(s.buf[g])
		if s.has[g] && d.IsValid(i) {
			dv := bytesAt(d, i)
			if err := membudget.StringBuffer(int64(len(s.buf[g])), int64(len(dv))); err != nil {
				return err
			}
			s.buf[g] = append(s.buf[g], dv...)
		}
		vv := bytesAt(v, i)
		if err := membudget.StringBuffer(int64(len(s.buf[g])), int64(len(vv))); err != nil {
			return err
		}
		s.buf[g] = append(s.buf[g], vv...)
		s.bytes += int64(len(s.buf[g]) - before)
		s.has[g] = true
	}
	return nil
}

func (s *stringAgg) appendResult(b array.Builder, g int) error {
	if !s.has[g] {
		b.AppendNull()
	} else {
		b.(*array.StringBuilder).Append(string(s.buf[g]))
	}
	return nil
}

// binaryAgg is string_agg over bytea.
type binaryAgg struct{ stringAgg }

func (s *binaryAgg) appendResult(b array.Builder, g int) error {
	if !s.has[g] {
		b.AppendNull()
	} else {
		b.(*array.BinaryBuilder).Append(s.buf[g])
	}
	return nil
}

// arrayAgg is array_agg(any): every value, NULLs included, in input order.
// It keeps references to the input arrays and copies at result time.
type arrayAgg struct {
	arrs  []arrow.Array
	refs  [][]uint64 // per group: array index << 32 | row
	has   []bool
	bytes int64 // buffers of arrs and refs, for the memory budget
}

func (s *arrayAgg) grow(n int) { s.refs = growSlice(s.refs, n); s.has = growSlice(s.has, n) }

func (s *arrayAgg) update(args []arrow.Array, gids []int32) error {
	ai := uint64(len(s.arrs))
	s.arrs = append(s.arrs, args[0])
	s.bytes += arrayBytes(args[0]) + 8*int64(len(gids))
	for i, g := range gids {
		if g >= 0 {
			s.refs[g] = append(s.refs[g], ai<<32|uint64(i))
			s.has[g] = true
		}
	}
	return nil
}

func (s *arrayAgg) appendResult(b array.Builder, g int) error {
	if !s.has[g] {
		b.AppendNull()
		return nil
	}
	lb := b.(*array.ListBuilder)
	lb.Append(true)
	vb := lb.ValueBuilder()
	for _, r := range s.refs[g] {
		copyValue(vb, s.arrs[r>>32], int(uint32(r)))
	}
	return nil
}
