package bench

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/streamsql/streamsql/exec/dataflow"
)

// Instances' shares of the work (issue 15; docs/benchmarks.md, "Instances'
// shares and a 16-core projection"). With Options.Instances, Run takes a
// CPU profile of the job's run and attributes every sample by the
// goroutine labels the dataflow sets when it starts a goroutine
// (exec/dataflow/labels.go): to an instance of a fragment, to the
// runtime's coordinator (barriers, checkpoints), or to the Go runtime
// itself (samples with no label: the garbage collector's workers, the
// scheduler). Rows in and out per instance come from the job's operator
// counters (dataflow.Job.Operators).

// InstanceWork is what one instance of a fragment did.
type InstanceWork struct {
	CPU     time.Duration
	Samples int64 // the profile's samples behind CPU
	// ByRole splits CPU by the goroutines' roles (dataflow.RoleReader,
	// RoleOperator, RoleMeter, RoleExchange, RoleMerge, RoleWriter).
	ByRole map[string]time.Duration
	// RowsIn are the rows its first operator received, RowsOut those its
	// last one sent on (0 when the fragment has no counted operator).
	RowsIn, RowsOut int64
}

// FragmentWork is one fragment of the job: its operators and instances.
type FragmentWork struct {
	ID    int
	Width int      // its instances (1: a serial part of the job)
	Ops   []string // its operators in plan order ("Scan(bid)", "HashAgg"), or its roles
	// Instances are indexed by instance.
	Instances []InstanceWork
}

// CPU is the fragment's CPU over all instances.
func (f FragmentWork) CPU() time.Duration {
	var d time.Duration
	for _, in := range f.Instances {
		d += in.CPU
	}
	return d
}

// MaxCPU is the CPU of its busiest instance.
func (f FragmentWork) MaxCPU() time.Duration {
	var d time.Duration
	for _, in := range f.Instances {
		d = max(d, in.CPU)
	}
	return d
}

// Imbalance is the busiest instance's CPU over the mean instance's (1: an
// even split; 0 with no CPU at all).
func (f FragmentWork) Imbalance() float64 {
	c := f.CPU()
	if c == 0 || len(f.Instances) == 0 {
		return 0
	}
	return float64(f.MaxCPU()) * float64(len(f.Instances)) / float64(c)
}

// RowsImbalance is the largest instance's rows in over the mean's (0
// when the fragment counts no rows in).
func (f FragmentWork) RowsImbalance() float64 {
	var sum, most int64
	for _, in := range f.Instances {
		sum += in.RowsIn
		most = max(most, in.RowsIn)
	}
	if sum == 0 {
		return 0
	}
	return float64(most) * float64(len(f.Instances)) / float64(sum)
}

// CPUNoise is the relative sampling error of the busiest instance's CPU:
// 1/sqrt(its samples) (a profile's samples are about Poisson; 1 without
// samples).
func (f FragmentWork) CPUNoise() float64 {
	var most int64
	for _, in := range f.Instances {
		most = max(most, in.Samples)
	}
	if most == 0 {
		return 1
	}
	return 1 / math.Sqrt(float64(most))
}

// Balanced tells whether every instance does at most 1+limit times an
// even share of the fragment's work: its rows in (exact) within the
// limit, and its CPU samples not significantly beyond it (the busiest
// instance's samples at most e + 3·sqrt(e), e the samples of 1+limit
// times an even share: a profile's samples are about Poisson, and the
// busiest of N noisy counts lies above its expectation).
func (f FragmentWork) Balanced(limit float64) bool {
	if !f.Parallel() {
		return true
	}
	if f.RowsImbalance() > 1+limit {
		return false
	}
	var sum, most int64
	for _, in := range f.Instances {
		sum += in.Samples
		most = max(most, in.Samples)
	}
	e := (1 + limit) * float64(sum) / float64(len(f.Instances))
	return float64(most) <= e+3*math.Sqrt(e)
}

// WorkImbalance is the imbalance the projection uses: the rows' (exact,
// where the instances count rows in), else the CPU's (sampled).
func (f FragmentWork) WorkImbalance() float64 {
	if r := f.RowsImbalance(); r > 0 {
		return r
	}
	return f.Imbalance()
}

