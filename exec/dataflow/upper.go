package dataflow

import (
	"context"
	"slices"

	"github.com/streamsql/streamsql/exec/stream"
)

// Operators above placed operators (docs/contributing/cluster.md,
// "Source splits on the nodes", "The exchanges above them"). When every
// input of a parallel operator P is the output of a placed operator Q
// (over its source splits, nodesplits.go, or itself above placed ones)
// with as many instances as P, under fused (stateless) operators only,
// P is placed too: on each node, the output of every local instance s
// of Q runs through the fused chain and P's hash exchange there, and the
// exchange sends every instance k of P its share directly, in-process
// when k runs on the same node, else over the stream of sender s for k
// (SplitStream{Op: P's, Split: s, Instance: k}); with P.NoShuffle or
// P.Local there is no exchange, instance s of Q feeding instance s of P
// on its node. Each instance of P merges its N senders as in one
// process (barriers aligned over all of them, watermarks the minimum).
// So the rows between Q and P never pass through the coordinator; only
// the outputs of the topmost placed operator (PlacedRoot) come back to
// it (SplitPlacement.Output). Every instance on another node checkpoints
// there (SplitPlacement.Elsewhere tells the coordinator to wait for its
// report).

// upperInputs returns, per input of p, the parallel operator under it
// and the fused operators between them (bottom first), when p is placed
// above placed operators (see above); else nil.
func (rt *Runtime) upperInputs(p *stream.Parallel) ([]*stream.Parallel, [][]stream.Node) {
	if p.N <= 1 || len(p.Keys) != len(p.Input.Inputs()) {
		return nil, nil
	}
	var lower []*stream.Parallel
	var chains [][]stream.Node
	for _, in := range p.Input.Inputs() {
		n, chain := fusedChain(in)
		q, ok := n.(*stream.Parallel)
		if !ok || q.N != p.N || !rt.placed(q) {
			return nil, nil
		}
		lower = append(lower, q)
		chains = append(chains, chain)
	}
	return lower, chains
}

// fusedChain returns the first node under (or at) n that is not fused,
// and the fused operators above it up to n (bottom first).
func fusedChain(n stream.Node) (stream.Node, []stream.Node) {
	var chain []stream.Node
	for stream.Fused(n) {
		chain = append([]stream.Node{n}, chain...)
		n = n.Inputs()[0]
	}
	return n, chain
}

// placed says whether p runs placed on the nodes when the job's splits
// are placed: over its source splits (placedChains) or above placed
// operators (upperInputs).
func (rt *Runtime) placed(p *stream.Parallel) bool {
	if s, _ := rt.placedChains(p); s != nil {
		return true
	}
	l, _ := rt.upperInputs(p)
	return l != nil
}

// PlacedRoot says whether operator op of plan is placed (PlacedOp) and
// its instances' outputs go to the coordinator: no placed operator
// takes them on the nodes. A node serves each placed root's operators
// (ServePlaced), the placed operators under it with them.
func (rt *Runtime) PlacedRoot(plan stream.Node, op int) bool {
	ps := ParallelNodes(plan)
	if op < 0 || op >= len(ps) || !rt.placed(ps[op]) {
		return false
	}
	for _, p := range ps {
		lower, _ := rt.upperInputs(p)
		for _, q := range lower {
			if q == ps[op] {
				return false
			}
		}
	}
	return true
}

// direct says whether instance k of p takes instance k of its input's
// fragment with no exchange.
func direct(p *stream.Parallel) bool { return p.Local || p.NoShuffle }

