package dataflow

import (
	"context"
	"runtime/pprof"
	"strconv"
)

// Goroutine labels (docs/contributing/parallel.md, "Where the CPU goes").
// Every goroutine a job starts carries pprof labels naming the job, the
// fragment it belongs to, its instance in that fragment, its role and (for
// operators and readers) the operator. They are set once, when the
// goroutine is started (pprof.Do around the start: a goroutine inherits
// its creator's labels), never per batch, so they cost nothing while the
// job runs; a CPU profile then attributes every sample to the instance
// that spent it (bench's --instances report; `go tool pprof -tagfocus`).
//
// Fragments are numbered per job in the order they start: each source
// scan (its readers), each parallel operator (its N instances, with the
// merges that feed each instance), each single operator (with the merge
// of its inputs), and the job's output (the last gather, the view's
// writer or the sink). A fused stateless operator belongs to the fragment
// of its input. An exchange belongs to the sending instance.
const (
	LabelJob      = "job"
	LabelFragment = "fragment"
	LabelInstance = "instance"
	LabelWidth    = "width" // the fragment's instances
	LabelRole     = "role"
	LabelOperator = "operator"
)

// Roles of LabelRole.
const (
	RoleReader      = "reader"      // a source, table or view reader
	RoleOperator    = "operator"    // an operator's goroutine(s)
	RoleMeter       = "meter"       // the per-operator counting goroutine (opstats.go)
	RoleExchange    = "exchange"    // a hash exchange's sender (parallel.go)
	RoleMerge       = "merge"       // a gather or an exchange's fan-in (merge.go)
	RoleWriter      = "writer"      // the view's writer or the sink, with its tap
	RoleCoordinator = "coordinator" // barrier injection and checkpoints (runtime-wide, no job)
)

// newFragment numbers a fragment of the job; rt.mu is held (job start).
func (j *Job) newFragment() int {
	j.frags++
	return j.frags
}

// labeled runs start (which starts goroutines) with the goroutine labels
// of instance inst of fragment frag (of width instances) in role role,
// so that the goroutines it starts carry them; the calling goroutine's
// labels are restored after.
func (j *Job) labeled(frag, inst, width int, role, op string, start func()) {
	l := pprof.Labels(LabelJob, j.spec.Name, LabelFragment, strconv.Itoa(frag), LabelInstance, strconv.Itoa(inst),
		LabelWidth, strconv.Itoa(width), LabelRole, role, LabelOperator, op)
	pprof.Do(context.Background(), l, func(context.Context) { start() })
}

// coordinatorLabeled runs start with the labels of the runtime's own
// goroutines (barriers, checkpoints).
func coordinatorLabeled(start func()) {
	pprof.Do(context.Background(), pprof.Labels(LabelRole, RoleCoordinator), func(context.Context) { start() })
}
