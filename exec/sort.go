package exec

import (
	"cmp"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/types"
)

// Columns returns the input's columns.
func (s *Sort) Columns() []types.Column { return s.Input.Columns() }

// Children returns the input.
func (s *Sort) Children() []Node { return []Node{s.Input} }

// Explain returns "Sort: key, key DESC".
func (s *Sort) Explain() string { return "Sort: " + sortKeyList(s.Keys) }

// Open opens the input; the sort happens on the first Next.
func (s *Sort) Open(ctx *Context) (Iterator, error) {
	in, err := OpenNode(ctx, s.Input)
	if err != nil {
		return nil, err
	}
	return &sortIter{ctx: ctx, s: s, in: in, acct: membudget.NewAccount(budgetOf(ctx))}, nil
}

// sortBatches sorts rows stably by keys and returns them in batches.
func sortBatches(ctx *Context, cols []types.Column, bs []arrow.RecordBatch, keys []SortKey) ([]arrow.RecordBatch, error) {
	arrs, n, err := materializeCtx(ctx, cols, bs)
	if err != nil || n == 0 {
		return nil, err
	}
	// Keys that are input columns are those columns (not concatenated
	// again); the others are evaluated.
	keyArrs := make([]arrow.Array, len(keys))
	var es []expr.Expr
	for i, k := range keys {
		if c, ok := k.E.(*expr.ColRef); ok && c.Idx >= 0 && c.Idx < len(arrs) {
			keyArrs[i] = arrs[c.Idx]
		} else {
			es = append(es, k.E)
		}
	}
	if len(es) > 0 {
		evaluated, err := evalOverBatches(ctx, es, bs)
		if err != nil {
			return nil, err
		}
		for i := range keyArrs {
			if keyArrs[i] == nil {
				keyArrs[i], evaluated = evaluated[0], evaluated[1:]
			}
		}
	}
	perm, err := sortPermCtx(ctx, keyArrs, keys, n)
	if err != nil {
		return nil, err
	}
	if err := canceled(ctx); err != nil {
		return nil, err
	}
	return takeBatches(ctx, types.ArrowSchema(cols), arrs, perm, ctx.Size())
}

// evalOverBatches evaluates es over each batch and concatenates the results.
func evalOverBatches(ctx *Context, es []expr.Expr, bs []arrow.RecordBatch) ([]arrow.Array, error) {
	mem := alloc(ctx)
	parts := make([][]arrow.Array, len(es))
	for _, b := range bs {
		as, err := evalAll(ctx, es, b)
		if err != nil {
			return nil, err
		}
		for k, a := range as {
			parts[k] = append(parts[k], a)
		}
	}
	out := make([]arrow.Array, len(es))
	for k := range es {
		switch len(parts[k]) {
		case 0:
			out[k] = emptyArray(mem, es[k].Type())
		case 1:
			out[k] = parts[k][0]
		default:
			a, err := array.Concatenate(parts[k], mem)
			if err != nil {
				return nil, err
			}
			out[k] = a
		}
	}
	return out, nil
}

// sortPerm returns the stable sorted order of rows 0..n-1 by keys over the
// key arrays.
func sortPerm(keyArrs []arrow.Array, keys []SortKey, n int) []int32 {
	if nk := normalizeKeys(keyArrs, keys); nk != nil {
		return sortNormalized(nk, n)
	}
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortFunc(perm, rowOrder(keyArrs, keys))
	return perm
}

