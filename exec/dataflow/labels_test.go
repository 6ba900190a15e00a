package dataflow

import (
	"bytes"
	"fmt"
	"runtime/pprof"
	"slices"
	"testing"

	"github.com/google/pprof/profile"
)

// TestGoroutineLabels: every goroutine a parallel job starts carries the
// labels of its fragment, instance and role (labels.go): the table's
// reader, the exchange behind it, the three instances of the aggregation
// (their operators and meters, in one fragment of width 3), and the
// gather of their outputs and the view's writer; the runtime's barrier
// goroutine is the coordinator's.
func TestGoroutineLabels(t *testing.T) {
	tbl := &fakeTable{rows: []int64{1, 2, 3, 4, 5, 6}}
	rt := New(Config{BarrierInterval: 1 << 40}, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	t.Cleanup(rt.Close)
	spec := parAgg(3)
	spec.Name = "labels_test_agg"
	if _, err := rt.StartJob(spec); err != nil {
		t.Fatal(err)
	}
	flush(t, rt)
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{} // "role operator fragment/instance/width"
	coordinator := false
	for _, s := range p.Sample {
		l := func(k string) string {
			if v := s.Label[k]; len(v) > 0 {
				return v[0]
			}
			return ""
		}
		if l(LabelRole) == RoleCoordinator {
			coordinator = true
		}
		if l(LabelJob) != spec.Name {
			continue
		}
		seen[fmt.Sprintf("%s %s %s/%s/%s", l(LabelRole), l(LabelOperator), l(LabelFragment), l(LabelInstance), l(LabelWidth))] = true
	}
	var got []string
	for k := range seen {
		got = append(got, k)
	}
	slices.Sort(got)
	// fragments in start order: the aggregation (1), the table's scan
	// (2), the output (3)
	want := []string{
		"exchange  2/0/1",
		"merge  3/0/1", // the gather of the three instances, the output's
		"meter HashAgg 1/0/3", "meter HashAgg 1/1/3", "meter HashAgg 1/2/3",
		"meter Scan 2/0/1", // (a Scan has no goroutine of its own)
		"operator HashAgg 1/0/3", "operator HashAgg 1/1/3", "operator HashAgg 1/2/3",
		"reader t 2/0/1",
		"writer  3/0/1",
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("no goroutine labeled %q; the job's goroutines: %q", w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the job's goroutines are labeled %q, want %q", got, want)
	}
	if !coordinator {
		t.Error("no goroutine labeled as the coordinator")
	}
}
