package dataflow

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/storage/checkpoint"
)

// Rescaling by restart (docs/contributing/parallel.md, "Checkpoints"). A
// job's checkpoint record keeps, besides its plan's fingerprint, the
// fingerprint of its shape (the plan without its Parallel nodes: what the
// query computes, whatever the parallelism) and where its Parallel nodes
// were with their N. A job restarted with another parallelism has the
// same shape: its operators are matched by shape position, so each finds
// its old checkpoint id, and each instance of a keyed operator whose N
// changed restores from a stream.RescaledState over every old instance's
// state, keeping the vnodes it owns now. A keyed operator that cannot do
// that (not stream.Rescalable) makes the job rebuild, saying which.

// parMeta is one Parallel node of a job's plan in its checkpoint record:
// the shape position of its operator (shapeNodes), its instances and the
// columns its rows were routed by (Keys; nil in records written before
// they were kept, when every Parallel routed by the planner's first
// choice, never by a no-shuffle input's columns).
type parMeta struct {
	Op   int     `json:"op"`
	N    int     `json:"n"`
	Keys [][]int `json:"keys,omitempty"`
}

// shapeNode is an operator of a plan in preorder without Parallel nodes.
type shapeNode struct {
	n   stream.Node
	idx int              // preorder index counting Parallel nodes: the checkpoint id's
	par *stream.Parallel // the Parallel over n, if any
}

// shapeNodes lists plan's operators in preorder, Parallel nodes left out
// (the shape position of an operator is its index here).
func shapeNodes(plan stream.Node) []shapeNode {
	var out []shapeNode
	i := 0
	var walk func(n stream.Node, par *stream.Parallel)
	walk = func(n stream.Node, par *stream.Parallel) {
		idx := i
		i++
		if p, ok := n.(*stream.Parallel); ok {
			walk(p.Input, p)
			return
		}
		out = append(out, shapeNode{n: n, idx: idx, par: par})
		for _, in := range n.Inputs() {
			walk(in, nil)
		}
	}
	walk(plan, nil)
	return out
}

// shapeOf is the fingerprint of plan without its Parallel nodes (equal to
// fingerprint for a plan without any) and its Parallel nodes' records.
func shapeOf(plan stream.Node) (string, []parMeta) {
	var b strings.Builder
	var pars []parMeta
	s := 0
	var walk func(n stream.Node, depth int)
	walk = func(n stream.Node, depth int) {
		if p, ok := n.(*stream.Parallel); ok {
			pars = append(pars, parMeta{Op: s, N: p.N, Keys: p.Keys})
			walk(p.Input, depth)
			return
		}
		s++
		line := fingerprintLine(n)
		if sc, ok := n.(*stream.Scan); ok && sc.Readers > 1 {
			// a source's readers are not part of the shape: a restart
			// with another number of them rebuilds (resume.go, splitWhy)
			// only when its positions cannot be given back
			plain := *sc
			plain.Readers = 0
			line = fingerprintLine(&plain)
		}
		fmt.Fprintf(&b, "%d %T %s\n", depth, n, line)
		for _, in := range n.Inputs() {
			walk(in, depth+1)
		}
	}
	walk(plan, 0)
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:12]), pars
}

// rescalePlan maps a job's operators to their state in a checkpoint
// written at another parallelism. Read-only once made.
type rescalePlan struct {
	oldID map[stream.Node]string // the operator's id in the checkpoint
	oldN  map[stream.Node]int    // its instances then (1: single)
	// rerouted marks the keyed operators whose instances were routed by
	// other columns then (a no-shuffle input's, or not): at the same N
	// their states are redistributed by vnode too
	rerouted map[stream.Node]bool
	from     int // the job's parallelism then, for messages
}

