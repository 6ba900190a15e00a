package exec

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// aggState is the running state of one aggregate for many groups. States
// live in flat typed slices indexed by group id and are updated a batch at
// a time. A state is used by one goroutine.
type aggState interface {
	// grow makes groups [0, n) exist (new groups start empty).
	grow(n int)
	// update folds rows into their groups: row i goes to group gids[i], or
	// nowhere when gids[i] < 0. args hold the argument columns (none for
	// count(*)); len(gids) is the number of rows.
	update(args []arrow.Array, gids []int32) error
	// appendResult appends group g's current result to b (a builder for
	// the aggregate's return type); the state stays usable.
	appendResult(b array.Builder, g int) error
}

// finisher is a state that must see all input before producing results
// (ordered aggregates).
type finisher interface {
	finish() error
}

// aggImpl makes a state for the aggregate's resolved argument types.
type aggImpl func(f *AggFunc, mem memory.Allocator) aggState

// newAggState builds the state for one aggregate call, with DISTINCT and
// ORDER BY wrappers as needed.
func newAggState(ctx *Context, call *AggCall) (aggState, error) {
	mem := alloc(ctx)
	impl, ok := call.Fn.impl.(aggImpl)
	if !ok || impl == nil {
		return nil, fmt.Errorf("exec: aggregate %s has no implementation", call.Fn.Name)
	}
	st := impl(call.Fn, mem)
	if j, ok := st.(*jsonAgg); ok {
		if err := j.init(ctx, call.Fn); err != nil {
			return nil, err
		}
	}
	if call.Distinct {
		st = &distinctAgg{inner: st, seen: newHashTable(append([]types.T{types.TInt8}, call.Fn.Args...)), mem: mem}
	}
	if h, ok := st.(*hypotheticalAgg); ok {
		h.setOrder(call.OrderBy) // compares, does not sort (agg_hypothetical.go)
		return st, nil
	}
	if len(call.OrderBy) > 0 {
		st = &orderedAgg{inner: st, keys: call.OrderBy, mem: mem}
	}
	return st, nil
}

// distinctAgg passes each (group, arguments) combination to its inner state
// once, in order of first appearance.
type distinctAgg struct {
	inner aggState
	seen  *hashTable
	mem   memory.Allocator
	gids  []int32
}

func (d *distinctAgg) grow(n int) { d.inner.grow(n) }

func (d *distinctAgg) update(args []arrow.Array, gids []int32) error {
	rows := make([]int32, 0, len(gids))
	for i, g := range gids {
		if g >= 0 {
			rows = append(rows, int32(i))
		}
	}
	if len(rows) == 0 {
		return nil
	}
	gb := array.NewInt64Builder(d.mem)
	for _, r := range rows {
		gb.Append(int64(gids[r]))
	}
	keys := []arrow.Array{gb.NewArray()}
	gb.Release()
	for _, a := range args {
		keys = append(keys, takeArray(d.mem, a, rows))
	}
	d.gids = d.seen.insert(keys, len(rows), d.gids, false)
	first := d.seen.newRows
	if len(first) == 0 {
		return nil
	}
	sub := make([]arrow.Array, len(args))
	for k := range args {
		sub[k] = takeArray(d.mem, keys[k+1], first)
	}
	sg := make([]int32, len(first))
	for i, r := range first {
		sg[i] = gids[rows[r]]
	}
	return d.inner.update(sub, sg)
}

func (d *distinctAgg) appendResult(b array.Builder, g int) error { return d.inner.appendResult(b, g) }

func (d *distinctAgg) finish() error {
	if f, ok := d.inner.(finisher); ok {
		return f.finish()
	}
	return nil
}

// orderedAgg buffers its input, then feeds it to the inner state sorted by
// group and the aggregate's ORDER BY keys (stable: ties keep input order).
type orderedAgg struct {
	inner   aggState
	keys    []SortKey
	mem     memory.Allocator
	n       int
	args    [][]arrow.Array // per batch
	keyArrs [][]arrow.Array // per batch, evaluated by the operator
	gids    [][]int32
	pending []arrow.Array // ORDER BY key values for the next update
	bytes   int64         // what args, keyArrs and gids hold (memSizer)
}

// memBytes implements memSizer: the input it keeps until finish sorts it.
func (o *orderedAgg) memBytes() int64 { return o.bytes }

func (o *orderedAgg) grow(n int) { o.n = n; o.inner.grow(n) }

// setKeys gives the ORDER BY values of the rows of the next update.
func (o *orderedAgg) setKeys(ks []arrow.Array) { o.pending = ks }

