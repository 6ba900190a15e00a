package bench

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/streamsql/streamsql/exec/dataflow"
)

// TestInstancesReport runs the one-heavy-operator aggregation at
// parallelism 4 with the instances' report: the profile's CPU must be
// attributed to the job's fragments (not left to the unlabeled runtime),
// every instance of every parallel fragment must have had rows, and the
// parts must add up to the profile's total.
func TestInstancesReport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a query over 1M events")
	}
	const par = 4
	r, err := Run(context.Background(), Options{Events: 1_000_000, Parallelism: par, Instances: true,
		SQL: "SELECT auction, count(*), count(DISTINCT bidder), min(price), max(price), sum(price), avg(price) FROM bid GROUP BY auction"})
	if err != nil {
		t.Fatal(err)
	}
	rep := r.Instances
	if rep == nil || rep.Parallelism != par {
		t.Fatalf("report = %+v", rep)
	}
	t.Logf("\n%s", rep)
	sum := rep.Coordinator + rep.Runtime
	var labeled time.Duration
	parallel := 0
	for _, f := range rep.Fragments {
		sum += f.CPU()
		labeled += f.CPU()
		if len(f.Ops) == 0 {
			t.Errorf("fragment %d names no operator", f.ID)
		}
		if !f.Parallel() {
			continue
		}
		parallel++
		if f.Width != par || len(f.Instances) != par {
			t.Errorf("fragment %d %v has %d instances, want %d", f.ID, f.Ops, len(f.Instances), par)
		}
		for k, in := range f.Instances {
			if in.RowsIn <= 0 || in.RowsOut <= 0 {
				t.Errorf("fragment %d %v instance %d: rows in %d out %d", f.ID, f.Ops, k, in.RowsIn, in.RowsOut)
			}
		}
	}
	if parallel < 2 { // the split scan of bid, the aggregation
		t.Errorf("%d parallel fragments, want the scan's and the aggregation's", parallel)
	}
	if sum != rep.Total {
		t.Errorf("the parts add up to %v, the profile to %v", sum, rep.Total)
	}
	if rep.Total <= 0 || labeled*2 < rep.Total {
		t.Errorf("fragments got %v of the profile's %v: the goroutines are not labeled", labeled, rep.Total)
	}
	if rep.Serial()+rep.ParallelCPU() != labeled+rep.Coordinator {
		t.Errorf("serial %v + parallel %v != fragments %v + coordinator %v", rep.Serial(), rep.ParallelCPU(), labeled, rep.Coordinator)
	}
}