// byRole renders the fragment's CPU by role over all its instances
// ("operator 1.200s, exchange 0.300s, meter 0.010s"), largest first.
func (f FragmentWork) byRole() string {
	sum := map[string]time.Duration{}
	for _, in := range f.Instances {
		for r, d := range in.ByRole {
			sum[r] += d
		}
	}
	var roles []string
	for r := range sum {
		roles = append(roles, r)
	}
	slices.SortFunc(roles, func(a, b string) int {
		return cmp.Or(cmp.Compare(sum[b], sum[a]), strings.Compare(a, b))
	})
	var parts []string
	for _, r := range roles {
		parts = append(parts, fmt.Sprintf("%s %.3fs", r, sum[r].Seconds()))
	}
	return strings.Join(parts, ", ")
}

// Parallel tells whether the fragment runs as several instances.
func (f FragmentWork) Parallel() bool { return f.Width > 1 }

// InstanceReport is where a run's CPU went.
type InstanceReport struct {
	Parallelism int
	Total       time.Duration // every sample of the profile
	Fragments   []FragmentWork
	// Coordinator is the runtime's barrier injection and checkpoints.
	Coordinator time.Duration
	// Runtime is the CPU of goroutines without labels: the garbage
	// collector's workers, the scheduler, the profiler, the benchmark's
	// own goroutines.
	Runtime time.Duration
}

// Serial is the CPU of the parts that run as one instance whatever the
// parallelism: the single-instance fragments and the coordinator.
func (r InstanceReport) Serial() time.Duration { return r.Coordinator + r.fragmentsCPU(false) }

// ParallelCPU is the CPU of the fragments of several instances.
func (r InstanceReport) ParallelCPU() time.Duration { return r.fragmentsCPU(true) }

// fragmentsCPU is the CPU of the parallel fragments, or of the others.
func (r InstanceReport) fragmentsCPU(parallel bool) time.Duration {
	var d time.Duration
	for _, f := range r.Fragments {
		if f.Parallel() == parallel {
			d += f.CPU()
		}
	}
	return d
}

// ParallelMax is the sum over the parallel fragments of their busiest
// instance's work: its mean instance's CPU times its WorkImbalance (the
// busiest instance's own CPU has too few samples to be used alone).
func (r InstanceReport) ParallelMax() time.Duration {
	var d time.Duration
	for _, f := range r.Fragments {
		if f.Parallel() {
			d += time.Duration(float64(f.CPU()) / float64(f.Width) * max(f.WorkImbalance(), 1))
		}
	}
	return d
}

// Balanced tells whether every major parallel fragment is
// (FragmentWork.Balanced).
func (r InstanceReport) Balanced(limit float64) bool {
	for _, f := range r.Fragments {
		if r.major(f) && !f.Balanced(limit) {
			return false
		}
	}
	return true
}

// major tells whether f is a parallel fragment doing a tenth of the
// parallel fragments' CPU at least: the others' balance changes little,
// and their few samples say nothing about it.
func (r InstanceReport) major(f FragmentWork) bool {
	return f.Parallel() && f.CPU()*10 >= r.ParallelCPU()
}

// Summary is one line: the major parallel fragments' largest imbalances
// by rows and by CPU, and whether all are balanced within limit.
func (r InstanceReport) Summary(limit float64) string {
	var rows, cpu, noise float64
	var rowsAt, cpuAt string
	var par time.Duration
	for _, f := range r.Fragments {
		if f.Parallel() {
			par += f.CPU()
		}
		if !r.major(f) {
			continue
		}
		name := strings.Join(f.Ops, ">")
		if v := f.RowsImbalance(); v > rows {
			rows, rowsAt = v, name
		}
		if v := f.Imbalance(); v > cpu {
			cpu, noise, cpuAt = v, f.CPUNoise(), name
		}
	}
	yes := "no"
	if r.Balanced(limit) {
		yes = "yes"
	}
	return fmt.Sprintf("p=%d parallel %.0f%% of cpu; max/mean rows %.2f (%s), cpu %.2f±%.2f (%s); within %.0f%%: %s",
		r.Parallelism, 100*float64(par)/float64(max(r.Total, 1)), rows, rowsAt, cpu, cpu*noise, cpuAt, 100*limit, yes)
}

