package stream

import (
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// AppendChangeRows appends rows [lo, hi) of c, each as its op byte and its
// identity encoding (the Materialize's checkpoint encoding, exact for
// every type), for a view's durable changelog. cols are c's columns.
func AppendChangeRows(dst []byte, c *Chunk, lo, hi int, cols []types.Column) []byte {
	for i := lo; i < hi; i++ {
		dst = append(dst, byte(c.Op(i)))
		dst = appendKey(dst, rowValues(c.Rec, i, cols), nil)
	}
	return dst
}

// DecodeChangeRows decodes n rows AppendChangeRows encoded into a chunk of
// cols and returns the rest of b.
func DecodeChangeRows(b []byte, n int, cols []types.Column) (*Chunk, []byte, error) {
	bs := make([]array.Builder, len(cols))
	for i, c := range cols {
		bs[i] = array.NewBuilder(memory.DefaultAllocator, c.Type.ArrowType())
		defer bs[i].Release()
	}
	ops := make([]Op, n)
	allInserts := true
	for r := 0; r < n; r++ {
		if len(b) == 0 {
			return nil, nil, fmt.Errorf("changelog rows: truncated at row %d of %d", r, n)
		}
		op := Op(b[0])
		if op > UpdateAfter {
			return nil, nil, fmt.Errorf("changelog rows: bad op %d", b[0])
		}
		ops[r] = op
		allInserts = allInserts && op == Insert
		row, rest, err := decodeIdentityRow(b[1:], len(cols))
		if err != nil {
			return nil, nil, fmt.Errorf("changelog rows: %w", err)
		}
		b = rest
		for i, c := range cols {
			if err := types.AppendValue(bs[i], row[i], c.Type); err != nil {
				return nil, nil, fmt.Errorf("changelog rows: column %q: %w", c.Name, err)
			}
		}
	}
	arrs := make([]arrow.Array, len(cols))
	for i := range bs {
		arrs[i] = bs[i].NewArray()
	}
	c := &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(cols), arrs, int64(n))}
	if !allInserts {
		c.Ops = ops
	}
	return c, b, nil
}

// ChangeSet is a multiset of rows with signed counts, keyed by their
// identity encoding: the net effect of a sequence of changes. Not safe for
// concurrent use.
type ChangeSet map[string]int64

// Add folds c's rows (of cols) in: inserts and update-afters count +1,
// deletes and update-befores -1.
func (s ChangeSet) Add(c *Chunk, cols []types.Column) {
	if c == nil {
		return
	}
	var buf []byte
	for i := 0; i < c.Len(); i++ {
		buf = appendKey(buf[:0], rowValues(c.Rec, i, cols), nil)
		k := string(buf)
		if n := s[k] + c.Op(i).Sign(); n == 0 {
			delete(s, k)
		} else {
			s[k] = n
		}
	}
}

// Minus returns s - t.
func (s ChangeSet) Minus(t ChangeSet) ChangeSet {
	out := make(ChangeSet, len(s))
	for k, n := range s {
		out[k] = n
	}
	for k, n := range t {
		if m := out[k] - n; m == 0 {
			delete(out, k)
		} else {
			out[k] = m
		}
	}
	return out
}

// Chunk returns s as changes of cols: its rows with negative counts as
// deletes, first, then those with positive counts as inserts (each as
// many times as its count), in key order; nil when s is empty.
func (s ChangeSet) Chunk(cols []types.Column) (*Chunk, error) {
	if len(s) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var enc []byte
	n := 0
	for _, neg := range []bool{true, false} {
		for _, k := range keys {
			c := s[k]
			if (c < 0) != neg {
				continue
			}
			op := Insert
			if neg {
				op, c = Delete, -c
			}
			for ; c > 0; c-- {
				enc = append(append(enc, byte(op)), k...)
				n++
			}
		}
	}
	ch, _, err := DecodeChangeRows(enc, n, cols)
	return ch, err
}
