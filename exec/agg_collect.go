package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// stringAgg is string_agg(text, text) and string_agg(bytea, bytea): each
// value after the first is preceded by its own row's delimiter.
type stringAgg struct {
	buf [][]byte
	has []bool
}

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
		if s.has[g] && d.IsValid(i) {
			s.buf[g] = append(s.buf[g], bytesAt(d, i)...)
		}
		s.buf[g] = append(s.buf[g], bytesAt(v, i)...)
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
	arrs []arrow.Array
	refs [][]uint64 // per group: array index << 32 | row
	has  []bool
}

func (s *arrayAgg) grow(n int) { s.refs = growSlice(s.refs, n); s.has = growSlice(s.has, n) }

func (s *arrayAgg) update(args []arrow.Array, gids []int32) error {
	ai := uint64(len(s.arrs))
	s.arrs = append(s.arrs, args[0])
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
