package bench

import (
	"fmt"
	"strings"
	"testing"
)

// TestSplitSourcesEqualBatchQueries runs queries at parallelism 1, 2 and 3,
// where every source is read by that many readers (each generating its
// share of the events), and requires each run to equal the batch query:
// stateless ones (q0, q1, q2), a join of two sources (q3) and windowed ones
// whose windows close on the merged watermark (q5, q8, q11).
func TestSplitSourcesEqualBatchQueries(t *testing.T) {
	for _, par := range []int{2, 3} {
		lines, err := ExplainAt("q3", "", par)
		if err != nil {
			t.Fatal(err)
		}
		plan := strings.Join(lines, "\n")
		if want := fmt.Sprintf("(%d readers)", par); strings.Count(plan, want) != 2 {
			t.Fatalf("parallelism %d: want two scans with %s:\n%s", par, want, plan)
		}
	}
	lines, err := ExplainAt("q3", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if plan := strings.Join(lines, "\n"); strings.Contains(plan, "readers)") {
		t.Fatalf("parallelism 1 splits a source:\n%s", plan)
	}
	pars := []int{1, 2, 3}
	checkBatchAt(t, []string{"q0", "q1", "q2", "q3"}, testEvents, pars, func(_, text string) string { return text })
	checkBatchAt(t, []string{"q5", "q8", "q11"}, windowEvents, pars, func(q, _ string) string { return windowedBatch[q] })
}
