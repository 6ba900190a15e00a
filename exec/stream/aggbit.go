package stream

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// bit_and, bit_or and bit_xor over smallint, integer and bigint. bit_xor is
// its own inverse: each group keeps the xor of its values. bit_and and
// bit_or keep their running value over an append-only input, and over one
// that may retract, for each of the type's bits, how many of the group's
// values have it set (bit_or: the bits some value has; bit_and: the bits
// every value has). Each group also counts its values: NULL over none.

// bitCol is one bit aggregate. Owned by its operator's goroutine.
type bitCol struct {
	op    byte // '&', '|' or '^'
	width int  // the type's bits: 16, 32 or 64
	n     []int64
	v     []uint64 // xor, or the running and/or (append-only)
	cnt   []int64  // and/or over an input that may retract: width counts per group
	keep  bool
	buf   []int64 // scratch: the words of a chunk's narrower integers
}

func newBitCol(op byte, t types.T, appendOnly bool) *bitCol {
	w := 64
	switch t.Kind {
	case types.Int2:
		w = 16
	case types.Int4:
		w = 32
	}
	return &bitCol{op: op, width: w, keep: op != '^' && !appendOnly}
}

func (c *bitCol) grow(n int) {
	c.n, c.v = growSlice(c.n, n), growSlice(c.v, n)
	if c.keep {
		c.cnt = growSlice(c.cnt, n*c.width)
	}
}

func (c *bitCol) reset(g int32) {
	c.n[g], c.v[g] = 0, 0
	if c.keep {
		clear(c.cnt[int(g)*c.width : int(g+1)*c.width])
	}
}

func (c *bitCol) update(arg arrow.Array, gids []int32, signs []int64) error {
	vals := wordsOf(arg, &c.buf)
	if vals == nil && arg.Len() > 0 {
		return pgerr.Internal("stream: bit aggregate over %s", arg.DataType())
	}
	nulls := arg.NullN() > 0
	for i, g := range gids {
		if g < 0 || (nulls && arg.IsNull(i)) {
			continue
		}
		v, sign := uint64(vals[i]), sgn(signs, i)
		c.n[g] += sign
		switch {
		case c.op == '^':
			if sign%2 != 0 {
				c.v[g] ^= v
			}
		case c.keep:
			cnt := c.cnt[int(g)*c.width : int(g+1)*c.width]
			for b := range cnt {
				if v>>b&1 != 0 {
					cnt[b] += sign
				}
			}
		case sign < 0:
			return pgerr.Internal("stream: bit aggregate over an append-only input got a retraction")
		default:
			c.fold(g, v, c.n[g] == sign) // first: the group's first values
		}
		if c.n[g] == 0 {
			c.v[g] = 0
		}
	}
	return nil
}

// fold combines v into group g's running value (first: it is the value).
func (c *bitCol) fold(g int32, v uint64, first bool) {
	switch {
	case first:
		c.v[g] = v
	case c.op == '&':
		c.v[g] &= v
	case c.op == '|':
		c.v[g] |= v
	default:
		c.v[g] ^= v
	}
}

// value is group g's result bits (n > 0).
func (c *bitCol) value(g int32) uint64 {
	if !c.keep {
		return c.v[g]
	}
	var v uint64
	for b, k := range c.cnt[int(g)*c.width : int(g+1)*c.width] {
		if (c.op == '|' && k > 0) || (c.op == '&' && k == c.n[g]) {
			v |= 1 << b
		}
	}
	return v
}

func (c *bitCol) results(gs []int32, out []cell) error {
	for i, g := range gs {
		if c.n[g] == 0 {
			out[i] = nullCell
			continue
		}
		shift := 64 - c.width // sign-extend from the type's width
		out[i] = intCell(int64(c.value(g)<<shift) >> shift)
	}
	return nil
}

// merge combines the values of other groups (window panes, sessions).
func (c *bitCol) merge(dst []int32, from aggCol, src []int32) error {
	f, ok := from.(*bitCol)
	if !ok || c.keep {
		return errMergeInto
	}
	for i, d := range dst {
		s := src[i]
		if f.n[s] == 0 {
			continue
		}
		c.fold(d, f.value(s), c.n[d] == 0)
		c.n[d] += f.n[s]
	}
	return nil
}

// appendState: the count and the value, then the bit counts if kept.
func (c *bitCol) appendState(dst []byte, g int32) []byte {
	dst = appendVarints(dst, c.n[g])
	dst = binary.AppendUvarint(dst, c.v[g])
	if c.keep {
		dst = appendVarints(dst, c.cnt[int(g)*c.width:int(g+1)*c.width]...)
	}
	return dst
}

func (c *bitCol) loadState(g int32, b []byte) ([]byte, error) {
	b, err := getVarints(b, &c.n[g])
	if err != nil {
		return nil, err
	}
	if c.v[g], b, err = getUvarint(b); err != nil || !c.keep {
		return b, err
	}
	cnt := c.cnt[int(g)*c.width : int(g+1)*c.width]
	ptrs := make([]*int64, len(cnt))
	for i := range cnt {
		ptrs[i] = &cnt[i]
	}
	return getVarints(b, ptrs...)
}