// startUpper is startPlacedOp for p above placed operators (lower, with
// chains between): the operators under it start first (their outputs on
// other nodes stay there), then the chains and exchanges of the local
// senders, then p's local instances; rt.mu is held.
func (j *Job) startUpper(p *stream.Parallel, op int, sp SplitPlacement, lower []*stream.Parallel, chains [][]stream.Node, ri *resumeInputs) (placedOut, error) {
	how := "its inputs exchanged N×N between the nodes"
	if direct(p) {
		how = "each instance taking its input's instance of the same number on its node (no shuffle)"
	}
	j.rt.cfg.Logf("materialized view %s: operator %d (%s) runs on the nodes above operators placed there, %s", j.spec.Name, op, OperatorName(p.Input), how)
	senders := newSenders(p.N, len(lower))
	var frags []int
	for i, q := range lower {
		in, err := j.startPlacedOp(q, j.opIndex(q), sp, ri)
		if err != nil {
			return placedOut{}, err
		}
		frags = append(frags, in.frag)
		x := SplitStream{Ctx: j.env.Ctx, Job: j.spec.ID, Op: op, Input: i, N: p.N, Fail: j.fail}
		j.wireUpper(p, sp, x, in.chs, senders, func(s int, ch <-chan stream.Message) <-chan stream.Message {
			for _, c := range chains[i] {
				ch = j.startMetered(c, nil, s, p.N, in.frag, j.env, []<-chan stream.Message{ch})
			}
			return ch
		}, func(s int, ch <-chan stream.Message) (outs []<-chan stream.Message) {
			j.labeled(in.frag, s, p.N, RoleExchange, "", func() { outs = j.exchange(ch, p.Keys[i], p.KeyTypes, p.N, nil, nil) })
			return outs
		})
	}
	frag := j.newFragment()
	if direct(p) && len(frags) == 1 {
		frag = frags[0] // fused with its input's fragment
	}
	return j.startPlacedInstances(p, op, sp, frag, senders, direct(p)), nil
}

// serveUpper (a node) is servePlacedOp for ps[op] above placed
// operators (lower, with chains between).
func (j *Job) serveUpper(ctx context.Context, ps []*stream.Parallel, op int, sp SplitPlacement, ck InstanceCheckpoints, lower []*stream.Parallel, chains [][]stream.Node) ([]<-chan stream.Message, error) {
	p := ps[op]
	senders := newSenders(p.N, len(lower))
	for i, q := range lower {
		outs, err := j.servePlacedOp(ctx, ps, slices.Index(ps, q), sp, ck)
		if err != nil {
			return nil, err
		}
		x := SplitStream{Ctx: ctx, Job: j.spec.ID, Op: op, Input: i, N: p.N, Fail: j.env.Fail}
		j.wireUpper(p, sp, x, outs, senders, func(_ int, ch <-chan stream.Message) <-chan stream.Message {
			for _, c := range chains[i] {
				ch = c.Start(j.env, []<-chan stream.Message{ch})
			}
			return ch
		}, func(_ int, ch <-chan stream.Message) []<-chan stream.Message {
			return j.exchange(ch, p.Keys[i], p.KeyTypes, p.N, nil, nil)
		})
	}
	return j.serveInstances(p, op, sp, ck, senders, direct(p)), nil
}

// newSenders is, per instance of n and input of ins, the channels of its
// senders (none yet).
func newSenders(n, ins int) [][][]<-chan stream.Message {
	senders := make([][][]<-chan stream.Message, n)
	for k := range senders {
		senders[k] = make([][]<-chan stream.Message, ins)
	}
	return senders
}

// wireUpper connects input x.Input of placed operator p to the outputs
// of the operator under it, outs (one per sender, nil for a sender on
// another node), on this node: each local sender s runs its chain
// (chain) and, unless p takes its input directly, its exchange (exch),
// whose output for instance k goes to senders[k] when k runs here, else
// to k's node (sp.Send); a local instance takes the share of every
// sender on another node from sp.Recv. x names the streams (Split and
// Instance are set here).
func (j *Job) wireUpper(p *stream.Parallel, sp SplitPlacement, x SplitStream, outs []<-chan stream.Message, senders [][][]<-chan stream.Message,
	chain func(s int, ch <-chan stream.Message) <-chan stream.Message, exch func(s int, ch <-chan stream.Message) []<-chan stream.Message) {
	i, n := x.Input, p.N
	for s, ch := range outs {
		x.Split = s
		if ch == nil { // sender s runs on another node
			if direct(p) {
				continue // and so does instance s
			}
			for k := range n {
				if sp.Local(x.Job, k, n) {
					x.Instance = k
					senders[k][i] = append(senders[k][i], sp.Recv(x))
				}
			}
			continue
		}
		ch = chain(s, ch)
		if direct(p) {
			senders[s][i] = append(senders[s][i], ch)
			continue
		}
		for k, out := range exch(s, ch) {
			if sp.Local(x.Job, k, n) {
				senders[k][i] = append(senders[k][i], out)
				continue
			}
			x.Instance = k
			sp.Send(x, out)
		}
	}
}
