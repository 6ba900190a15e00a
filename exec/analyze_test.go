package exec

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// analyzed runs n through OpenNode with counters and returns ExplainAnalyze.
func analyzed(t *testing.T, n Node, timing bool) string {
	t.Helper()
	a := NewAnalyze(timing)
	ctx := &Context{Eval: &expr.Context{Ctx: context.Background()}, BatchSize: 3, Analyze: a}
	it, err := OpenNode(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Drain(it); err != nil {
		t.Fatal(err)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return ExplainAnalyze(n, a)
}

// TestExplainAnalyzeCounters: rows are counted per node, a node opened
// twice has loops=2 and rows per loop, and without Analyze OpenNode is Open.
func TestExplainAnalyzeCounters(t *testing.T) {
	s := src(cols(types.TInt8, types.TInt8), 2,
		[]any{1, 2, 3, nil, 5, 6, 7},
		[]any{1, 5, 3, 4, nil, 1, 7})
	f := &Filter{Input: s, Cond: cmpCols(0, 1, "=")}
	ap := &Append{Inputs: []Node{f, s}, Cols: s.cols} // s runs twice: under f and directly
	got := analyzed(t, ap, false)
	want := "Append  (actual rows=10 loops=1)\n" +
		"  Filter: c0 = c1  (actual rows=3 loops=1)\n" +
		"    Source  (actual rows=7 loops=2)\n" +
		"  Source  (actual rows=7 loops=2)\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}

	got = analyzed(t, f, true)
	re := regexp.MustCompile(`^ *(Filter: c0 = c1|Source)  \(actual time=\d+\.\d{3}\.\.\d+\.\d{3} rows=(3|7) loops=1\)$`)
	for _, l := range strings.Split(strings.TrimRight(got, "\n"), "\n") {
		if !re.MatchString(l) {
			t.Errorf("timed line %q", l)
		}
	}

	opened := 0
	s.opened = &opened
	if it, err := OpenNode(&Context{}, s); err != nil {
		t.Fatal(err)
	} else if _, ok := it.(*analyzeIter); ok || opened != 1 {
		t.Errorf("without Analyze: wrapped=%v opened=%d", ok, opened)
	}
	if got := NewAnalyze(false).actual(s); got != "(never executed)" {
		t.Errorf("unopened node: %q", got)
	}
}