// rowOrder orders rows by keys over the key arrays, ties broken by row
// number (a total order: the sort is stable). It only reads the arrays:
// safe to call from several goroutines.
func rowOrder(keyArrs []arrow.Array, keys []SortKey) func(a, b int32) int {
	ts := make([]types.T, len(keys))
	desc := make([]bool, len(keys))
	nf := make([]bool, len(keys))
	for i, k := range keys {
		ts[i], desc[i], nf[i] = k.E.Type(), k.Desc, k.NullsFirst
	}
	rc := newRowCmp(keyArrs, ts, desc, nf)
	return func(a, b int32) int {
		if c := rc.compare(int(a), int(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
}

// maxNormKeys is how many uint64 words a normalized sort key may have.
const maxNormKeys = 4

// normalizeKeys maps each fixed-width key to uint64 words whose unsigned
// order is the requested order (direction and NULL placement included: a
// key with NULLs gets a leading NULL-rank word). It returns nil when a key
// is not fixed-width (text, numeric...) or there are too many words.
func normalizeKeys(keyArrs []arrow.Array, keys []SortKey) [][]uint64 {
	var out [][]uint64
	for k, a := range keyArrs {
		v := normWords(a)
		if v == nil {
			return nil
		}
		if a.NullN() > 0 {
			rank := make([]uint64, a.Len())
			for i := range rank {
				isNull := a.IsNull(i)
				if isNull {
					v[i] = 0
				}
				if isNull != keys[k].NullsFirst {
					rank[i] = 1
				}
			}
			out = append(out, rank)
		}
		if keys[k].Desc {
			for i := range v {
				v[i] = ^v[i]
			}
		}
		out = append(out, v)
		if len(out) > maxNormKeys {
			return nil
		}
	}
	return out
}

// normWords maps a fixed-width array's values to order-preserving uint64s.
func normWords(a arrow.Array) []uint64 {
	n := a.Len()
	switch x := a.(type) {
	case *array.Float64, *array.Float32:
		out := make([]uint64, n)
		for i := range out {
			var f float64
			if f32, ok := x.(*array.Float32); ok {
				f = float64(f32.Value(i))
			} else {
				f = x.(*array.Float64).Value(i)
			}
			out[i] = floatOrder(f)
		}
		return out
	case *array.Boolean:
		out := make([]uint64, n)
		for i := range out {
			if x.Value(i) {
				out[i] = 1
			}
		}
		return out
	}
	v, ok := int64Values(a)
	if !ok {
		return nil
	}
	out := make([]uint64, n)
	for i, x := range v {
		out[i] = uint64(x) ^ (1 << 63)
	}
	return out
}

// floatOrder maps a float to a uint64 with the same order as PostgreSQL's
// (-0 = 0, NaN above everything and equal to itself).
func floatOrder(f float64) uint64 {
	if math.IsNaN(f) {
		return ^uint64(0)
	}
	if f == 0 {
		f = 0
	}
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// sortNormalized sorts rows by their words, ties broken by row number (so
// the unstable sort is stable), over compact (words, row) records.
func sortNormalized(ks [][]uint64, n int) []int32 {
	if n >= 2048 {
		return radixSort(ks, n)
	}
	perm := make([]int32, n)
	if len(ks) == 1 {
		type rec struct {
			k uint64
			i int32
		}
		rs := make([]rec, n)
		for i, k := range ks[0] {
			rs[i] = rec{k, int32(i)}
		}
		slices.SortFunc(rs, func(a, b rec) int {
			if a.k != b.k {
				return cmp.Compare(a.k, b.k)
			}
			return cmp.Compare(a.i, b.i)
		})
		for i, r := range rs {
			perm[i] = r.i
		}
		return perm
	}
	type rec struct {
		k [maxNormKeys]uint64
		i int32
	}
	rs := make([]rec, n)
	for i := range rs {
		rs[i].i = int32(i)
		for w, k := range ks {
			rs[i].k[w] = k[i]
		}
	}
	nw := len(ks)
	slices.SortFunc(rs, func(a, b rec) int {
		for w := 0; w < nw; w++ {
			if a.k[w] != b.k[w] {
				return cmp.Compare(a.k[w], b.k[w])
			}
		}
		return cmp.Compare(a.i, b.i)
	})
	for i, r := range rs {
		perm[i] = r.i
	}
	return perm
}

// int64Values returns the values of an integer-like array widened to int64.
func int64Values(a arrow.Array) ([]int64, bool) {
	switch x := a.(type) {
	case *array.Int64:
		return x.Int64Values(), true
	case *array.Timestamp:
		return arrow.GetValues[int64](x.Data(), 1), true
	case *array.Time64:
		return arrow.GetValues[int64](x.Data(), 1), true
	case *array.Int32:
		return widen(x.Int32Values()), true
	case *array.Date32:
		return widen(arrow.GetValues[int32](x.Data(), 1)), true
	case *array.Int16:
		return widen(x.Int16Values()), true
	case *array.Uint32:
		return widen(x.Uint32Values()), true
	}
	return nil, false
}

func widen[T int16 | int32 | uint32](v []T) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// radixSort is a stable least-significant-digit radix sort of rows by their
// words (the last word first), skipping byte positions where every row has
// the same digit.
func radixSort(ks [][]uint64, n int) []int32 { return radixSortRange(ks, 0, n) }

// radixSortRange is radixSort of rows lo..hi-1 (their numbers, in order).
func radixSortRange(ks [][]uint64, lo, hi int) []int32 {
	perm, _ := radixSortKeys(ks, lo, hi)
	return perm
}

// radixSortKeys is radixSortRange that also returns the first word of
// each row in the sorted order (the whole key when there is one word).
func radixSortKeys(ks [][]uint64, lo, hi int) (perm []int32, first []uint64) {
	perm = make([]int32, hi-lo)
	for i := range perm {
		perm[i] = int32(lo + i)
	}
	return radixSortRows(ks, perm, nil)
}

// radixSortRows sorts the rows listed in perm (stably: rows with equal
// keys stay in perm's order), returning them in perm or in a new slice,
// and the first word of each in the sorted order. last, when not nil, is
// the last word of each row of perm, in perm's order (and is reused).
func radixSortRows(ks [][]uint64, perm []int32, last []uint64) ([]int32, []uint64) {
	n := len(perm)
	if n == 0 {
		return perm, nil
	}
	tmp := make([]int32, n)
	keys := last
	if keys == nil {
		keys = make([]uint64, n)
	}
	keysTmp := make([]uint64, n)
	for w := len(ks) - 1; w >= 0; w-- {
		src := ks[w]
		k0, diff := src[perm[0]], uint64(0) // the bits in which the keys differ
		if w == len(ks)-1 && last != nil {
			for _, k := range keys {
				diff |= k ^ k0
			}
		} else {
			for i, p := range perm {
				keys[i] = src[p]
				diff |= keys[i] ^ k0
			}
		}
		for shift := uint(0); shift < 64; shift += 8 {
			if (diff>>shift)&255 == 0 {
				continue // every row has the same digit here
			}
			var count [256]int
			for _, k := range keys {
				count[(k>>shift)&255]++
			}
			var off [256]int
			sum := 0
			for d := range count {
				off[d] = sum
				sum += count[d]
			}
			for i, k := range keys {
				d := (k >> shift) & 255
				pos := off[d]
				off[d]++
				tmp[pos] = perm[i]
				keysTmp[pos] = k
			}
			perm, tmp = tmp, perm
			keys, keysTmp = keysTmp, keys
		}
	}
	return perm, keys
}
