package dataflow

import (
	"fmt"
	"sync/atomic"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// Data parallelism (design: docs/contributing/parallel.md). A
// stream.Parallel in a plan is a fragment boundary: the keyed operator
// under it runs as N instances. startParallel starts the operator's
// inputs (each a fragment of its own, fragments.go), puts a hash exchange
// behind every channel of each (one per instance of the input's fragment:
// the input's instances hash their rows straight to the N instances, an
// N×N exchange), merges, per instance and input, the exchanges' outputs
// (barriers aligned across every sender, watermarks the minimum), and
// starts the N instances. It returns the instances' outputs unmerged:
// the consumer runs fused with them, exchanges them again, or gathers
// them (fragments.go).
//
// Every channel is bounded (stream.ChannelSize messages), so a slow
// instance holds back the exchanges feeding it, and they their inputs:
// the backpressure of a single operator crosses the exchange unchanged.
// Barriers and watermarks are broadcast to every instance, after the rows
// sent before them: each instance sees every barrier of every sender (and
// aligns them) and every watermark, so an instance that received no rows
// still moves its output watermark on and never holds the minimum of its
// consumers back.

// startParallel starts p's operator as p.N instances and returns their
// outputs; rt.mu is held.
func (j *Job) startParallel(p *stream.Parallel, ri *resumeInputs) (flow, error) {
	op := p.Input
	n := max(p.N, 1)
	ins := op.Inputs()
	if len(p.Keys) != len(ins) {
		return flow{}, internalf("dataflow: %s has %d key lists for %d inputs", p.Explain(), len(p.Keys), len(ins))
	}
	if sp := j.splitPlacement(); sp != nil && j.rt.placed(p) {
		return j.startPlacedParallel(p, sp, ri) // nodesplits.go, upper.go
	}
	perInst := make([][]<-chan stream.Message, n)
	ids := make([][]int, n) // per instance, its inputs' meters (opstats.go)
	frag := j.newFragment()
	recv := make([]atomic.Int64, n) // per instance, rows the exchanges sent it
	exchanged := false              // an input crossed an exchange (else recv stays 0)
	for i, in := range ins {
		rt := j.routeOf(p, in, p.Keys[i]) // the readers of in route their rows for the exchange (route.go)
		f, err := j.startFlow(in, ri)
		if err != nil {
			return flow{}, err
		}
		if n == 1 {
			ids[0] = append(ids[0], f.meters...)
			perInst[0] = append(perInst[0], j.gather(f, frag, 0, 1))
			continue
		}
		if (p.Local || p.NoShuffle) && f.width() == n {
			// a partial aggregate, or an input already partitioned by
			// p.Keys (its instance k holds only the vnodes instance k
			// owns): instance k runs over instance k of its input's
			// fragment, no exchange
			for k := range n {
				perInst[k] = append(perInst[k], f.chs[k])
				ids[k] = append(ids[k], f.meterOf(k)...) // its rows in: instance k's of its input
			}
			continue
		}
		for k := range n {
			ids[k] = append(ids[k], f.meters...)
		}
		// (a partial over an input of another width: its Keys are
		// empty, every row goes to one instance, barriers to all)
		exchanged = true
		senders := make([][]<-chan stream.Message, n) // per instance, one channel per sender
		for s, ch := range f.chs {
			var outs []<-chan stream.Message
			j.labeled(f.frag, s, f.width(), RoleExchange, "", func() { outs = j.relay(j.exchange(ch, p.Keys[i], p.KeyTypes, n, recv, rt)) })
			for k := range n {
				senders[k] = append(senders[k], outs[k])
			}
		}
		for k := range n {
			perInst[k] = append(perInst[k], j.gather(flow{chs: senders[k]}, frag, k, n))
		}
	}
	out := flow{frag: frag}
	if n == 1 {
		out.add(j, j.startMetered(op, ids[0], 0, 1, frag, j.env, perInst[0]))
		return out, nil
	}
	for k := range n {
		if ch, ok, err := j.place(p, k, perInst[k]); err != nil {
			return flow{}, err
		} else if ok { // runs on another node (remote.go): no meter here
			out.chs = append(out.chs, ch)
			continue
		}
		var ck stream.Checkpointer
		if c, ok := j.env.Checkpoints.(*jobCkpt); ok {
			ck = &instanceCkpt{c: c, p: p, k: k, id: instanceID(c.ids[op], k)}
		}
		// Each instance is counted apart; its rows in are what the
		// exchanges sent it (recv).
		out.add(j, j.startMetered(op, ids[k], k, n, frag, j.env.Instance(ck), perInst[k]))
		if len(j.outMeters) == 1 && exchanged {
			j.meters[j.outMeters[0]].recv = &recv[k]
		}
	}
	return out, nil
}

// instanceID is the checkpoint id of instance k of the operator with id op.
func instanceID(op string, k int) string { return fmt.Sprintf("%s#%d", op, k) }

// exchange splits in among n output channels by the vnode of each row's
// keys (columns of in's rows, of types ts), and broadcasts watermarks and
// barriers to every output after the rows before them. Each output's rows
// are gathered into chunks about as large as in's (stream.Coalescer), so
// an instance gets as few chunks as the single operator would, copied
// once from every input chunk they come from; what is gathered goes out
// before the next barrier, and before the next watermark unless the rows
// after it are not late for it (the Coalescer holds it). An update pair
// whose halves go to different instances becomes a delete and an insert
// (each instance sees a well-formed changelog). The outputs close when in
// does or the job ends.
//
// A chunk whose Part is of routing rt (not nil: in's readers route their
// rows, route.go) goes to its instance as it is, after the rows gathered
// for any instance before it.
//
// sent[k], if sent is not nil, counts the rows sent to output k.
func (j *Job) exchange(in <-chan stream.Message, keys []int, ts []types.T, n int, sent []atomic.Int64, rt *stream.Routing) []<-chan stream.Message {
	chans := make([]chan stream.Message, n)
	outs := make([]<-chan stream.Message, n)
	for k := range chans {
		chans[k] = make(chan stream.Message, stream.ChannelSize)
		outs[k] = chans[k]
	}
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		defer func() {
			for _, c := range chans {
				close(c)
			}
		}()
		sp := stream.NewSplitter(keys, ts, n)
		co := stream.NewCoalescer(n)
		// take sends instance k its gathered rows, if any
		take := func(k int) bool {
			p := co.Take(k)
			if p == nil {
				return true
			}
			if sent != nil {
				sent[k].Add(int64(p.Len()))
			}
			return j.send(chans[k], stream.ChunkMsg(p))
		}
		// broadcast sends m to every instance
		broadcast := func(m stream.Message) bool {
			for _, c := range chans {
				if !j.send(c, m) {
					return false
				}
			}
			return true
		}
		// flush sends every instance its gathered rows, then the
		// watermarks held behind them: before any other message, and
		// at the end
		flush := func() bool {
			for k := range chans {
				if !take(k) {
					return false
				}
			}
			for _, w := range co.Held() {
				if !broadcast(stream.WatermarkMsg(w)) {
					return false
				}
			}
			return true
		}
		for {
			var m stream.Message
			var ok bool
			select {
			case m, ok = <-in:
			case <-j.env.Ctx.Done():
				return
			}
			if !ok {
				flush()
				return
			}
			if m.Kind == stream.KindWatermark && co.Hold(m.Watermark) {
				continue
			}
			if m.Kind != stream.KindChunk {
				if !flush() || !broadcast(m) {
					return
				}
				continue
			}
			if pt := m.Chunk.Part; pt != nil && rt != nil && pt.Of == rt && pt.K < n {
				if co.Pending() && !flush() {
					return
				}
				if sent != nil {
					sent[pt.K].Add(int64(m.Chunk.Len()))
				}
				if !j.send(chans[pt.K], m) {
					return
				}
				continue
			}
			if !co.Fits(m.Chunk) && !flush() {
				return
			}
			co.Input(m.Chunk.Len())
			owner, only := sp.Route(m.Chunk)
			co.Add(m.Chunk, owner, only)
			for k := range chans {
				if co.Ready(k) && !take(k) {
					return
				}
			}
			if co.Overdue() {
				if !flush() {
					return
				}
				continue
			}
			for _, w := range co.Release() {
				if !broadcast(stream.WatermarkMsg(w)) {
					return
				}
			}
		}
	}()
	return outs
}

