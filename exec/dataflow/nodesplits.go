package dataflow

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Split readers on the nodes (docs/contributing/cluster.md, "Source
// splits on the nodes"). When the runtime's Placement also implements
// SplitPlacement and places a job's splits, a parallel operator whose
// every input is a split source read by as many readers as the operator
// has instances, under stateless (fused) operators only (placedChains),
// runs spread over the nodes whole: reader s, its fused chain and its
// hash exchange run on the node of instance s, and each exchange sends
// every instance its share directly, in-process when the instance runs
// on the same node, else over the network (N×N streams between the
// nodes). Each instance merges its N senders as in one process
// (barriers aligned, watermarks the minimum).
//
// The coordinator keeps one root per split, as in one process, so that
// barrier injection and the checkpoint's records are unchanged: the root
// of a split read elsewhere is a proxy (remoteRoot) that forwards every
// barrier request to the split's node over a control stream and records
// the position and watermark the reader reports back at each cut. A
// checkpoint completes only once every such root reported its epoch
// (checkpointReady). The first control message gives the reader its
// start position and watermark (a resumed job's, from the checkpoint).
//
// The split readers of a source do not align their cuts across nodes
// (splitalign.go is in-process): an epoch may hold a different span of
// event time from each reader, which costs update churn in non-windowed
// aggregates, never correctness.

// SplitPlacement is implemented by a Placement that runs split readers
// on the nodes. Methods are called while a job starts (the runtime's
// lock held): they must not block on the network.
type SplitPlacement interface {
	// PlaceSplits says whether job's placeable operators (placedChains)
	// run spread over the nodes.
	PlaceSplits(job uint32) bool
	// Local says whether split or instance k of n of job runs on this
	// node.
	Local(job uint32, k, n int) bool
	// Send carries the output of sender x.Split for instance
	// x.Instance to the instance's node; it owns ch.
	Send(x SplitStream, ch <-chan stream.Message)
	// Recv is the output of sender x.Split (on another node) for the
	// local instance x.Instance.
	Recv(x SplitStream) <-chan stream.Message
	// Control connects the two ends of split x.Split: on the
	// coordinator it sends out (the control messages) to the split's
	// node and returns the reader's reports; on the split's node it
	// sends out (the reports) and returns the control messages.
	Control(x SplitStream, out <-chan stream.Message) <-chan stream.Message
	// Output (the coordinator) is the output of instance in.Instance,
	// which runs on another node, its inputs fed there.
	Output(in InstancePlace) <-chan stream.Message
	// Elsewhere (the coordinator) notes that instance in.Instance runs
	// on another node (it checkpoints there), whether or not its output
	// comes back here (Output): an operator placed above it may take
	// its output on that node (upper.go).
	Elsewhere(in InstancePlace)
}

// InstanceCheckpoints gives ServePlaced the checkpointing of the
// instances it starts on a node. Called while they start, from the
// caller's goroutine.
type InstanceCheckpoints interface {
	// Checkpointer is instance k of operator op's (nil: none).
	Checkpointer(op, k int) stream.Checkpointer
	// Watch returns out, instance k of operator op's output, passed on
	// (it may note the barriers leaving the instance).
	Watch(op, k int, out <-chan stream.Message) <-chan stream.Message
}

// SplitStream names one stream of a placed operator: Job, Op (its index
// in ParallelNodes), Input, Split (the sender) and Instance (the
// receiver, -1 for a control stream) are the same on every node.
type SplitStream struct {
	Ctx      context.Context
	Job      uint32
	Op       int
	Input    int
	Split    int
	Instance int
	N        int
	Fail     func(error)
}

// placedChains returns, per input of p, the source scan at its bottom
// and the fused operators above it (bottom first), when every input is a
// split source read by p.N readers under fused operators only and p
// exchanges it (not Local, not NoShuffle); else nil.
func (rt *Runtime) placedChains(p *stream.Parallel) ([]*stream.Scan, [][]stream.Node) {
	if p.N <= 1 || p.Local || p.NoShuffle || len(p.Keys) != len(p.Input.Inputs()) {
		return nil, nil
	}
	var scans []*stream.Scan
	var chains [][]stream.Node
	for _, in := range p.Input.Inputs() {
		n, chain := fusedChain(in) // upper.go
		s, ok := n.(*stream.Scan)
		if !ok || s.Kind != stream.ScanSource || rt.readersOf(s) != p.N {
			return nil, nil
		}
		scans = append(scans, s)
		chains = append(chains, chain)
	}
	return scans, chains
}

// splitPlacement is the runtime's SplitPlacement when it places job's
// splits, else nil.
func (j *Job) splitPlacement() SplitPlacement {
	sp, ok := j.rt.cfg.Placement.(SplitPlacement)
	if !ok || !sp.PlaceSplits(j.spec.ID) {
		return nil
	}
	return sp
}

// startPlacedParallel is startParallel for an operator placed on the
// nodes (placed: over its source splits, or above placed operators,
// upper.go) on the coordinator: its instances on other nodes send their
// outputs back here; rt.mu is held.
func (j *Job) startPlacedParallel(p *stream.Parallel, sp SplitPlacement, ri *resumeInputs) (flow, error) {
	if j.rt.cfg.Checkpoints != nil && !j.rt.cfg.PlacedCheckpoints {
		return flow{}, pgerr.New(pgerr.FeatureNotSupported,
			"checkpoints of operator instances that run on other nodes are not built yet (issue 19)")
	}
	op := j.opIndex(p)
	po, err := j.startPlacedOp(p, op, sp, ri)
	if err != nil {
		return flow{}, err
	}
	out := flow{frag: po.frag, meters: po.meters}
	for k, ch := range po.chs {
		if ch == nil {
			ch = sp.Output(InstancePlace{Ctx: j.env.Ctx, Job: j.spec.ID, Op: op, Instance: k, N: p.N, Fail: j.fail})
		}
		out.chs = append(out.chs, ch)
	}
	return out, nil
}

// placedOut is the start of a placed operator on the coordinator: per
// instance its output, nil for an instance on another node; the meters
// of those here; its fragment.
type placedOut struct {
	chs    []<-chan stream.Message
	meters []int
	frag   int
}

// startPlacedOp starts placed operator p (number op) on the coordinator
// (placedOut); rt.mu is held.
func (j *Job) startPlacedOp(p *stream.Parallel, op int, sp SplitPlacement, ri *resumeInputs) (placedOut, error) {
	if scans, chains := j.rt.placedChains(p); scans != nil {
		return j.startPlacedSplits(p, op, sp, scans, chains, ri)
	}
	if lower, chains := j.rt.upperInputs(p); lower != nil {
		return j.startUpper(p, op, sp, lower, chains, ri) // upper.go
	}
	return placedOut{}, internalf("dataflow: %s is not placed on the nodes", p.Explain())
}

// startPlacedSplits is startPlacedOp for an operator placed over its
// source splits (placedChains): the local splits run here with their
// chains and exchanges, the others through remote roots; the local
// instances merge their senders; rt.mu is held.
func (j *Job) startPlacedSplits(p *stream.Parallel, op int, sp SplitPlacement, scans []*stream.Scan, chains [][]stream.Node, ri *resumeInputs) (placedOut, error) {
	n := p.N
	j.rt.cfg.Logf("materialized view %s: operator %d (%s) runs on the nodes with its %d source splits, exchanges N×N", j.spec.Name, op, OperatorName(p.Input), n)
	frag := j.newFragment()
	senders := newSenders(n, len(scans)) // [instance][input] -> one channel per sender
	for i, s := range scans {
		ifrag := j.newFragment()
		for s2 := range n {
			var src sourceRun
			if ri != nil {
				src = ri.srcs[ri.ns]
				ri.ns++
			}
			r, w := j.newSplitRoot(s, s2, n, ri)
			x := SplitStream{Ctx: j.env.Ctx, Job: j.spec.ID, Op: op, Input: i, Split: s2, Instance: -1, N: n, Fail: j.fail}
			if !sp.Local(j.spec.ID, s2, n) {
				j.startRemoteRoot(r, sp, x, src.start, w)
				for k := range n {
					if sp.Local(j.spec.ID, k, n) {
						x.Instance = k
						senders[k][i] = append(senders[k][i], sp.Recv(x))
					}
				}
				continue
			}
			if ri == nil {
				var err error
				if src, err = j.openSplit(s, nil, s2, n); err != nil {
					return placedOut{}, err
				}
			}
			outs := j.startSender(r, src, w, s, chains[i], p.Keys[i], p.KeyTypes, s2, n, ifrag)
			for k := range n {
				if sp.Local(j.spec.ID, k, n) {
					senders[k][i] = append(senders[k][i], outs[k])
					continue
				}
				x.Instance = k
				sp.Send(x, outs[k])
			}
		}
	}
	return j.startPlacedInstances(p, op, sp, frag, senders, false), nil
}

// startPlacedInstances starts the instances of placed operator p (number
// op) that run here, each over its senders per input (merged; direct:
// the one sender, instance k's of the operator below), and returns their
// outputs (placedOut; sp.Elsewhere is told of those on other nodes);
// rt.mu is held.
func (j *Job) startPlacedInstances(p *stream.Parallel, op int, sp SplitPlacement, frag int, senders [][][]<-chan stream.Message, direct bool) placedOut {
	n := p.N
	out := placedOut{chs: make([]<-chan stream.Message, n), frag: frag}
	for k := range n {
		if !sp.Local(j.spec.ID, k, n) {
			sp.Elsewhere(InstancePlace{Ctx: j.env.Ctx, Job: j.spec.ID, Op: op, Instance: k, N: n, Fail: j.fail})
			continue
		}
		var ins []<-chan stream.Message
		for _, chs := range senders[k] {
			if direct && len(chs) == 1 {
				ins = append(ins, chs[0])
				continue
			}
			ins = append(ins, j.gather(flow{chs: chs}, frag, k, n))
		}
		var ck stream.Checkpointer
		if c, ok := j.env.Checkpoints.(*jobCkpt); ok {
			ck = &instanceCkpt{c: c, p: p, k: k, id: instanceID(c.ids[p.Input], k)}
		}
		out.chs[k] = j.startMetered(p.Input, nil, k, n, frag, j.env.Instance(ck), ins)
		out.meters = append(out.meters, j.outMeters...)
	}
	return out
}

// startSender starts split reader s of n (root r, opened as src), the
// fused chain above it and its hash exchange by keys, and returns the
// exchange's n outputs; rt.mu is held (or, on a worker, the caller owns
// j).
func (j *Job) startSender(r *root, src sourceRun, w *wmTracker, s *stream.Scan, chain []stream.Node, keys []int, ts []types.T, sp, n, frag int) []<-chan stream.Message {
	src.split = true
	out := make(chan stream.Message, stream.ChannelSize)
	j.wg.Add(1)
	j.labeled(frag, sp, n, RoleReader, s.Name, func() { go j.readSource(r, src, w, out) })
	var ch <-chan stream.Message = out
	for _, op := range chain {
		ch = j.startMetered(op, nil, sp, n, frag, j.env, []<-chan stream.Message{ch})
	}
	var outs []<-chan stream.Message
	j.labeled(frag, sp, n, RoleExchange, "", func() { outs = j.exchange(ch, keys, ts, n, nil, nil) })
	return outs
}

// Control messages of a placed split: one-row records of ctlSchema.
// Coordinator to the split's node: the start (flags ctlStart: the
// position, nil for the input's start, and the watermark), then one per
// barrier request. The node to the coordinator: one per barrier the
// reader sent, with its position and watermark at the cut.
const (
	ctlCheckpoint = 1 << iota
	ctlFlush
	ctlStart
	ctlHasWM
	ctlResumable
)

var ctlSchema = arrow.NewSchema([]arrow.Field{
	{Name: "epoch", Type: arrow.PrimitiveTypes.Uint64},
	{Name: "flags", Type: arrow.PrimitiveTypes.Uint8},
	{Name: "pos", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "wm", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// ctlRec is one control message.
type ctlRec struct {
	epoch uint64
	flags uint8
	pos   []byte
	wm    int64
}

func (c ctlRec) msg() stream.Message {
	b := array.NewRecordBuilder(memory.DefaultAllocator, ctlSchema)
	defer b.Release()
	b.Field(0).(*array.Uint64Builder).Append(c.epoch)
	b.Field(1).(*array.Uint8Builder).Append(c.flags)
	if c.pos == nil {
		b.Field(2).AppendNull()
	} else {
		b.Field(2).(*array.BinaryBuilder).Append(c.pos)
	}
	b.Field(3).(*array.Int64Builder).Append(c.wm)
	return stream.ChunkMsg(&stream.Chunk{Rec: b.NewRecordBatch()})
}

func parseCtl(m stream.Message) (ctlRec, error) {
	if m.Kind != stream.KindChunk || m.Chunk == nil || m.Chunk.Rec == nil || m.Chunk.Rec.NumRows() != 1 ||
		!m.Chunk.Rec.Schema().Equal(ctlSchema) {
		return ctlRec{}, internalf("dataflow: a split's control stream carried an unexpected message (kind %d)", m.Kind)
	}
	rec := m.Chunk.Rec
	c := ctlRec{
		epoch: rec.Column(0).(*array.Uint64).Value(0),
		flags: rec.Column(1).(*array.Uint8).Value(0),
		wm:    rec.Column(3).(*array.Int64).Value(0),
	}
	if p := rec.Column(2).(*array.Binary); !p.IsNull(0) {
		c.pos = append([]byte{}, p.Value(0)...)
	}
	return c, nil
}

// wmOf is the flags and value of w's watermark for a control message.
func wmOf(w *wmTracker) (uint8, int64) {
	if w == nil || w.cur == math.MinInt64 {
		return 0, math.MinInt64
	}
	return ctlHasWM, w.cur
}

// startRemoteRoot runs root r of a split read on another node (x): the
// start, then every barrier requested of r, go to the node; the reports
// coming back are recorded as r's cuts. rt.mu is held.
func (j *Job) startRemoteRoot(r *root, sp SplitPlacement, x SplitStream, start []byte, w *wmTracker) {
	r.remote = true
	ctl := make(chan stream.Message, stream.ChannelSize)
	reports := sp.Control(x, ctl)
	f, wm := wmOf(w)
	ctl <- ctlRec{flags: ctlStart | f, pos: start, wm: wm}.msg()
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		defer close(ctl)
		for {
			select {
			case <-j.env.Ctx.Done():
				return
			case <-r.wake:
				for _, b := range r.take() {
					var fl uint8
					if b.ckpt {
						fl |= ctlCheckpoint
					}
					if b.flush {
						fl |= ctlFlush
					}
					if !j.send(ctl, ctlRec{epoch: b.epoch, flags: fl}.msg()) {
						return
					}
				}
			case m, ok := <-reports:
				if !ok {
					reports = nil // the reader's node ended its reports: the job fails or ends
					continue
				}
				c, err := parseCtl(m)
				if err != nil {
					j.fail(err)
					return
				}
				j.recordRemoteCut(r, c)
			}
		}
	}()
}

// recordRemoteCut records the cut a remote split reader reported.
func (j *Job) recordRemoteCut(r *root, c ctlRec) {
	resumable := c.flags&ctlResumable != 0
	rm := rootMeta{Source: r.source, Pos: c.pos, Resumable: resumable, Split: r.split, Splits: r.splits}
	if resumable {
		j.recordCutPos(r, c.epoch, cutPos{pos: c.pos})
	}
	if c.flags&ctlCheckpoint != 0 {
		if c.flags&ctlHasWM != 0 {
			rm.WM, rm.HasW = c.wm, true
		}
		j.rt.recordRoot(c.epoch, r, rm)
	}
	r.reported.Store(c.epoch)
	j.rt.progressed()
}

// reportedAll says whether every remote root of j reported epoch (or j
// has none).
func (j *Job) reportedAll(epoch uint64) bool {
	for _, r := range j.roots {
		if r.remote && r.reported.Load() < epoch {
			return false
		}
	}
	return true
}

// ServePlaced (a node other than the coordinator) runs its part of
// parallel operator op of job's plan when the coordinator places it on
// the nodes (PlacedOp), with the placed operators under it (upper.go):
// the splits sp says are local, each with its fused chain and exchange,
// its root driven by the coordinator's control stream, the local
// instances, each over the merge of its N senders, and the exchanges
// between them (ck, if not nil, checkpoints each instance). It returns
// op's local instances' outputs by instance. env is the node's Env of
// the job: a failure fails it; the streams between the nodes live in
// ctx.
func (rt *Runtime) ServePlaced(ctx context.Context, env *stream.Env, job uint32, name string, plan stream.Node, op int, sp SplitPlacement, ck InstanceCheckpoints) (map[int]<-chan stream.Message, error) {
	ps := ParallelNodes(plan)
	if op < 0 || op >= len(ps) {
		return nil, internalf("dataflow: the plan has %d parallel operators, not %d", len(ps), op+1)
	}
	j := &Job{rt: rt, spec: JobSpec{ID: job, Name: name, Plan: plan}, env: env}
	outs, err := j.servePlacedOp(ctx, ps, op, sp, ck)
	if err != nil {
		return nil, err
	}
	res := map[int]<-chan stream.Message{}
	for k, ch := range outs {
		if ch != nil {
			res[k] = ch
		}
	}
	return res, nil
}

// servePlacedOp (a node) starts its part of placed operator ps[op] and
// returns its instances' outputs, nil for those on other nodes.
func (j *Job) servePlacedOp(ctx context.Context, ps []*stream.Parallel, op int, sp SplitPlacement, ck InstanceCheckpoints) ([]<-chan stream.Message, error) {
	p := ps[op]
	if lower, chains := j.rt.upperInputs(p); lower != nil {
		return j.serveUpper(ctx, ps, op, sp, ck, lower, chains) // upper.go
	}
	scans, chains := j.rt.placedChains(p)
	if scans == nil {
		return nil, internalf("dataflow: %s is not placed on the nodes", p.Explain())
	}
	job, n := j.spec.ID, p.N
	senders := newSenders(n, len(scans))
	for i, s := range scans {
		for s2 := range n {
			x := SplitStream{Ctx: ctx, Job: job, Op: op, Input: i, Split: s2, Instance: -1, N: n, Fail: j.env.Fail}
			if !sp.Local(job, s2, n) {
				for k := range n {
					if sp.Local(job, k, n) {
						x.Instance = k
						senders[k][i] = append(senders[k][i], sp.Recv(x))
					}
				}
				continue
			}
			outs := j.startPlacedSplit(sp, x, s, chains[i], p.Keys[i], p.KeyTypes)
			for k := range n {
				if sp.Local(job, k, n) {
					senders[k][i] = append(senders[k][i], outs[k])
					continue
				}
				x.Instance = k
				sp.Send(x, outs[k])
			}
		}
	}
	return j.serveInstances(p, op, sp, ck, senders, false), nil
}

// serveInstances (a node) starts the local instances of placed operator
// p (number op), each over its senders per input (merged; direct: the
// one sender, instance k's of the operator below), and returns their
// outputs by instance, nil for those on other nodes.
func (j *Job) serveInstances(p *stream.Parallel, op int, sp SplitPlacement, ck InstanceCheckpoints, senders [][][]<-chan stream.Message, direct bool) []<-chan stream.Message {
	n := p.N
	res := make([]<-chan stream.Message, n)
	for k := range n {
		if !sp.Local(j.spec.ID, k, n) {
			continue
		}
		var ins []<-chan stream.Message
		for _, chs := range senders[k] {
			if direct && len(chs) == 1 {
				ins = append(ins, chs[0])
				continue
			}
			ins = append(ins, j.merge(chs))
		}
		var c stream.Checkpointer
		if ck != nil {
			c = ck.Checkpointer(op, k)
		}
		res[k] = p.Input.Start(j.env.Instance(c), ins)
		if ck != nil {
			res[k] = ck.Watch(op, k, res[k])
		}
	}
	return res
}

// startPlacedSplit (a node) starts split x.Split of source s with its
// chain and exchange: the reader opens once the coordinator's start
// message gives its position, and takes its barriers from the control
// stream; its cuts go back as reports.
func (j *Job) startPlacedSplit(sp SplitPlacement, x SplitStream, s *stream.Scan, chain []stream.Node, keys []int, ts []types.T) []<-chan stream.Message {
	reports := make(chan stream.Message, stream.ChannelSize)
	ctl := sp.Control(x, reports)
	r := newRoot()
	r.source, r.split, r.splits = s.Rel, x.Split, x.N
	r.report = func(b barrierReq, pos []byte, resumable bool, w *wmTracker) {
		fl, wm := wmOf(w)
		if b.ckpt {
			fl |= ctlCheckpoint
		}
		if resumable {
			fl |= ctlResumable
		}
		j.send(reports, ctlRec{epoch: b.epoch, flags: fl, pos: pos, wm: wm}.msg())
	}
	w := j.newWM(s)
	out := make(chan stream.Message, stream.ChannelSize)
	j.wg.Add(1)
	go func() {
		// the start: the position and watermark to begin at
		var m stream.Message
		var ok bool
		select {
		case m, ok = <-ctl:
		case <-j.env.Ctx.Done():
		}
		c, err := parseCtl(m)
		if err == nil && (!ok || c.flags&ctlStart == 0) {
			err = internalf("dataflow: split %d of %s: no start on its control stream", x.Split, s.Name)
		}
		if err != nil {
			if j.env.Ctx.Err() == nil {
				j.fail(err)
			}
			close(out)
			j.wg.Done()
			return
		}
		if c.flags&ctlHasWM != 0 {
			w.restore(c.wm, nil)
		}
		src, err := j.openSplit(s, c.pos, x.Split, x.N)
		if err != nil {
			j.fail(fmt.Errorf("open split %d of %s: %w", x.Split, s.Name, err))
			close(out)
			j.wg.Done()
			return
		}
		src.split = true
		go j.forwardBarriers(r, ctl)
		j.readSource(r, src, w, out) // calls j.wg.Done
	}()
	var ch <-chan stream.Message = out
	for _, op := range chain {
		ch = op.Start(j.env, []<-chan stream.Message{ch})
	}
	return j.exchange(ch, keys, ts, x.N, nil, nil)
}

// forwardBarriers requests of r every barrier the control stream
// carries.
func (j *Job) forwardBarriers(r *root, ctl <-chan stream.Message) {
	for m := range ctl {
		c, err := parseCtl(m)
		if err != nil {
			j.fail(err)
			return
		}
		r.request(barrierReq{epoch: c.epoch, ckpt: c.flags&ctlCheckpoint != 0, flush: c.flags&ctlFlush != 0})
	}
}

// PlacedOp says whether operator op of plan runs placed on the nodes
// (over its source splits, or above placed operators: upper.go) when
// the runtime's Placement places the job's splits.
func (rt *Runtime) PlacedOp(plan stream.Node, op int) bool {
	ps := ParallelNodes(plan)
	return op >= 0 && op < len(ps) && rt.placed(ps[op])
}