// planRescale compares a job's checkpoint record with its plan: nil and
// "" when the plan is the checkpointed one (ids unchanged), a rescalePlan
// when only the parallelism differs and every keyed operator whose N
// changed can redistribute its state, else the reason the job rebuilds.
func planRescale(meta *jobMeta, plan stream.Node) (*rescalePlan, string) {
	if meta.Fingerprint == fingerprint(plan) {
		return nil, ""
	}
	oldN, newN := max(meta.Parallelism, 1), planParallelism(plan)
	shape, _ := shapeOf(plan)
	oldShape, oldPars := meta.Shape, meta.Par
	if oldShape == "" { // a record written before shapes
		switch {
		case oldN == 1: // no Parallel node: its fingerprint is its shape
			oldShape = meta.Fingerprint
		case fingerprintAt(plan, oldN) == meta.Fingerprint:
			oldShape = shape
			for i, sn := range shapeNodes(plan) {
				if sn.par != nil {
					oldPars = append(oldPars, parMeta{Op: i, N: oldN})
				}
			}
		default:
			return nil, fmt.Sprintf("its parallelism changed from %d to %d and its checkpoint predates state kept per vnode", oldN, newN)
		}
	}
	if oldShape != shape {
		if oldN != newN && (oldN == 1 || newN == 1) {
			// the shape differs between 1 and N > 1 where a global or
			// window-only aggregation runs in two phases
			// (planner/stream_twophase*.go)
			return nil, fmt.Sprintf("its plan changed with its parallelism from %d to %d (a global aggregation, or a window aggregation keyed by its window only, is planned in two phases above parallelism 1)", oldN, newN)
		}
		return nil, "its plan changed"
	}
	rp := &rescalePlan{oldID: map[stream.Node]string{}, oldN: map[stream.Node]int{}, rerouted: map[stream.Node]bool{}, from: oldN}
	pars := map[int]parMeta{}
	for _, p := range oldPars {
		pars[p.Op] = p
	}
	before := 0 // old Parallel nodes before the operator in preorder
	for s, sn := range shapeNodes(plan) {
		old, had := pars[s]
		n := old.N
		if had {
			before++
		}
		rp.oldID[sn.n] = fmt.Sprintf("%d/%d", meta.ID, s+before)
		if !had || n < 1 {
			n = 1
		}
		rp.oldN[sn.n] = n
		now := 1
		if sn.par != nil {
			now = max(sn.par.N, 1)
		}
		if n == now && now > 1 && sn.par != nil && rerouted(old, sn.par) {
			rp.rerouted[sn.n] = true
		}
		if n != now || rp.rerouted[sn.n] {
			if sn.par != nil && sn.par.Local {
				return nil, fmt.Sprintf("its parallelism changed from %d to %d and %s is the partial phase of a two-phase aggregation, whose state is one partial per instance, not per vnode", oldN, newN, sn.n.Explain())
			}
			if _, ok := sn.n.(stream.Rescalable); !ok {
				return nil, fmt.Sprintf("its parallelism changed from %d to %d and %s cannot redistribute its state by vnode yet", oldN, newN, sn.n.Explain())
			}
		}
	}
	return rp, ""
}

// rerouted reports whether the instances of p's operator were routed by
// other columns than p's in the checkpoint (old): then, even at the same
// N, a key's state may be in another instance than the one its rows now
// reach. A record without keys predates no-shuffle routing, which is the
// only routing that differs from the planner's first choice.
func rerouted(old parMeta, p *stream.Parallel) bool {
	if old.Keys == nil {
		return p.NoShuffle
	}
	return !slices.EqualFunc(old.Keys, p.Keys, slices.Equal)
}

// fingerprintAt is the fingerprint plan would have with every Parallel
// node at n instances.
func fingerprintAt(plan stream.Node, n int) string {
	var b strings.Builder
	var walk func(nd stream.Node, depth int)
	walk = func(nd stream.Node, depth int) {
		line := fingerprintLine(nd)
		if p, ok := nd.(*stream.Parallel); ok {
			q := *p
			q.N = n
			line = q.Explain()
		}
		fmt.Fprintf(&b, "%d %T %s\n", depth, nd, line)
		for _, in := range nd.Inputs() {
			walk(in, depth+1)
		}
	}
	walk(plan, 0)
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:12])
}

// oldState is operator n's state in rec under rp: its old id, or, for
// instance k of newN of a keyed operator whose parallelism changed, a
// stream.RescaledState over every old instance's state. keys are the
// operator's routing columns (nil when it now runs single).
func (rp *rescalePlan) oldState(rec *checkpoint.Checkpoint, n stream.Node, keys [][]int, k, newN int) stream.StateReader {
	id, ok := rp.oldID[n]
	if !ok {
		return nil
	}
	oldN := rp.oldN[n]
	newN = max(newN, 1)
	if oldN == newN && !rp.rerouted[n] {
		if newN > 1 {
			id = instanceID(id, k)
		}
		if st := rec.Op(id); st != nil {
			return st
		}
		return nil
	}
	rs := &stream.RescaledState{Keys: keys, N: newN, K: k}
	for i := range oldN {
		pid := id
		if oldN > 1 {
			pid = instanceID(id, i)
		}
		if st := rec.Op(pid); st != nil {
			rs.Parts = append(rs.Parts, st)
		} else {
			rs.Parts = append(rs.Parts, nil)
		}
	}
	return rs
}

// restoredBytes is the size of every old operator's state.
func (rp *rescalePlan) restoredBytes(rec *checkpoint.Checkpoint) int64 {
	var b int64
	for n, id := range rp.oldID {
		if rp.oldN[n] <= 1 {
			b += rec.Op(id).Bytes()
			continue
		}
		for i := range rp.oldN[n] {
			b += rec.Op(instanceID(id, i)).Bytes()
		}
	}
	return b
}