// TestInstanceReportAttribution builds a profile by hand and checks where
// each sample's CPU goes: by the labels to fragments and instances, the
// coordinator, and the runtime (no labels, or another job's).
func TestInstanceReportAttribution(t *testing.T) {
	const ms = int64(time.Millisecond)
	fn := &profile.Function{ID: 1, Name: "f"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 10 * ms,
		Function: []*profile.Function{fn}, Location: []*profile.Location{loc},
	}
	add := func(n int64, labels map[string]string) {
		s := &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{n, n * 10 * ms}, Label: map[string][]string{}}
		for k, v := range labels {
			s.Label[k] = []string{v}
		}
		p.Sample = append(p.Sample, s)
	}
	inst := func(frag, k, width int, role, op string) map[string]string {
		return map[string]string{dataflow.LabelJob: "v", dataflow.LabelFragment: strconv.Itoa(frag), dataflow.LabelInstance: strconv.Itoa(k),
			dataflow.LabelWidth: strconv.Itoa(width), dataflow.LabelRole: role, dataflow.LabelOperator: op}
	}
	add(30, inst(1, 0, 2, dataflow.RoleReader, "bid"))
	add(10, inst(1, 1, 2, dataflow.RoleReader, "bid"))
	add(20, inst(1, 1, 2, dataflow.RoleExchange, ""))
	add(50, inst(2, 0, 2, dataflow.RoleOperator, "HashAgg"))
	add(50, inst(2, 1, 2, dataflow.RoleOperator, "HashAgg"))
	add(5, inst(3, 0, 1, dataflow.RoleWriter, ""))
	add(7, map[string]string{dataflow.LabelRole: dataflow.RoleCoordinator})
	add(9, nil)
	add(4, map[string]string{dataflow.LabelJob: "other"})
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	ops := []dataflow.OperatorStats{
		{ID: 0, Name: "Scan", Relation: "bid", Instance: 0, Fragment: 1, RowsIn: 100, RowsOut: 100},
		{ID: 1, Name: "Scan", Relation: "bid", Instance: 1, Fragment: 1, RowsIn: 100, RowsOut: 100},
		{ID: 2, Name: "HashAgg", Instance: 0, Fragment: 2, RowsIn: 80, RowsOut: 8},
		{ID: 3, Name: "HashAgg", Instance: 1, Fragment: 2, RowsIn: 120, RowsOut: 12},
		{ID: -1, Name: "Materialize", RowsIn: 20, RowsOut: 20},
	}
	r, err := instanceReport(&buf, "v", 2, ops)
	if err != nil {
		t.Fatal(err)
	}
	d := func(n int64) time.Duration { return time.Duration(n * 10 * ms) }
	if r.Total != d(185) || r.Coordinator != d(7) || r.Runtime != d(13) {
		t.Errorf("total %v coordinator %v runtime %v", r.Total, r.Coordinator, r.Runtime)
	}
	if len(r.Fragments) != 3 {
		t.Fatalf("fragments = %+v", r.Fragments)
	}
	scan, agg, w := r.Fragments[0], r.Fragments[1], r.Fragments[2]
	if scan.ID != 1 || scan.Instances[0].CPU != d(30) || scan.Instances[1].CPU != d(30) || scan.Instances[1].ByRole[dataflow.RoleExchange] != d(20) ||
		scan.Imbalance() != 1 || scan.RowsImbalance() != 1 || len(scan.Ops) != 1 || scan.Ops[0] != "Scan(bid)" {
		t.Errorf("scan fragment = %+v", scan)
	}
	if agg.ID != 2 || agg.Instances[1].RowsIn != 120 || agg.Instances[1].RowsOut != 12 || agg.RowsImbalance() != 1.2 || agg.Instances[0].Samples != 50 {
		t.Errorf("aggregation fragment = %+v", agg)
	}
	if w.ID != 3 || w.Parallel() || w.Instances[0].RowsIn != 20 || w.CPU() != d(5) {
		t.Errorf("writer fragment = %+v", w)
	}
	if r.Serial() != d(12) || r.ParallelCPU() != d(160) || r.ParallelMax() != d(30)+d(60) {
		t.Errorf("serial %v parallel %v busiest %v", r.Serial(), r.ParallelCPU(), r.ParallelMax())
	}
	if !r.Balanced(0.2) || r.Balanced(0.1) {
		t.Errorf("an aggregation 20%% above an even share: balanced within 20%% %v, within 10%% %v", r.Balanced(0.2), r.Balanced(0.1))
	}
}

// TestFragmentBalanced: the rows decide exactly; the CPU only when its
// samples are beyond the limit by more than their noise.
func TestFragmentBalanced(t *testing.T) {
	frag := func(rows, samples []int64) FragmentWork {
		f := FragmentWork{Width: len(rows)}
		for i := range rows {
			f.Instances = append(f.Instances, InstanceWork{RowsIn: rows[i], Samples: samples[i], CPU: time.Duration(samples[i]) * 10 * time.Millisecond})
		}
		return f
	}
	for _, c := range []struct {
		rows, samples []int64
		want          bool
	}{
		{[]int64{100, 100}, []int64{100, 100}, true},
		{[]int64{125, 75}, []int64{100, 100}, false},     // rows 1.25 of an even share
		{[]int64{100, 100}, []int64{300, 100}, false},    // cpu 1.5, far beyond the noise of 400 samples
		{[]int64{100, 100}, []int64{14, 6}, true},        // cpu 1.4, but of 20 samples
		{[]int64{100, 100, 100}, []int64{0, 0, 0}, true}, // no samples
	} {
		if got := frag(c.rows, c.samples).Balanced(0.2); got != c.want {
			t.Errorf("rows %v samples %v: balanced %v, want %v", c.rows, c.samples, got, c.want)
		}
	}
}