// LargestSerial is the CPU of the busiest single-instance fragment (or the
// coordinator): no schedule finishes before it.
func (r InstanceReport) LargestSerial() time.Duration {
	d := r.Coordinator
	for _, f := range r.Fragments {
		if !f.Parallel() {
			d = max(d, f.CPU())
		}
	}
	return d
}

// Point is the report's figures for the projection (projection.go).
func (r InstanceReport) Point() ScalePoint {
	return ScalePoint{N: r.Parallelism, Serial: r.Serial(), Parallel: r.ParallelCPU(), ParallelMax: r.ParallelMax(),
		Runtime: r.Runtime, LargestSerial: r.LargestSerial()}
}

// startInstanceProfile starts the CPU profile of an Instances run, at
// pprof's rate (100 samples per CPU second: an instance's CPU is known
// to about 1/sqrt(its samples), InstanceWork.Samples). A higher rate
// (runtime.SetCPUProfileRate) loses samples on a loaded machine: measured
// here at 1000 Hz, the profile held a third of the CPU getrusage counted,
// at 100 Hz all of it.
func startInstanceProfile(buf *bytes.Buffer) error {
	if err := pprof.StartCPUProfile(buf); err != nil {
		return fmt.Errorf("instances: cpu profile: %w", err)
	}
	return nil
}

// stopProfile stops the profile startInstanceProfile started, once (prof
// is then complete).
func stopProfile(prof *bytes.Buffer) {
	if prof.Len() == 0 {
		pprof.StopCPUProfile()
	}
}

// instanceReport attributes the samples of the CPU profile prof to the
// job named job (of parallelism par) whose operators are ops.
func instanceReport(prof io.Reader, job string, par int, ops []dataflow.OperatorStats) (InstanceReport, error) {
	p, err := profile.Parse(prof)
	if err != nil {
		return InstanceReport{}, fmt.Errorf("instances: parse cpu profile: %w", err)
	}
	vi, ci := -1, -1
	for i, st := range p.SampleType {
		switch {
		case st.Type == "cpu" && st.Unit == "nanoseconds":
			vi = i
		case st.Type == "samples" && st.Unit == "count":
			ci = i
		}
	}
	if vi < 0 || ci < 0 {
		return InstanceReport{}, fmt.Errorf("instances: the profile has no cpu nanoseconds or sample counts")
	}
	r := InstanceReport{Parallelism: par}
	frags := map[int]*FragmentWork{}
	roles := map[int][]string{} // per fragment, the roles and operators seen (when it has no counted operator)
	for _, s := range p.Sample {
		d := time.Duration(s.Value[vi])
		r.Total += d
		label := func(k string) string {
			if v := s.Label[k]; len(v) > 0 {
				return v[0]
			}
			return ""
		}
		switch {
		case label(dataflow.LabelRole) == dataflow.RoleCoordinator:
			r.Coordinator += d
			continue
		case label(dataflow.LabelJob) != job:
			r.Runtime += d
			continue
		}
		id, err1 := strconv.Atoi(label(dataflow.LabelFragment))
		inst, err2 := strconv.Atoi(label(dataflow.LabelInstance))
		width, err3 := strconv.Atoi(label(dataflow.LabelWidth))
		if err1 != nil || err2 != nil || err3 != nil || inst < 0 || inst >= width {
			return InstanceReport{}, fmt.Errorf("instances: a sample of job %s has bad labels %v", job, s.Label)
		}
		f := frags[id]
		if f == nil {
			f = &FragmentWork{ID: id, Width: width, Instances: make([]InstanceWork, width)}
			frags[id] = f
		}
		if f.Width != width {
			return InstanceReport{}, fmt.Errorf("instances: fragment %d labeled with widths %d and %d", id, f.Width, width)
		}
		w := &f.Instances[inst]
		w.CPU += d
		w.Samples += s.Value[ci]
		role := label(dataflow.LabelRole)
		if w.ByRole == nil {
			w.ByRole = map[string]time.Duration{}
		}
		w.ByRole[role] += d
		name := role
		if op := label(dataflow.LabelOperator); op != "" && role != dataflow.RoleMeter {
			name = op
		}
		if !slices.Contains(roles[id], name) {
			roles[id] = append(roles[id], name)
		}
	}
	// rows and names from the operators' counters: per fragment and
	// instance, the first operator's rows in and the last one's rows out
	byFrag := map[int][]dataflow.OperatorStats{}
	for _, op := range ops {
		if op.ID >= 0 {
			byFrag[op.Fragment] = append(byFrag[op.Fragment], op)
		}
	}
	for id, list := range byFrag {
		f := frags[id]
		if f == nil { // no sample: it did (almost) nothing
			width := 0
			for _, op := range list {
				width = max(width, op.Instance+1)
			}
			f = &FragmentWork{ID: id, Width: width, Instances: make([]InstanceWork, width)}
			frags[id] = f
		}
		first, last := map[int]bool{}, map[int]bool{}
		for _, op := range list { // inputs before consumers
			if op.Instance >= len(f.Instances) {
				continue
			}
			w := &f.Instances[op.Instance]
			if !first[op.Instance] {
				first[op.Instance] = true
				w.RowsIn = op.RowsIn
			}
			last[op.Instance] = true
			w.RowsOut = op.RowsOut
			if op.Instance == 0 {
				name := op.Name
				if op.Relation != "" {
					name += "(" + op.Relation + ")"
				}
				f.Ops = append(f.Ops, name)
			}
		}
	}
	for _, op := range ops {
		if op.ID >= 0 {
			continue
		}
		// the view or sink: the fragment whose goroutines write (the
		// last one started)
		for id, names := range roles {
			if slices.Contains(names, dataflow.RoleWriter) && frags[id].Width == 1 {
				frags[id].Instances[0].RowsIn, frags[id].Instances[0].RowsOut = op.RowsIn, op.RowsOut
			}
		}
	}
	for id, f := range frags {
		if len(f.Ops) == 0 {
			f.Ops = roles[id]
		}
		r.Fragments = append(r.Fragments, *f)
	}
	// in data-flow order: by the first operator (inputs before
	// consumers), fragments without operators (the writer) last
	firstOp := map[int]int{}
	for _, op := range ops {
		if _, ok := firstOp[op.Fragment]; !ok && op.ID >= 0 {
			firstOp[op.Fragment] = op.ID
		}
	}
	order := func(f FragmentWork) int {
		if id, ok := firstOp[f.ID]; ok {
			return id
		}
		return len(ops) + f.ID
	}
	slices.SortFunc(r.Fragments, func(a, b FragmentWork) int { return order(a) - order(b) })
	return r, nil
}

