package planner

import (
	"reflect"

	"github.com/streamsql/streamsql/exec/stream"
)

// Shared subplans (docs/contributing/streaming.md, "Shared subplans"): a
// streaming plan that computes the same subtree twice (Nexmark q5 counts
// the bids per auction and hopping window once for the counts and once
// for their maximum per window) computes it once. shareSubtrees finds
// the largest equal subtrees that hold a stateful operator and read only
// relations readOnce accepts, and puts a stream.Shared over each; the runtime runs the first
// and passes its output to every one (exec/dataflow/share.go). Equal is
// reflect.DeepEqual over the planned nodes: every field, every
// expression, the scans' columns and watermarks, the instances, so two
// subtrees that differ in anything (an alias, a type, a constant) stay
// apart. Run after parallelize, before shareSources.

// shareSubtrees wraps the equal subtrees under root in Shared nodes and
// returns the new root (root itself is never shared).
func shareSubtrees(root stream.Node) stream.Node {
	var cands []stream.Node // in preorder
	var walk func(n stream.Node)
	walk = func(n stream.Node) {
		if n != root && shareable(n) {
			cands = append(cands, n)
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(root)
	group := map[stream.Node]*stream.Shared{} // a candidate taken into a group -> its Shared
	inside := map[stream.Node]bool{}          // the nodes under a grouped candidate
	var mark func(n stream.Node)
	mark = func(n stream.Node) {
		inside[n] = true
		for _, in := range n.Inputs() {
			mark(in)
		}
	}
	groups := 0
	for i, a := range cands {
		if inside[a] {
			continue
		}
		var g *stream.SharedGroup
		for _, b := range cands[i+1:] {
			if inside[b] || !reflect.DeepEqual(a, b) {
				continue
			}
			if g == nil {
				groups++
				g = &stream.SharedGroup{N: 1, ID: groups}
				group[a] = &stream.Shared{Input: a, Group: g}
				mark(a)
			}
			group[b] = &stream.Shared{Input: b, Group: g, Idx: g.N}
			g.N++
			mark(b)
		}
	}
	if groups == 0 {
		return root
	}
	seen := map[stream.Node]bool{}
	var wrap func(n stream.Node) stream.Node
	wrap = func(n stream.Node) stream.Node {
		if s := group[n]; s != nil {
			return s
		}
		if !seen[n] {
			seen[n] = true
			setInputs(n, wrap)
		}
		return n
	}
	return wrap(root)
}

// shareable reports whether n may be computed once for two parents: it
// holds a stateful operator (sharing a scan alone is shareSources'
// business, a stateless chain costs little) and every leaf under it is
// a scan that may be read once (readOnce), none of them shared yet.
func shareable(n stream.Node) bool {
	if _, ok := n.(*stream.Scan); ok || stream.Fused(n) {
		return false
	}
	return scansOnce(n)
}

// scansOnce reports whether every leaf under n is a scan readOnce
// accepts, with no share yet, and no Shared is under n.
func scansOnce(n stream.Node) bool {
	if s, ok := n.(*stream.Scan); ok {
		return readOnce(s) && s.Share == nil
	}
	if _, ok := n.(*stream.Shared); ok {
		return false
	}
	for _, in := range n.Inputs() {
		if !scansOnce(in) {
			return false
		}
	}
	return true
}
