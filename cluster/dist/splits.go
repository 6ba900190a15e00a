package dist

import (
	"context"
	"fmt"
	"time"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/dataflow/netx"
	"github.com/streamsql/streamsql/exec/stream"
)

// Split readers on the nodes (docs/contributing/cluster.md, "Source
// splits on the nodes"): with Runner.Splits set on every node, an
// operator that dataflow places whole (dataflow.Runtime.PlacedOp: every
// input a split source under stateless operators) runs split s, its
// chain and its hash exchange on the node of instance s, and the
// exchanges send to every instance directly. Streams, per assignment
// generation:
//
//	g<gen>/<job>/p<op>/#<k>/in<i>/s<s>   sender s -> instance k (between the nodes that run them)
//	g<gen>/<job>/p<op>/s<s>/in<i>/ctl    coordinator -> split s's node: start, barriers
//	g<gen>/<job>/p<op>/s<s>/in<i>/pos    split s's node -> coordinator: the cuts' positions
//	g<gen>/<job>/p<op>/#<k>/out          instance k -> coordinator (as for placed instances): op a placed root only
//
// An operator placed above placed ones (dataflow's upper.go) uses the
// data streams with its own op and the sender instance s of the
// operator under it as s.

// SplitStreamID names stream what of x in generation gen.
func SplitStreamID(gen uint64, x dataflow.SplitStream, what string) string {
	if what == "data" {
		return fmt.Sprintf("g%d/%d/p%d/#%d/in%d/s%d", gen, x.Job, x.Op, x.Instance, x.Input, x.Split)
	}
	return fmt.Sprintf("g%d/%d/p%d/s%d/in%d/%s", gen, x.Job, x.Op, x.Split, x.Input, what)
}

// splitNet is one node's dataflow.SplitPlacement for the jobs of one
// assignment: on the coordinator (coord true) or on another node.
type splitNet struct {
	self  string
	a     cluster.Assignment
	srv   *netx.Server
	opt   netx.Options // Generation is a's
	coord bool
	// onOutput (the coordinator) notes a placed instance (Runner.placed).
	onOutput func(in dataflow.InstancePlace)
	logf     func(string, ...any) // nil: no log
}

func (s *splitNet) PlaceSplits(uint32) bool { return true }

func (s *splitNet) Local(_ uint32, k, n int) bool { return s.a.InstanceNode(k, n).NodeID == s.self }

func (s *splitNet) Send(x dataflow.SplitStream, ch <-chan stream.Message) {
	node := s.a.InstanceNode(x.Instance, x.N)
	netx.Outbound(x.Ctx, node.Exchange, SplitStreamID(s.a.Generation, x, "data"), s.opt, ch, x.Fail)
}

func (s *splitNet) Recv(x dataflow.SplitStream) <-chan stream.Message {
	return s.srv.Inbound(x.Ctx, SplitStreamID(s.a.Generation, x, "data"), x.Fail)
}

func (s *splitNet) Control(x dataflow.SplitStream, out <-chan stream.Message) <-chan stream.Message {
	if s.coord {
		node := s.a.InstanceNode(x.Split, x.N)
		netx.Outbound(x.Ctx, node.Exchange, SplitStreamID(s.a.Generation, x, "ctl"), s.opt, out, x.Fail)
		return s.srv.Inbound(x.Ctx, SplitStreamID(s.a.Generation, x, "pos"), x.Fail)
	}
	var coord string
	for _, n := range s.a.Nodes {
		if n.NodeID == s.a.Coordinator {
			coord = n.Exchange
		}
	}
	netx.Outbound(x.Ctx, coord, SplitStreamID(s.a.Generation, x, "pos"), s.opt, out, x.Fail)
	return s.srv.Inbound(x.Ctx, SplitStreamID(s.a.Generation, x, "ctl"), x.Fail)
}

func (s *splitNet) Output(in dataflow.InstancePlace) <-chan stream.Message {
	s.srv.SetGeneration(s.a.Generation)
	s.Elsewhere(in)
	if s.logf != nil {
		s.logf("cluster: job %d: instance %d of operator %d sends its output to the coordinator", in.Job, in.Instance, in.Op)
	}
	return s.srv.Inbound(in.Ctx, StreamID(s.a.Generation, in.Job, in.Op, in.Instance, "out"), in.Fail)
}

