package exec

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// Parallel sorting (ORDER BY with Context.Workers > 1). The rows are cut
// into one range per worker; each worker sorts its range (radix sort of
// the normalized keys, or the comparator sort); then the sorted runs are
// merged pairwise, each merge itself split between the workers at
// co-ranks (the place in each run where an output segment starts, found
// by binary search), so every phase uses every worker. Ties are broken
// by row number in every step, so the order is the serial sort's exactly
// (a total order: no two rows compare equal).

// parSortMin is the fewest rows worth sorting in parallel.
const parSortMin = 1 << 15

// sortRun is a sorted run of rows: their numbers, and with one
// normalized key word, those words in the same order (merging then reads
// two arrays in order instead of looking each row's key up).
type sortRun struct {
	perm []int32
	keys []uint64 // nil: compare through order
}

// sortPermCtx is sortPerm using the execution's workers.
func sortPermCtx(ctx *Context, keyArrs []arrow.Array, keys []SortKey, n int) ([]int32, error) {
	w := workers(ctx)
	if w < 2 || n < parSortMin {
		return sortPerm(keyArrs, keys, n), nil
	}
	var order func(a, b int32) int
	var sortRange func(lo, hi int) sortRun
	if nk := normalizeKeys(keyArrs, keys); nk != nil {
		if perm, ok, err := msdSortPerm(nk, n, w); err != nil || ok {
			return perm, err
		}
		order = func(a, b int32) int {
			for _, k := range nk {
				if c := cmp.Compare(k[a], k[b]); c != 0 {
					return c
				}
			}
			return cmp.Compare(a, b)
		}
		sortRange = func(lo, hi int) sortRun {
			perm, first := radixSortKeys(nk, lo, hi)
			if len(nk) > 1 {
				first = nil
			}
			return sortRun{perm, first}
		}
	} else {
		order = rowOrder(keyArrs, keys)
		sortRange = func(lo, hi int) sortRun {
			p := make([]int32, hi-lo)
			for i := range p {
				p[i] = int32(lo + i)
			}
			slices.SortFunc(p, order)
			return sortRun{perm: p}
		}
	}
	runs := make([]sortRun, w)
	if err := parallelDo(w, func(i int) { runs[i] = sortRange(i*n/w, (i+1)*n/w) }); err != nil {
		return nil, err
	}
	for len(runs) > 1 {
		next := make([]sortRun, 0, (len(runs)+1)/2)
		for i := 0; i < len(runs); i += 2 {
			if i+1 == len(runs) {
				next = append(next, runs[i])
				continue
			}
			m, err := parMerge(runs[i], runs[i+1], w, order)
			if err != nil {
				return nil, err
			}
			next = append(next, m)
		}
		runs = next
	}
	return runs[0].perm, nil
}

// parallelDo runs fn(0..w-1), fn(0) on the calling goroutine and the rest
// on goroutines of their own, waits for them and returns the first error:
// a panic in fn becomes an internal error, as in the other parallel
// operators, instead of ending the process.
func parallelDo(w int, fn func(i int)) error {
	errs := make([]error, w)
	var wg sync.WaitGroup
	for i := 1; i < w; i++ {
		wg.Go(func() {
			defer recoverErr(&errs[i])
			fn(i)
		})
	}
	func() {
		defer recoverErr(&errs[0])
		fn(0)
	}()
	wg.Wait()
	return errors.Join(errs...)
}

// before reports whether row i of a comes before row j of b (a total
// order: row numbers break ties).
func before(a sortRun, i int, b sortRun, j int, order func(x, y int32) int) bool {
	if a.keys != nil {
		if a.keys[i] != b.keys[j] {
			return a.keys[i] < b.keys[j]
		}
		return a.perm[i] < b.perm[j]
	}
	return order(a.perm[i], b.perm[j]) < 0
}

// parMerge merges the sorted runs a and b on w goroutines, each writing
// its own segment of the output.
func parMerge(a, b sortRun, w int, order func(x, y int32) int) (sortRun, error) {
	n := len(a.perm) + len(b.perm)
	out := sortRun{perm: make([]int32, n)}
	if a.keys != nil {
		out.keys = make([]uint64, n)
	}
	err := parallelDo(w, func(s int) {
		k0, k1 := s*n/w, (s+1)*n/w
		i0, i1 := coRank(k0, a, b, order), coRank(k1, a, b, order)
		mergeInto(out, k0, k1, a, i0, i1, b, k0-i0, k1-i1, order)
	})
	return out, err
}

// coRank returns how many of the first k rows of merge(a, b) come from a.
func coRank(k int, a, b sortRun, order func(x, y int32) int) int {
	lo, hi := max(0, k-len(b.perm)), min(k, len(a.perm))
	for lo < hi {
		i := int(uint(lo+hi) >> 1)
		if j := k - i; j > 0 && before(a, i, b, j-1, order) {
			lo = i + 1 // a[i] comes before b[j-1]: more of a
		} else {
			hi = i
		}
	}
	return lo
}

// mergeInto merges a[i:ie] and b[j:je] into out[k:ke].
func mergeInto(out sortRun, k, ke int, a sortRun, i, ie int, b sortRun, j, je int, order func(x, y int32) int) {
	for ; k < ke; k++ {
		if j == je || (i < ie && before(a, i, b, j, order)) {
			out.perm[k] = a.perm[i]
			if out.keys != nil {
				out.keys[k] = a.keys[i]
			}
			i++
		} else {
			out.perm[k] = b.perm[j]
			if out.keys != nil {
				out.keys[k] = b.keys[j]
			}
			j++
		}
	}
}

// materializeCtx is materialize with the columns concatenated in parallel
// when the execution has workers and the input is large.
func materializeCtx(ctx *Context, cols []types.Column, bs []arrow.RecordBatch) ([]arrow.Array, int, error) {
	mem := alloc(ctx)
	n := 0
	for _, b := range bs {
		n += int(b.NumRows())
	}
	w := min(workers(ctx), len(cols))
	if w < 2 || n < parSortMin || len(bs) < 2 {
		return materialize(mem, cols, bs)
	}
	out := make([]arrow.Array, len(cols))
	errs := make([]error, w)
	err := parallelDo(w, func(i int) {
		for c := i; c < len(cols); c += w {
			parts := make([]arrow.Array, len(bs))
			for j, b := range bs {
				parts[j] = b.Column(c)
			}
			a, err := array.Concatenate(parts, mem)
			if err != nil {
				errs[i] = fmt.Errorf("exec: concatenating column %d: %w", c, err)
				return
			}
			out[c] = a
		}
	})
	if err := firstError(errs, err); err != nil {
		return nil, 0, err
	}
	return out, n, nil
}

// takeBatches gathers the rows of perm in batches of size, in parallel
// when the execution has workers.
func takeBatches(ctx *Context, schema *arrow.Schema, arrs []arrow.Array, perm []int32, size int) ([]arrow.RecordBatch, error) {
	mem := alloc(ctx)
	n := len(perm)
	out := make([]arrow.RecordBatch, (n+size-1)/size)
	w := workers(ctx)
	if n < parSortMin {
		w = 1
	}
	err := parallelDo(w, func(i int) {
		for b := i; b < len(out); b += w {
			out[b] = takeBatch(mem, schema, arrs, perm[b*size:min((b+1)*size, n)])
		}
	})
	return out, err
}
