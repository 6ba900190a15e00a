package planner

import (
	"reflect"
	"slices"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// Data parallelism (docs/contributing/parallel.md): with Env.Parallelism
// N > 1, PlanStream wraps every keyed operator it can spread by key in a
// stream.Parallel of N instances, whose inputs the runtime hash-exchanges:
//
//   - StreamHashAgg with GROUP BY: by the group keys that are plain
//     columns (rows of one group agree on every key, so any of them
//     routes it; a GROUP BY of computed expressions only stays single);
//   - StreamWindowAgg with GROUP BY besides the window: the same (a
//     window with no other key is one group: two phases, below);
//   - StreamHashJoin with equality keys: by the key pairs that are plain
//     columns of the same type on both sides (equal keys meet in one
//     instance);
//   - StreamTopN with PARTITION BY (a top-N per group, DISTINCT ON): by
//     its partition columns that are plain columns;
//   - StreamOverWindow: by the plain columns every one of its calls
//     partitions by (none in common, or no PARTITION BY: single).
//
// A source whose connector splits (the generators) is read by N readers,
// each its share (stream.Scan.Readers), merged into the scan's stream.
//
// Everything else (filters, projections, unions: stateless, fused with
// their input; a top-N without partitions, a window function without a
// common partition column, temporal filter and lookup joins) runs as
// one instance, as before; an aggregation without keys, or a TUMBLE
// aggregation keyed by its window only, over a parallel input runs in
// two phases when its aggregates allow it (stream_twophase.go,
// stream_twophase_window.go), else as one instance.

// MaxParallelism bounds streaming_parallelism: one instance per vnode at
// most.
const MaxParallelism = stream.VNodes

// parallelize rewrites the freshly planned tree under root in place (its
// nodes are not shared yet) and returns the new root. split is the
// streaming_split_distinct mode (stream_splitdistinct.go); its auto mode
// decides by the parallelism shape (n, or the parallelism the default
// rule started from: stream_parallel_auto.go), so that the rule keeps the
// plan's shape while it lowers n.
func parallelize(root stream.Node, n, shape int, split string) stream.Node {
	if n <= 1 && !useSplitAt(split, shape) {
		return root
	}
	seen := map[stream.Node]stream.Node{}
	var walk func(nd stream.Node) stream.Node
	walk = func(nd stream.Node) stream.Node {
		if done, ok := seen[nd]; ok {
			return done
		}
		setInputs(nd, walk)
		out := nd
		if h, ok := nd.(*stream.HashAgg); ok && useSplitDistinct(split, shape, h) {
			if sd, final := SplitDistinctOf(h, n); sd != nil {
				if p := parallelOf(final, n); p != nil && n > 1 {
					noShuffle(p)
					sd.(*stream.Project).Input = p
				}
				seen[nd] = sd
				return sd
			}
		}
		if n <= 1 {
			seen[nd] = out
			return out
		}
		if p := parallelOf(nd, n); p != nil {
			noShuffle(p) // stream_parallel_noshuffle.go
			out = p
		} else if h, ok := nd.(*stream.HashAgg); ok {
			if tp := TwoPhaseOf(h, stream.Width(h.Input)); tp != nil {
				out = tp // stream_twophase.go
			}
		} else if w, ok := nd.(*stream.WindowAgg); ok {
			if tp := TwoPhaseWindowOf(w, stream.Width(w.Input)); tp != nil {
				out = tp // stream_twophase_window.go
			}
		}
		seen[nd] = out
		return out
	}
	return walk(root)
}

// setInputs replaces every exported input field of nd (a Node, or a
// slice of them) with f of its value.
func setInputs(nd stream.Node, f func(stream.Node) stream.Node) {
	v := reflect.ValueOf(nd)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return
	}
	v = v.Elem()
	nodeT := reflect.TypeFor[stream.Node]()
	for i := 0; i < v.NumField(); i++ {
		fv := v.Field(i)
		if !fv.CanSet() {
			continue
		}
		switch {
		case fv.Type() == nodeT && !fv.IsNil():
			fv.Set(reflect.ValueOf(f(fv.Interface().(stream.Node))))
		case fv.Kind() == reflect.Slice && fv.Type().Elem() == nodeT:
			for k := 0; k < fv.Len(); k++ {
				if e := fv.Index(k); !e.IsNil() {
					e.Set(reflect.ValueOf(f(e.Interface().(stream.Node))))
				}
			}
		}
	}
}