func (s *splitNet) Elsewhere(in dataflow.InstancePlace) {
	if s.onOutput != nil {
		s.onOutput(in)
	}
}

// PlaceSplits implements dataflow.SplitPlacement for the coordinator: a
// view placed by PlaceView (or restarted) places its splits when the
// runner has Splits.
func (r *Runner) PlaceSplits(job uint32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.assigns[job]
	return ok && r.Splits != nil
}

// coordNet is the coordinator's splitNet for job.
func (r *Runner) coordNet(job uint32) *splitNet {
	r.mu.Lock()
	a := r.assigns[job]
	r.mu.Unlock()
	opt := r.opt
	opt.Generation = a.Generation
	r.srv.SetGeneration(a.Generation)
	return &splitNet{self: r.node.ID(), a: a, srv: r.srv, opt: opt, coord: true, logf: r.logf, onOutput: func(in dataflow.InstancePlace) {
		r.mu.Lock()
		r.placed[instanceName(in.Job, in.Op, in.Instance)] = time.Now()
		r.mu.Unlock()
	}}
}

// Local implements dataflow.SplitPlacement.
func (r *Runner) Local(job uint32, k, n int) bool { return r.coordNet(job).Local(job, k, n) }

// Send implements dataflow.SplitPlacement.
func (r *Runner) Send(x dataflow.SplitStream, ch <-chan stream.Message) {
	r.coordNet(x.Job).Send(x, ch)
}

// Recv implements dataflow.SplitPlacement.
func (r *Runner) Recv(x dataflow.SplitStream) <-chan stream.Message { return r.coordNet(x.Job).Recv(x) }

// Control implements dataflow.SplitPlacement.
func (r *Runner) Control(x dataflow.SplitStream, out <-chan stream.Message) <-chan stream.Message {
	return r.coordNet(x.Job).Control(x, out)
}

// Output implements dataflow.SplitPlacement.
func (r *Runner) Output(in dataflow.InstancePlace) <-chan stream.Message {
	return r.coordNet(in.Job).Output(in)
}

// Elsewhere implements dataflow.SplitPlacement: the commit waits for
// the instance's reports.
func (r *Runner) Elsewhere(in dataflow.InstancePlace) { r.coordNet(in.Job).Elsewhere(in) }

// servePlaced (a node other than the coordinator) starts its part of
// operator op of job, a placed root (dataflow.Runtime.PlacedRoot), with
// the placed operators under it, and sends its instances' outputs to
// the coordinator; cks gives each local instance its checkpointer (none
// when absent).
func servePlaced(ctx context.Context, env *stream.Env, rt *dataflow.Runtime, self string, a cluster.Assignment, srv *netx.Server, opt netx.Options,
	coord string, job uint32, plan stream.Node, op int, cks placedCkpts) error {
	net := &splitNet{self: self, a: a, srv: srv, opt: opt}
	// The streams live in ctx (canceled with the failure as its cause).
	outs, err := rt.ServePlaced(ctx, env, job, fmt.Sprintf("job %d", job), plan, op, net, placedHooks{ctx: ctx, cks: cks})
	if err != nil {
		return err
	}
	for k, out := range outs {
		netx.Outbound(ctx, coord, StreamID(a.Generation, job, op, k, "out"), opt, out, env.Fail)
	}
	return nil
}

// placedCkpts are a node's checkpointers of the placed instances it
// runs, by operator and instance.
type placedCkpts map[[2]int]*instanceCkpt

// placedHooks is the dataflow.InstanceCheckpoints of a node's placed
// instances: each checkpoints with its instanceCkpt, if any, and
// reports once a checkpoint barrier has left it (watchBarriers).
type placedHooks struct {
	ctx context.Context
	cks placedCkpts
}

func (h placedHooks) Checkpointer(op, k int) stream.Checkpointer {
	if c := h.cks[[2]int{op, k}]; c != nil {
		return c
	}
	return nil
}

func (h placedHooks) Watch(op, k int, out <-chan stream.Message) <-chan stream.Message {
	if c := h.cks[[2]int{op, k}]; c != nil {
		return c.watchBarriers(h.ctx, out)
	}
	return out
}
