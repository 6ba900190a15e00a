package planner

import "github.com/streamsql/streamsql/exec/stream"

// The default parallelism (Env.ParallelismAuto). A view whose
// streaming_parallelism was not SET spreads the process's cores over its
// stateful operators instead of giving each keyed one every core: with k
// stateful operators (the keyed stream.Parallel nodes the plan gets at n
// instances, and the aggregations, joins, top-Ns and window functions that
// stay single, such as the final phase of a TUMBLE max; local partial
// phases, fused with their input, not counted) it runs at max(1, n / k)
// instances. The operators of a plan already run side by side, one
// goroutine each (pipelining), so k stateful operators at n instances keep
// k·n goroutines busy on n cores, and each instance costs CPU (the
// exchanges, the split readers' routing, inputs interleaved in time): on
// two cores Nexmark q4, q5, q7 and q9 (two to four stateful operators)
// spent 10-20 % less CPU at one instance than at two, and ran as fast or
// faster (docs/benchmarks.md, "The default parallelism"). A plan with one
// stateful operator (a GROUP BY, a SESSION window) still gets n.

// spreadOver is the parallelism of a plan of k stateful operators
// (keyedStages) under the default rule at n.
func spreadOver(k, n int) int {
	if k > 1 {
		return max(1, n/k)
	}
	return n
}

// keyedStages counts the stateful operators under root: distinct
// non-local Parallel nodes, and stateful operators not inside a Parallel.
func keyedStages(root stream.Node) int {
	seen := map[stream.Node]bool{}
	k := 0
	var walk func(nd stream.Node, wrapped bool)
	walk = func(nd stream.Node, wrapped bool) {
		if seen[nd] {
			return
		}
		seen[nd] = true
		if s, ok := nd.(*stream.Shared); ok && s.Idx > 0 {
			return // not computed: its group's first is (stream_subshare.go)
		}
		if p, ok := nd.(*stream.Parallel); ok {
			if !p.Local {
				k++
			}
			walk(p.Input, true)
			return
		}
		if !wrapped && stateful(nd) {
			k++
		}
		setInputs(nd, func(in stream.Node) stream.Node {
			walk(in, false)
			return in
		})
	}
	walk(root, false)
	return k
}

// stateful reports the operators that keep state per key or window.
func stateful(nd stream.Node) bool {
	switch nd.(type) {
	case *stream.HashAgg, *stream.WindowAgg, *stream.HashJoin, *stream.TopN, *stream.OverWindow:
		return true
	}
	return false
}
