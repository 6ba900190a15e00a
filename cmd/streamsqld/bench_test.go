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

// TestBenchInstancesCommand: --instances runs the query at each
// parallelism with the instances' table and ends with the projection;
// bad lists and a second profile are refused.
func TestBenchInstancesCommand(t *testing.T) {
	var out, errs bytes.Buffer
	if code := benchMain([]string{"nexmark", "--query", "q5", "--events", "100000", "--instances", "1,2"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, want := range []string{"instances at parallelism 1:", "instances at parallelism 2:", "2 instances, max/mean", "    instance 1: cpu",
		"q5   balance p=2", "q5   projection to 16 cores"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the output:\n%s", want, out.String())
		}
	}
	for _, bad := range [][]string{{"--instances", "1,x"}, {"--instances", "0"}, {"--instances", "2", "--cpuprofile", "f"}} {
		out.Reset()
		errs.Reset()
		if code := benchMain(append([]string{"nexmark", "--query", "q5"}, bad...), &out, &errs); code != 2 || errs.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", bad, code, errs.String())
		}
	}
}
