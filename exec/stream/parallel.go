package stream

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// VNodes is the number of virtual nodes a keyed operator's rows are spread
// over: a row belongs to vnode hash(key) mod VNodes (HashVNodes), and each
// of a Parallel's N instances owns a contiguous range of vnodes
// (VNodeOwner). The number is fixed, so a row's vnode never depends on the
// parallelism. Design: docs/contributing/parallel.md.
const VNodes = 256

// Parallel marks a keyed operator (its Input) that runs as N instances,
// each fed by a hash exchange per input of the operator and merged into
// one output. It is a plan node only: it keeps no state, and its one input
// is the operator itself, so every walk over a plan (checkpoint ids,
// fingerprints, watermark columns) sees the operator as before.
//
// The runtime (exec/dataflow, parallel.go) starts a Parallel specially:
// it starts the operator's own inputs, splits each of them by the vnode of
// Keys[i] (columns of that input; an empty key list sends every row to
// instance 0), starts the operator N times with an Env per instance, and
// merges the instances' outputs (barriers aligned, watermarks the minimum).
// Start, for callers that run plans without the runtime (unit tests), runs
// the operator once: a Parallel of any N gives the same rows as N = 1.
// Immutable.
type Parallel struct {
	Input Node
	// Keys are, per input of Input, the columns whose values route a row
	// (the same number per input; equal keys meet in one instance).
	Keys [][]int
	// KeyTypes are the types of Keys[i]'s columns (the same for every input).
	KeyTypes []types.T
	N        int // instances, at least 1
	// Local marks the partial phase of a two-phase aggregation
	// (docs/contributing/parallel.md): no exchange, instance k consumes
	// instance k of its input's fragment (N is the input's Width) and
	// keeps a partial of whatever rows reach it. Keys are nil. When the
	// runtime's input has another width (a source that does not split),
	// every row goes to one instance. Its state is per instance, not per
	// vnode: a restart with another N rebuilds the view.
	Local bool
	// NoShuffle marks an operator whose one input is already partitioned
	// by Keys[0] over the same N instances (a parallel operator's output,
	// through fused operators, keeps the columns its instances were routed
	// by: planner/stream_parallel_noshuffle.go). Instance k consumes
	// instance k of its input's fragment with no exchange: every row there
	// would be routed to k anyway. When the runtime's input has another
	// width, an exchange by Keys routes it as usual.
	NoShuffle bool
}

// Columns implements Node.
func (p *Parallel) Columns() []types.Column { return p.Input.Columns() }

// Inputs implements Node: the keyed operator.
func (p *Parallel) Inputs() []Node { return []Node{p.Input} }

// Explain implements Node.
func (p *Parallel) Explain() string {
	if p.Local {
		return fmt.Sprintf("StreamMerge: %d partial instances", p.N)
	}
	if p.NoShuffle {
		// part of the plan's fingerprint: a checkpoint written with
		// another routing restores by vnode (exec/dataflow, rescale.go)
		return fmt.Sprintf("StreamMerge: %d instances, input not shuffled, by %v", p.N, p.Keys[0])
	}
	return fmt.Sprintf("StreamMerge: %d instances", p.N)
}

// ExchangeExplain is the EXPLAIN line of the exchange in front of input
// i, which sends fragment from into fragment into (the instances). When
// the input comes from several instances (Width > 1), each of them hashes
// its rows straight to the N instances (an N×N exchange).
func (p *Parallel) ExchangeExplain(i, from, into int) string {
	in := p.Input.Inputs()[i]
	cols := in.Columns()
	names := make([]string, len(p.Keys[i]))
	for k, c := range p.Keys[i] {
		names[k] = cols[c].Name
	}
	src := fmt.Sprintf("fragment %d", from)
	if w := Width(in); w > 1 {
		src += fmt.Sprintf(" (%d instances)", w)
	}
	if p.NoShuffle {
		return fmt.Sprintf("StreamExchange: %s into fragment %d, no shuffle: already partitioned by hash(%s) (instance k into instance k)",
			src, into, strings.Join(names, ", "))
	}
	return fmt.Sprintf("StreamExchange: %s into fragment %d by hash(%s) (%d vnodes over %d instances)",
		src, into, strings.Join(names, ", "), VNodes, p.N)
}

// checkpoints marks Parallel as checkpointable: it keeps nothing, its
// operator's instances checkpoint under their own ids.
func (p *Parallel) checkpoints() {}

// Start implements Node: without the runtime's expansion the operator
// runs as one instance, whose output is the one input.
func (p *Parallel) Start(env *Env, inputs []<-chan Message) <-chan Message {
	return passOne(env, inputs, "merge")
}

// Fused reports whether n is a stateless operator of one input that runs
// once per instance of its input's fragment (Filter, Project, ProjectSet,
// WindowExpand: TUMBLE, HOP and CUMULATE without an aggregation): no
// exchange separates it from its input, so above a split source or a
// parallel operator it runs N-way too. Watermarks of negative columns
// (the runtime's reader marks) pass through it unchanged.
func Fused(n Node) bool {
	switch n.(type) {
	case *Filter, *Project, *ProjectSet, *WindowExpand, *SplitExpand, *Shared:
		return true
	}
	return false
}

// Width is how many instances n's output comes from in a parallel plan: a
// Parallel's N, a split source scan's readers, a fused operator's input's
// (Fused), a Shared's input's; 1 for every other node, whose inputs are gathered into one
// stream each. The runtime follows the same rules (exec/dataflow,
// fragments.go), except that a source whose inputs cannot split is read
// by one reader.
func Width(n Node) int {
	switch x := n.(type) {
	case *Parallel:
		return max(x.N, 1)
	case *Scan:
		if x.Kind == ScanSource && x.Readers > 1 {
			return x.Readers
		}
		return 1
	case *Shared:
		return Width(x.Input)
	}
	if Fused(n) {
		return Width(n.Inputs()[0])
	}
	return 1
}

// ColumnKeys returns the column positions of es when every one is a plain
// column reference (ok false otherwise).
func ColumnKeys(es []expr.Expr) (cols []int, ok bool) {
	for _, e := range es {
		c, isCol := e.(*expr.ColRef)
		if !isCol {
			return nil, false
		}
		cols = append(cols, c.Idx)
	}
	return cols, true
}

// Instance returns an Env for one instance of a parallel operator: it
// shares e's context, clock and callbacks, has its own Checkpointer (ck,
// which gives the instance its own state id), and a failure of it fails e.
func (e *Env) Instance(ck Checkpointer) *Env {
	c := &Env{Ctx: e.Ctx, Eval: e.Eval, OnRowError: e.OnRowError, Clock: e.Clock, OnLate: e.OnLate, Checkpoints: ck}
	c.stop = func() { e.Fail(c.Err()) }
	return c
}