// instanceCkpt is the Checkpointer of one instance of a parallel
// operator: the operator's state is kept under the instance's own id
// (instanceID), so that a restart with the same parallelism gives every
// instance back its state.
type instanceCkpt struct {
	c  *jobCkpt
	p  *stream.Parallel // its operator is p.Input
	k  int              // the instance
	id string
}

// Restored implements stream.Checkpointer. After a change of parallelism
// (jobCkpt.scale) the instance restores from every old instance's state
// (stream.RescaledState).
func (ic *instanceCkpt) Restored(n stream.Node) stream.StateReader {
	if n != ic.p.Input {
		return ic.c.Restored(n)
	}
	if ic.c.scale != nil && ic.c.resume {
		return ic.c.scale.oldState(ic.c.rec, n, ic.p.Keys, ic.k, ic.p.N)
	}
	return ic.c.restoredID(ic.id)
}

// Snapshot implements stream.Checkpointer.
func (ic *instanceCkpt) Snapshot(n stream.Node, b stream.Barrier, st stream.Stateful) error {
	if n != ic.p.Input {
		return ic.c.Snapshot(n, b, st)
	}
	return ic.c.snapshotID(ic.id, n, b, st)
}

// planParallelism describes the parallelism of a plan for its checkpoint
// record: the largest N of its Parallel nodes (1: none).
func planParallelism(n stream.Node) int {
	best := 1
	if p, ok := n.(*stream.Parallel); ok {
		best = max(best, p.N)
	}
	for _, in := range n.Inputs() {
		best = max(best, planParallelism(in))
	}
	return best
}
