package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestBenchNexmarkCommand(t *testing.T) {
	var out, errs bytes.Buffer
	if code := benchMain([]string{"nexmark", "--query", "q2", "--events", "50000", "--generator"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "(generator only)") || !strings.Contains(lines[1], "events/s/core=") ||
		!strings.Contains(lines[2], "engine only") || !strings.Contains(lines[1], "events=50000") {
		t.Fatalf("unexpected output:\n%s", out.String())
	}
	for _, bad := range [][]string{{"tpch"}, {"nexmark", "--query", "q99"}, {"nexmark", "--sink", "kafka"}, {"nexmark", "extra"}} {
		out.Reset()
		errs.Reset()
		if code := benchMain(bad, &out, &errs); code != 2 || errs.Len() == 0 {
			t.Fatalf("%v: exit %d, stderr %q", bad, code, errs.String())
		}
	}
}