func (o *orderedAgg) update(args []arrow.Array, gids []int32) error {
	keys := o.pending
	o.pending = nil
	// Keep only the rows that belong to a group (FILTER, and rows a
	// spilling hash aggregation sends to its partitions, have none): the
	// batch's arrays would otherwise stay alive whole for a few rows.
	var rows []int32
	if slices.ContainsFunc(gids, func(g int32) bool { return g < 0 }) {
		rows = make([]int32, 0, len(gids))
		for i, g := range gids {
			if g >= 0 {
				rows = append(rows, int32(i))
			}
		}
	}
	switch {
	case rows != nil && len(rows) == 0:
		return nil
	case rows != nil:
		args, keys = takeArrays(o.mem, args, rows), takeArrays(o.mem, keys, rows)
		kept := make([]int32, len(rows))
		for j, i := range rows {
			kept[j] = gids[i]
		}
		gids = kept
	default:
		gids = slices.Clone(gids)
	}
	o.args = append(o.args, args)
	o.keyArrs = append(o.keyArrs, keys)
	o.gids = append(o.gids, gids)
	o.bytes += 4 * int64(len(gids))
	for _, a := range args {
		o.bytes += arrayBytes(a)
	}
	for _, a := range keys {
		o.bytes += arrayBytes(a)
	}
	return nil
}

// takeArrays is takeArray of each of arrs.
func takeArrays(mem memory.Allocator, arrs []arrow.Array, rows []int32) []arrow.Array {
	out := make([]arrow.Array, len(arrs))
	for i, a := range arrs {
		out[i] = takeArray(mem, a, rows)
	}
	return out
}

func (o *orderedAgg) finish() error {
	if len(o.gids) == 0 {
		return nil
	}
	var allG []int32
	for _, g := range o.gids {
		allG = append(allG, g...)
	}
	concat := func(parts [][]arrow.Array, k int) (arrow.Array, error) {
		ps := make([]arrow.Array, len(parts))
		for i, p := range parts {
			ps[i] = p[k]
		}
		if len(ps) == 1 {
			return ps[0], nil
		}
		return array.Concatenate(ps, o.mem)
	}
	ka := make([]arrow.Array, len(o.keys))
	ts := make([]types.T, len(o.keys))
	desc := make([]bool, len(o.keys))
	nf := make([]bool, len(o.keys))
	for k, sk := range o.keys {
		a, err := concat(o.keyArrs, k)
		if err != nil {
			return err
		}
		ka[k], ts[k], desc[k], nf[k] = a, sk.E.Type(), sk.Desc, sk.NullsFirst
	}
	rc := newRowCmp(ka, ts, desc, nf)
	perm := make([]int32, 0, len(allG))
	for i, g := range allG {
		if g >= 0 {
			perm = append(perm, int32(i))
		}
	}
	slices.SortFunc(perm, func(a, b int32) int {
		if c := cmp.Compare(allG[a], allG[b]); c != 0 {
			return c
		}
		if c := rc.compare(int(a), int(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	nargs := len(o.args[0])
	sorted := make([]arrow.Array, nargs)
	for k := 0; k < nargs; k++ {
		a, err := concat(o.args, k)
		if err != nil {
			return err
		}
		sorted[k] = takeArray(o.mem, a, perm)
	}
	sg := make([]int32, len(perm))
	for i, p := range perm {
		sg[i] = allG[p]
	}
	o.args, o.keyArrs, o.gids = nil, nil, nil
	if err := o.inner.update(sorted, sg); err != nil {
		return err
	}
	if f, ok := o.inner.(finisher); ok {
		return f.finish()
	}
	return nil
}

func (o *orderedAgg) appendResult(b array.Builder, g int) error { return o.inner.appendResult(b, g) }

// growSlice extends s with zero values to length n.
func growSlice[T any](s []T, n int) []T {
	if n <= len(s) {
		return s
	}
	return append(s, make([]T, n-len(s))...)
}

// appendInt64Like appends v to a builder of an integer-like storage type.
func appendInt64Like(b array.Builder, v int64) {
	switch x := b.(type) {
	case *array.Int64Builder:
		x.Append(v)
	case *array.Int32Builder:
		x.Append(int32(v))
	case *array.Int16Builder:
		x.Append(int16(v))
	case *array.Uint32Builder:
		x.Append(uint32(v))
	case *array.Date32Builder:
		x.Append(arrow.Date32(v))
	case *array.Time64Builder:
		x.Append(arrow.Time64(v))
	case *array.TimestampBuilder:
		x.Append(arrow.Timestamp(v))
	default:
		b.AppendNull()
	}
}

// appendFloat appends v to a float32 or float64 builder.
func appendFloat(b array.Builder, v float64) {
	switch x := b.(type) {
	case *array.Float64Builder:
		x.Append(v)
	case *array.Float32Builder:
		x.Append(float32(v))
	default:
		b.AppendNull()
	}
}
