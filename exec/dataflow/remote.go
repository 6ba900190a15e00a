package dataflow

import (
	"context"
	"fmt"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
)

// Instances on other nodes (design: docs/contributing/cluster.md,
// "Placement"). A Placement, given by Config.Placement, may take an
// instance of a parallel operator away from this process: the runtime
// then hands it the instance's share of every input (the hash exchanges'
// outputs for that instance) and merges, in its place, the channel the
// Placement returns (the instance's output as it comes back from the node
// that runs it). On that node RunInstance starts the operator over the
// streams it receives. Barriers and watermarks travel in-band both ways,
// so the merge aligns a remote instance's barriers as a local one's.

// A Placement decides where the instances of a job's parallel operators
// run. Place is called while the job starts (the runtime's lock held: it
// must not block on the network), once per instance of every parallel
// operator. It returns ok false to run the instance here. With ok true it
// owns ins (it must read each to its end or until in.Ctx ends) and out
// is the instance's output; a failure is reported with in.Fail.
type Placement interface {
	Place(in InstancePlace, ins []<-chan stream.Message) (out <-chan stream.Message, ok bool)
}

// InstancePlace names one instance of a parallel operator. Job, Op and
// Instance are the same in every process that has the same plan.
type InstancePlace struct {
	Ctx      context.Context // ends when the job does
	Job      uint32          // JobSpec.ID
	Op       int             // the operator's index in ParallelNodes(plan)
	Instance int             // 0..N-1
	N        int
	Fail     func(error) // fails the job
}

// place offers instance k of p to the runtime's Placement; rt.mu is held.
func (j *Job) place(p *stream.Parallel, k int, ins []<-chan stream.Message) (<-chan stream.Message, bool, error) {
	pl := j.rt.cfg.Placement
	if pl == nil {
		return nil, false, nil
	}
	op := j.opIndex(p)
	if op < 0 {
		return nil, false, internalf("dataflow: %s is not in the plan of %s", p.Explain(), j.spec.Name)
	}
	if j.rt.cfg.Checkpoints != nil && !j.rt.cfg.PlacedCheckpoints {
		// Refused before anything is placed: the checkpoint would miss
		// the state of the instances that run elsewhere.
		return nil, false, pgerr.New(pgerr.FeatureNotSupported,
			"checkpoints of operator instances that run on other nodes are not built yet (issue 19)")
	}
	out, ok := pl.Place(InstancePlace{Ctx: j.env.Ctx, Job: j.spec.ID, Op: op, Instance: k, N: max(p.N, 1), Fail: j.fail}, ins)
	return out, ok, nil
}

// opIndex is p's index in ParallelNodes of the job's plan (-1: none).
func (j *Job) opIndex(p *stream.Parallel) int {
	for i, q := range ParallelNodes(j.spec.Plan) {
		if q == p {
			return i
		}
	}
	return -1
}

// ParallelNodes lists the Parallel nodes of plan in preorder: the index
// of one is its Op in InstancePlace, the same on every node.
func ParallelNodes(plan stream.Node) []*stream.Parallel {
	var out []*stream.Parallel
	var walk func(n stream.Node)
	walk = func(n stream.Node) {
		if p, ok := n.(*stream.Parallel); ok {
			out = append(out, p)
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(plan)
	return out
}

// RunInstance starts instance k of the parallel operator number op of
// plan (ParallelNodes) over ins, its share of each of the operator's
// inputs, in env (a worker's Env for the job: its failure is the
// instance's), and returns the instance's output. ck, if not nil, is the
// instance's Checkpointer (its operators snapshot into it at checkpoint
// barriers and restore from it at start).
func RunInstance(env *stream.Env, plan stream.Node, op, k int, ins []<-chan stream.Message, ck stream.Checkpointer) (<-chan stream.Message, error) {
	ps := ParallelNodes(plan)
	if op < 0 || op >= len(ps) {
		return nil, internalf("dataflow: the plan has %d parallel operators, not %d", len(ps), op+1)
	}
	p := ps[op]
	if k < 0 || k >= max(p.N, 1) {
		return nil, internalf("dataflow: %s has no instance %d", p.Explain(), k)
	}
	if n := len(p.Input.Inputs()); n != len(ins) {
		return nil, internalf("dataflow: %s has %d inputs, %d given", p.Input.Explain(), n, len(ins))
	}
	return p.Input.Start(env.Instance(ck), ins), nil
}

// InstanceStateID is the checkpoint id under which a job's own
// checkpoint keeps the state of instance k of its parallel operator op
// (ParallelNodes) when the instance runs in this process (parallel.go's
// instanceCkpt): a cluster restore moves an instance's state between a
// node's uploads and the coordinator's checkpoint by it. "" when plan has
// no such operator.
func InstanceStateID(plan stream.Node, job uint32, op, k int) string {
	ps := ParallelNodes(plan)
	if op < 0 || op >= len(ps) {
		return ""
	}
	i, at := 0, -1
	var walk func(n stream.Node)
	walk = func(n stream.Node) {
		if n == ps[op].Input && at < 0 {
			at = i
		}
		i++
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(plan)
	if at < 0 {
		return ""
	}
	return instanceID(fmt.Sprintf("%d/%d", job, at), k)
}