// parallelOf returns nd wrapped in a Parallel of n instances, or nil when
// nd does not spread by key.
func parallelOf(nd stream.Node, n int) *stream.Parallel {
	switch x := nd.(type) {
	case *stream.Scan:
		// a generator's source is read by n readers, each its share
		// (their rows merged into the scan's one stream)
		if x.Kind == stream.ScanSource && x.Splittable {
			x.Readers = n
		}
		return nil
	case *stream.HashAgg:
		cols, ts := plainKeys(x.GroupBy)
		if len(cols) == 0 {
			return nil
		}
		return &stream.Parallel{Input: x, Keys: [][]int{cols}, KeyTypes: ts, N: n}
	case *stream.WindowAgg:
		cols, ts := plainKeys(x.GroupBy)
		if len(cols) == 0 {
			return nil
		}
		return &stream.Parallel{Input: x, Keys: [][]int{cols}, KeyTypes: ts, N: n}
	case *stream.TopN:
		// per partition (GROUP BY ... row_number() <= n, DISTINCT ON): a
		// partition lives in one instance; without PARTITION BY it is one
		// ordered list and stays single
		cols, ts := plainKeys(x.PartitionBy)
		if len(cols) == 0 {
			return nil
		}
		return &stream.Parallel{Input: x, Keys: [][]int{cols}, KeyTypes: ts, N: n}
	case *stream.OverWindow:
		// rows of one partition of every call must meet: route by the
		// plain columns every call partitions by
		cols, ts := plainKeys(x.Calls[0].PartitionBy)
		var keep []int
		var kt []types.T
		for i, c := range cols {
			inAll := true
			for _, call := range x.Calls[1:] {
				other, _ := plainKeys(call.PartitionBy)
				inAll = inAll && slices.Contains(other, c)
			}
			if inAll && !slices.Contains(keep, c) {
				keep, kt = append(keep, c), append(kt, ts[i])
			}
		}
		if len(keep) == 0 {
			return nil
		}
		return &stream.Parallel{Input: x, Keys: [][]int{keep}, KeyTypes: kt, N: n}
	case *stream.HashJoin:
		var lc, rc []int
		var ts []types.T
		for i := range x.LeftKeys {
			l, ok1 := x.LeftKeys[i].(*expr.ColRef)
			r, ok2 := x.RightKeys[i].(*expr.ColRef)
			if ok1 && ok2 && sameHash(l.T, r.T) {
				lc, rc, ts = append(lc, l.Idx), append(rc, r.Idx), append(ts, l.T)
			}
		}
		if len(lc) == 0 {
			return nil
		}
		return &stream.Parallel{Input: x, Keys: [][]int{lc, rc}, KeyTypes: ts, N: n}
	}
	return nil
}

// sameHash reports whether equal values of types a and b (a join's key
// pair) hash to one vnode: the same type, or two integer types (hashed as
// one 64-bit word). Other pairs compare through a cast the hash does not
// see (timestamp = timestamptz depends on the time zone).
func sameHash(a, b types.T) bool {
	isInt := func(t types.T) bool { return t.Kind == types.Int2 || t.Kind == types.Int4 || t.Kind == types.Int8 }
	return a.Kind == b.Kind || isInt(a) && isInt(b)
}

// plainKeys returns the positions and types of the keys of es that are
// plain column references.
func plainKeys(es []expr.Expr) ([]int, []types.T) {
	var cols []int
	var ts []types.T
	for _, e := range es {
		if c, ok := e.(*expr.ColRef); ok {
			cols, ts = append(cols, c.Idx), append(ts, c.T)
		}
	}
	return cols, ts
}
