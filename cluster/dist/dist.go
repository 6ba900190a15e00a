// Package dist runs a job's parallel operators spread over the nodes of
// a cluster: the coordinator's runtime places each instance on the node
// the assignment (cluster.Assignment, in etcd) gives it, and each worker
// runs its instances, the streams between them crossing the network
// (exec/dataflow/netx). Design: docs/contributing/cluster.md, "Placement".
//
// Streams of one instance, named by job, operator (its index among the
// plan's Parallel nodes, dataflow.ParallelNodes) and instance:
//
//	g<gen>/<job>/p<op>/#<k>/in<i>   coordinator -> worker: input i's share (the hash exchange's output)
//	g<gen>/<job>/p<op>/#<k>/out     worker -> coordinator: the instance's output, into the merge
//
// Every stream carries the assignment's generation, also in its name (a
// view restarted with a new assignment never meets the streams of its
// previous run); a node refuses a stream of another generation. Sources, the exchanges, the merges and
// the view stay on the coordinator; only keyed operator instances move,
// unless Runner.Splits places a view's split sources and the keyed
// operators above them on the nodes (splits.go).
// In streamsqld a Runner (runner.go) drives this from the statement log
// (views on a cluster) and checkpoints the workers' instances to the
// object store (ckpt.go, commit.go); a view restarted after a node's
// loss runs its instances restored from the committed checkpoint
// (restore.go, restart.go).
package dist

import (
	"context"
	"fmt"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/dataflow/netx"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
)

// StreamID names one stream of instance k of operator op of job in
// assignment generation gen.
func StreamID(gen uint64, job uint32, op, k int, what string) string {
	return fmt.Sprintf("g%d/%d/p%d/#%d/%s", gen, job, op, k, what)
}

// Placement is the coordinator's dataflow.Placement: an instance whose
// node in Assign is not Self runs there. Immutable once in use. The
// coordinator sets its Server's generation to Assign's as soon as it has
// written the assignment (workers may send their outputs before the job
// starts here; a stream of another generation is refused).
type Placement struct {
	Self   string
	Assign cluster.Assignment
	Server *netx.Server // this node's exchange server: outputs come back here
	Opt    netx.Options // Generation is set from Assign
}

func (p *Placement) opt() netx.Options {
	o := p.Opt
	o.Generation = p.Assign.Generation
	return o
}

// Place implements dataflow.Placement.
func (p *Placement) Place(in dataflow.InstancePlace, ins []<-chan stream.Message) (<-chan stream.Message, bool) {
	node := p.Assign.InstanceNode(in.Instance, in.N)
	if node.NodeID == p.Self {
		return nil, false
	}
	opt := p.opt()
	p.Server.SetGeneration(opt.Generation)
	for i, ch := range ins {
		netx.Outbound(in.Ctx, node.Exchange, StreamID(opt.Generation, in.Job, in.Op, in.Instance, fmt.Sprintf("in%d", i)), opt, ch, in.Fail)
	}
	return p.Server.Inbound(in.Ctx, StreamID(opt.Generation, in.Job, in.Op, in.Instance, "out"), in.Fail), true
}

// Serve runs, on worker self, the instances of job's plan that the
// assignment gives it: each receives its inputs from the coordinator and
// sends its output back. It returns the job's Env on this node (its
// context ends at the first failure, whose error Err reports) or an error
// when the assignment does not let it run.
func Serve(ctx context.Context, self string, a cluster.Assignment, srv *netx.Server, job uint32, plan stream.Node, opt netx.Options) (*stream.Env, error) {
	return serve(ctx, self, a, srv, job, plan, opt, nil, nil)
}