// String renders the report as a table: per fragment its operators, CPU
// and balance, and per instance its CPU and rows.
func (r InstanceReport) String() string {
	var b strings.Builder
	sec := func(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }
	fmt.Fprintf(&b, "instances at parallelism %d: cpu %s (profiled), serial %s, parallel %s (busiest instances %s), coordinator %s, runtime/GC %s\n",
		r.Parallelism, sec(r.Total), sec(r.Serial()), sec(r.ParallelCPU()), sec(r.ParallelMax()), sec(r.Coordinator), sec(r.Runtime))
	for _, f := range r.Fragments {
		kind := "serial"
		if f.Parallel() {
			kind = fmt.Sprintf("%d instances, max/mean cpu %.2f±%.2f rows %.2f", f.Width, f.Imbalance(), f.Imbalance()*f.CPUNoise(), f.RowsImbalance())
		}
		fmt.Fprintf(&b, "  fragment %d [%s] %s: cpu %s\n", f.ID, strings.Join(f.Ops, " > "), kind, sec(f.CPU()))
		if roles := f.byRole(); len(roles) > 1 {
			fmt.Fprintf(&b, "    by role: %s\n", roles)
		}
		if !f.Parallel() {
			fmt.Fprintf(&b, "    rows in %d out %d\n", f.Instances[0].RowsIn, f.Instances[0].RowsOut)
			continue
		}
		for k, in := range f.Instances {
			share := 0.0
			if c := f.CPU(); c > 0 {
				share = float64(in.CPU) * float64(f.Width) / float64(c)
			}
			fmt.Fprintf(&b, "    instance %d: cpu %s (%.2f of an even share, %d samples) rows in %d out %d\n", k, sec(in.CPU), share, in.Samples, in.RowsIn, in.RowsOut)
		}
	}
	return b.String()
}
