package stream

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// VNodeHasher computes the vnode of rows from their key columns: values
// equal under SQL = (GROUP BY's and a join's equality: integers of any
// width, -0 and 0, numeric 1.5 and 1.50) hash equally, NULLs all alike.
// The hash is fixed (no per-process seed): a row's vnode is the same in
// every run, so state kept per vnode can be given to other instances
// after a restart. Not safe for concurrent use (scratch buffers).
type VNodeHasher struct {
	h     []uint64
	words []int64
	buf   []byte
}

// vnodeSeed is the hash every row's key hash starts from.
const vnodeSeed = 0x243F6A8885A308D3

// VNodes sets vn[i] to the vnode of row i for the n rows of keys (of
// types ts) and returns vn (grown as needed).
func (x *VNodeHasher) VNodes(keys []arrow.Array, ts []types.T, n int, vn []uint16) []uint16 {
	x.h = growSlice(x.h[:0], n)
	h := x.h[:n]
	for i := range h {
		h[i] = vnodeSeed
	}
	for k, a := range keys {
		if wordType(ts[k]) {
			ws := wordsOf(a, &x.words)
			nulls := a.NullN() > 0
			for i := 0; i < n; i++ {
				v := uint64(ws[i])
				if nulls && a.IsNull(i) {
					v = 0x9E3779B97F4A7C15 // every NULL alike
				}
				h[i] = hashStep(h[i], v)
			}
			continue
		}
		for i := 0; i < n; i++ {
			x.buf = encodeKey(x.buf[:0], a, i, ts[k])
			h[i] = hashStep(h[i], hashBytes(x.buf))
		}
	}
	vn = growSlice(vn[:0], n)
	vn = vn[:n]
	for i, v := range h {
		vn[i] = uint16(mix64(v) % VNodes)
	}
	return vn
}

// hashBytes is a fixed (unseeded) hash of b.
func hashBytes(b []byte) uint64 {
	h := uint64(len(b))
	for len(b) >= 8 {
		h = hashStep(h, binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	var tail uint64
	for i, c := range b {
		tail |= uint64(c) << (8 * i)
	}
	return hashStep(h, tail)
}

// VNodeOwner is the instance (of n) that owns vnode v: instance k owns the
// contiguous range of vnodes v with v*n/VNodes = k.
func VNodeOwner(v uint16, n int) int { return int(v) * n / VNodes }

// Splitter routes chunks' rows among the n instances of a parallel
// operator by the vnode of their key columns (the runtime's hash
// exchange; the Coalescer gathers each instance's rows, and an update
// pair whose halves go to different instances becomes a delete there and
// an insert here, so every instance sees a well-formed changelog). Owned
// by one goroutine.
type Splitter struct {
	keys []int
	ts   []types.T
	n    int

	hasher VNodeHasher
	cols   []arrow.Array
	vn     []uint16
	owner  []int32
}

// Route returns the instance of each row of chunk c (owner, valid until
// the next call) and, when every row goes to one instance, that instance
// (only; -1 otherwise, and for an empty chunk).
func (s *Splitter) Route(c *Chunk) (owner []int32, only int) {
	rows := c.Len()
	if rows == 0 {
		return nil, -1
	}
	if cap(s.cols) < len(s.keys) {
		s.cols = make([]arrow.Array, len(s.keys))
	}
	cols := s.cols[:len(s.keys)]
	for i, k := range s.keys {
		cols[i] = c.Rec.Column(k)
	}
	s.vn = s.hasher.VNodes(cols, s.ts, rows, s.vn)
	clear(cols)
	if cap(s.owner) < rows {
		s.owner = make([]int32, rows)
	}
	owner = s.owner[:rows]
	n := int32(s.n)
	var diff int32
	first := int32(VNodeOwner(s.vn[0], s.n))
	for i, v := range s.vn {
		o := int32(v) * n / VNodes // VNodeOwner
		owner[i] = o
		diff |= o ^ first
	}
	if diff == 0 {
		return owner, int(first)
	}
	return owner, -1
}

// NewSplitter returns a Splitter routing by columns keys (of types ts)
// among n instances.
func NewSplitter(keys []int, ts []types.T, n int) *Splitter {
	return &Splitter{keys: keys, ts: ts, n: n}
}