// serve is Serve with r's checkpoints of the instances when r is not nil
// and has an object store, each instance restored from rs when it is not
// nil.
func serve(ctx context.Context, self string, a cluster.Assignment, srv *netx.Server, job uint32, plan stream.Node, opt netx.Options, r *Runner, rs *Restore) (*stream.Env, error) {
	var coord string
	for _, n := range a.Nodes {
		if n.NodeID == a.Coordinator {
			coord = n.Exchange
		}
	}
	if coord == "" {
		return nil, pgerr.New(pgerr.ConnectionException, "assignment %d: coordinator %s has no exchange address", a.Generation, a.Coordinator)
	}
	opt.Generation = a.Generation
	srv.SetGeneration(a.Generation)
	// The streams live in sctx, canceled with the instance's failure as
	// its cause once env fails: the coordinator's job then fails with
	// the worker's error (and its SQLSTATE), not a bare cancel.
	sctx, cancel := context.WithCancelCause(ctx)
	env := stream.NewEnv(sctx, expr.Context{})
	go func() {
		<-env.Ctx.Done()
		cancel(env.Err())
	}()
	placed := r != nil && r.Splits != nil
	cks := placedCkpts{}
	for op, p := range dataflow.ParallelNodes(plan) {
		n := max(p.N, 1)
		if placed && r.Splits.PlacedOp(plan, op) { // splits.go
			lo, hi := a.Instances(self, n)
			for k := lo; k < hi; k++ {
				ck, err := serveCkpt(ctx, r, rs, plan, job, op, k, p)
				if err != nil {
					env.Fail(err)
					return nil, err
				}
				cks[[2]int{op, k}] = ck
			}
		}
	}
	for op, p := range dataflow.ParallelNodes(plan) {
		n := max(p.N, 1)
		if placed && r.Splits.PlacedOp(plan, op) {
			lo, hi := a.Instances(self, n)
			if r.Splits.PlacedRoot(plan, op) {
				if err := servePlaced(sctx, env, r.Splits, self, a, srv, opt, coord, job, plan, op, cks); err != nil {
					env.Fail(err)
					return nil, err
				}
			}
			to := "the operator above on the nodes"
			if r.Splits.PlacedRoot(plan, op) {
				to = "the coordinator"
			}
			if len(dataflow.ParallelNodes(p.Input)) == 0 { // over its source splits
				r.logf("cluster: job %d operator %d: this node reads splits [%d,%d) of %d, its exchanges sending to every node's instances directly; output to %s", job, op, lo, hi, n, to)
			} else {
				r.logf("cluster: job %d operator %d: this node runs instances [%d,%d) of %d fed by every node's exchanges directly; output to %s", job, op, lo, hi, n, to)
			}
			continue
		}
		lo, hi := a.Instances(self, n)
		for k := lo; k < hi; k++ {
			var ins []<-chan stream.Message
			for i := range p.Input.Inputs() {
				ins = append(ins, srv.Inbound(sctx, StreamID(a.Generation, job, op, k, fmt.Sprintf("in%d", i)), env.Fail))
			}
			ck, err := serveCkpt(ctx, r, rs, plan, job, op, k, p)
			if err != nil {
				env.Fail(err)
				return nil, err
			}
			var sck stream.Checkpointer
			if ck != nil {
				sck = ck
			}
			out, err := dataflow.RunInstance(env, plan, op, k, ins, sck)
			if err != nil {
				env.Fail(err)
				return nil, err
			}
			if ck != nil {
				out = ck.watchBarriers(sctx, out)
			}
			netx.Outbound(sctx, coord, StreamID(a.Generation, job, op, k, "out"), opt, out, env.Fail)
		}
	}
	return env, nil
}

// serveCkpt is the checkpointer of instance k of operator op (p) of job
// on a worker with an object store (nil without), restored from rs when
// it is not nil.
func serveCkpt(ctx context.Context, r *Runner, rs *Restore, plan stream.Node, job uint32, op, k int, p *stream.Parallel) (*instanceCkpt, error) {
	if r == nil || r.store == nil {
		return nil, nil
	}
	ck := newInstanceCkpt(r, job, op, k, p)
	if rs != nil {
		st, err := rs.InstanceState(ctx, plan, job, op, k)
		if err != nil {
			return nil, fmt.Errorf("cluster: restore instance %d of operator %d of job %d from checkpoint %d: %w", k, op, job, rs.Epoch(), err)
		}
		ck.restored = st
	}
	return ck, nil
}
