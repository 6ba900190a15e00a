package stream

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// Rescaling by restart (docs/contributing/parallel.md, "Checkpoints"). A
// keyed operator's state is a set of per-key entries, and every key lives
// in one vnode (VNodeHasher over the operator's routing keys, the columns
// its Parallel routes by). When a job restarts with another parallelism,
// instance k of the new N restores from the states of every instance of
// the old parallelism, keeping the entries of the vnodes it owns now
// (VNodeOwner(v, N) == k): the runtime hands its Restore a *RescaledState
// instead of its own instance's state.
//
// An operator whose state can be redistributed this way marks its plan
// node with Rescalable; for the others the runtime rebuilds the job from
// its inputs instead, saying which operator prevented the rescale.

// Rescalable is implemented by plan nodes of keyed operators whose
// Stateful accepts a *RescaledState in Restore.
type Rescalable interface {
	Node
	rescales()
}

// RescaledState is what a keyed operator's instance restores from after a
// change of parallelism: the states of the old instances (Parts, in
// instance order; a nil part holds nothing) and the vnodes this instance
// owns now. Its Range and Len walk every part (an operator that does not
// understand it must not be given one: see Rescalable). Read-only, used by
// the one instance it was made for.
type RescaledState struct {
	Parts []StateReader
	// Keys are the columns of the operator's inputs that route a row
	// (Parallel.Keys: per input of the operator).
	Keys [][]int
	N, K int // the new parallelism and this instance (0 <= K < N)
}

// Own reports whether this instance owns vnode v.
func (r *RescaledState) Own(v uint16) bool { return r.N <= 1 || VNodeOwner(v, r.N) == r.K }

// Len implements StateReader: the records of every part.
func (r *RescaledState) Len() int {
	n := 0
	for _, p := range r.Parts {
		if p != nil {
			n += p.Len()
		}
	}
	return n
}

// Range implements StateReader over every part in turn.
func (r *RescaledState) Range(fn func(key, value []byte) error) error {
	for _, p := range r.Parts {
		if p == nil {
			continue
		}
		if err := p.Range(fn); err != nil {
			return err
		}
	}
	return nil
}

// rescaled returns the RescaledState rd is, if it is one (nil otherwise).
func rescaled(rd StateReader) *RescaledState {
	rs, _ := rd.(*RescaledState)
	return rs
}

// routingPositions maps routing columns (input columns) to the positions
// of exprs that are plain references to them: the operator's own key
// positions whose values route its entries.
func routingPositions(cols []int, keys []int) ([]int, error) {
	out := make([]int, len(cols))
	for i, c := range cols {
		out[i] = -1
		for j, k := range keys {
			if k == c {
				out[i] = j
				break
			}
		}
		if out[i] < 0 {
			return nil, fmt.Errorf("routing column %d is not a key of the operator", c)
		}
	}
	return out, nil
}

// pairs is a StateReader over key/value pairs held in memory (the records
// a rescaled operator kept), read by the operator's ordinary Restore.
type pairs struct{ k, v [][]byte }

func (p *pairs) add(k, v []byte) {
	p.k, p.v = append(p.k, append([]byte(nil), k...)), append(p.v, append([]byte(nil), v...))
}

// Len implements StateReader.
func (p *pairs) Len() int { return len(p.k) }

// Range implements StateReader, in the order the pairs were added.
func (p *pairs) Range(fn func(key, value []byte) error) error {
	for i := range p.k {
		if err := fn(p.k[i], p.v[i]); err != nil {
			return err
		}
	}
	return nil
}

// rowVNodes returns the vnode of each of rows by the values of its
// columns cols (of types ts): what the exchange computed for them.
func rowVNodes(rows [][]types.Value, cols []int, ts []types.T) ([]uint16, error) {
	arrs := make([]arrow.Array, len(cols))
	vals := make([]types.Value, len(rows))
	for i, c := range cols {
		for r, row := range rows {
			if c >= len(row) {
				return nil, fmt.Errorf("routing column %d of a %d-column row", c, len(row))
			}
			vals[r] = row[c]
		}
		a, err := types.MakeArray(memory.DefaultAllocator, ts[i], vals)
		if err != nil {
			return nil, err
		}
		defer a.Release()
		arrs[i] = a
	}
	var h VNodeHasher
	return h.VNodes(arrs, ts, len(rows), nil), nil
}

