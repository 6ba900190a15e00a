package exec

import (
	"cmp"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
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
	in, err := s.Input.Open(ctx)
	if err != nil {
		return nil, err
	}
	return &sortIter{ctx: ctx, s: s, in: in}, nil
}

type sortIter struct {
	ctx  *Context
	s    *Sort
	in   Iterator
	out  *sliceIter
	done bool
}

func (it *sortIter) Next() (arrow.RecordBatch, error) {
	if it.out == nil {
		bs, err := drainAll(it.ctx, it.in)
		if err != nil {
			return nil, err
		}
		out, err := sortBatches(it.ctx, it.s.Input.Columns(), bs, it.s.Keys)
		if err != nil {
			return nil, err
		}
		it.out = &sliceIter{bs: out}
	}
	return it.out.Next()
}

func (it *sortIter) Close() error { return it.in.Close() }

// sortBatches sorts rows stably by keys and returns them in batches.
func sortBatches(ctx *Context, cols []types.Column, bs []arrow.RecordBatch, keys []SortKey) ([]arrow.RecordBatch, error) {
	mem := alloc(ctx)
	arrs, n, err := materialize(mem, cols, bs)
	if err != nil || n == 0 {
		return nil, err
	}
	es := make([]expr.Expr, len(keys))
	for i, k := range keys {
		es[i] = k.E
	}
	keyArrs, err := evalOverBatches(ctx, es, bs)
	if err != nil {
		return nil, err
	}
	perm := sortPerm(keyArrs, keys, n)
	if err := canceled(ctx); err != nil {
		return nil, err
	}
	schema := types.ArrowSchema(cols)
	size := ctx.Size()
	var out []arrow.RecordBatch
	for i := 0; i < n; i += size {
		out = append(out, takeBatch(mem, schema, arrs, perm[i:min(i+size, n)]))
	}
	return out, nil
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
	if len(keys) == 1 && keyArrs[0].NullN() == 0 {
		if v, ok := int64Values(keyArrs[0]); ok {
			return sortPermInt64(v, keys[0].Desc)
		}
	}
	ts := make([]types.T, len(keys))
	desc := make([]bool, len(keys))
	nf := make([]bool, len(keys))
	for i, k := range keys {
		ts[i], desc[i], nf[i] = k.E.Type(), k.Desc, k.NullsFirst
	}
	rc := newRowCmp(keyArrs, ts, desc, nf)
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortFunc(perm, func(a, b int32) int {
		if c := rc.compare(int(a), int(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return perm
}

// sortPermInt64 sorts (key, row) pairs: the row breaks ties, so the unstable
// sort is stable.
func sortPermInt64(v []int64, desc bool) []int32 {
	type kv struct {
		k int64
		i int32
	}
	ps := make([]kv, len(v))
	for i, k := range v {
		if desc {
			k = ^k // order-reversing, without overflow
		}
		ps[i] = kv{k, int32(i)}
	}
	slices.SortFunc(ps, func(a, b kv) int {
		if a.k != b.k {
			return cmp.Compare(a.k, b.k)
		}
		return cmp.Compare(a.i, b.i)
	})
	perm := make([]int32, len(v))
	for i, p := range ps {
		perm[i] = p.i
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