// ownedCells reports, per entry of cols (n entries, cols[i] the values of
// routing column i, of type ts[i]), whether rs's instance owns its vnode.
func ownedCells(mem memory.Allocator, rs *RescaledState, ts []types.T, cols [][]cell, n int) ([]bool, error) {
	owned := make([]bool, n)
	if rs.N <= 1 {
		for i := range owned {
			owned[i] = true
		}
		return owned, nil
	}
	if n == 0 {
		return owned, nil
	}
	arrs := make([]arrow.Array, len(cols))
	for i := range cols {
		a, err := buildCells(mem, ts[i], cols[i])
		if err != nil {
			return nil, err
		}
		defer a.Release()
		arrs[i] = a
	}
	var h VNodeHasher
	for i, v := range h.VNodes(arrs, ts, n, nil) {
		owned[i] = rs.Own(v)
	}
	return owned, nil
}

// encodedKeyParts cuts enc, the concatenated encodeKey encodings of values
// of types ts (a group or partition key), into one part per value.
func encodedKeyParts(enc []byte, ts []types.T) ([][]byte, error) {
	out := make([][]byte, len(ts))
	for i, t := range ts {
		if len(enc) == 0 {
			return nil, fmt.Errorf("encoded key cut short at value %d of %d", i, len(ts))
		}
		n := 1 // the NULL marker
		if enc[0] != 0 {
			switch t.Kind {
			case types.Bool:
				n += 1
			case types.Date:
				n += 4
			case types.Interval:
				n += 16
			case types.Int2, types.Int4, types.Int8, types.Float4, types.Float8, types.Enum, types.Timestamp, types.TimestampTZ,
				types.Time, types.Oid, types.RegClass, types.RegType, types.RegProc:
				n += 8
			case types.Array, types.Void:
				_, rest, err := decodeIdentityValue(enc[1:])
				if err != nil {
					return nil, fmt.Errorf("encoded key value %d: %w", i, err)
				}
				n = len(enc) - len(rest)
			default: // text-like, numeric, bytea: a length, the bytes
				l, k := binary.Uvarint(enc[1:])
				if k <= 0 || l > uint64(len(enc)-1-k) {
					return nil, fmt.Errorf("encoded key value %d cut short", i)
				}
				n += k + int(l)
			}
		}
		if n > len(enc) {
			return nil, fmt.Errorf("encoded key value %d cut short", i)
		}
		out[i], enc = enc[:n], enc[n:]
	}
	if len(enc) != 0 {
		return nil, fmt.Errorf("%d bytes after an encoded key", len(enc))
	}
	return out, nil
}

// encodedVNode is the vnode of a key given by the encodeKey encodings of
// its values (of types ts): what VNodeHasher.VNodes computes from the
// values themselves (word types by their 64-bit word, others by the hash
// of their encoding).
func encodedVNode(parts [][]byte, ts []types.T) (uint16, error) {
	h := uint64(0x243F6A8885A308D3)
	for k, p := range parts {
		if len(p) == 0 {
			return 0, fmt.Errorf("empty encoded key value %d", k)
		}
		if !wordType(ts[k]) {
			h = hashStep(h, hashBytes(p))
			continue
		}
		var v uint64
		switch {
		case p[0] == 0:
			v = 0x9E3779B97F4A7C15 // every NULL alike
		case len(p) == 2: // bool
			v = uint64(p[1])
		case len(p) == 5: // date: the days, sign-extended
			v = uint64(int64(int32(binary.LittleEndian.Uint32(p[1:]))))
		case len(p) == 9:
			v = binary.LittleEndian.Uint64(p[1:])
		default:
			return 0, fmt.Errorf("encoded %s value of %d bytes", ts[k], len(p))
		}
		h = hashStep(h, v)
	}
	return uint16(mix64(h) % VNodes), nil
}
