package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
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

// TestBenchTraceCommand: --trace writes the run's execution trace, which
// go tool trace reads; with two queries it is refused.
func TestBenchTraceCommand(t *testing.T) {
	var out, errs bytes.Buffer
	file := t.TempDir() + "/q1.trace"
	if code := benchMain([]string{"nexmark", "--query", "q1", "--events", "20000", "--trace", file}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("go 1.")) || len(b) < 1000 {
		t.Fatalf("not an execution trace: %d bytes starting %q", len(b), b[:min(len(b), 16)])
	}
	errs.Reset()
	if code := benchMain([]string{"nexmark", "--query", "q1,q2", "--trace", file}, &out, &errs); code != 2 || !strings.Contains(errs.String(), "--trace") {
		t.Fatalf("two queries with --trace: exit %d, stderr %q", code, errs.String())
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
	for _, bad := range [][]string{{"--instances", "1,x"}, {"--instances", "0"}, {"--instances", "2", "--cpuprofile", "f"}, {"--instances", "2", "--memprofile", "f"}, {"--instances", "2", "--trace", "f"}} {
		out.Reset()
		errs.Reset()
		if code := benchMain(append([]string{"nexmark", "--query", "q5"}, bad...), &out, &errs); code != 2 || errs.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", bad, code, errs.String())
		}
	}
}

// asMainEnv makes the test binary run as streamsqld (main) when a command
// under test starts it as a child: --scaling's runs, several queries.
const asMainEnv = "STREAMSQLD_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestBenchScalingCommand: --scaling runs each round's three runs as
// pinned and unpinned children that report JSON, prints the rounds and
// the medians; its refusals name the flag.
func TestBenchScalingCommand(t *testing.T) {
	t.Setenv(asMainEnv, "1")
	cpus, err := allowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	code := benchMain([]string{"nexmark", "--query", "q1", "--events", "100000", "--scaling", "2", "--gomaxprocs", "2"}, &out, &errs)
	if len(cpus) < 2 {
		if code != 1 || !strings.Contains(errs.String(), "--scaling compares one core with several") {
			t.Fatalf("one CPU: exit %d, stderr %q", code, errs.String())
		}
		t.Skip("the rounds need two CPUs; the refusal was checked") // CI has two
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "q1   scaling round 1: 1 core ") || !strings.Contains(lines[0], "; 1 core on 2 CPUs at once ") ||
		!strings.Contains(lines[2], "; host ceiling ") || !strings.HasPrefix(lines[1], "q1   scaling round 2:") ||
		!strings.HasPrefix(lines[2], "q1   scaling: median ") || !strings.Contains(lines[2], "over 2 rounds") {
		t.Fatalf("unexpected output:\n%s", out.String())
	}
	var med float64
	if _, err := fmt.Sscanf(strings.TrimPrefix(lines[2], "q1   scaling: median "), "%fx", &med); err != nil || med <= 0 {
		t.Fatalf("no speed-up in %q (%v)", lines[2], err)
	}
	for _, bad := range [][]string{{"--scaling", "-1"}, {"--scaling", "1", "--cpuprofile", "f"}, {"--scaling", "1", "--trace", "f"}, {"--scaling", "1", "--json"}} {
		out.Reset()
		errs.Reset()
		if code := benchMain(append([]string{"nexmark", "--query", "q1"}, bad...), &out, &errs); code != 2 || !strings.Contains(errs.String(), "--scaling") {
			t.Errorf("%v: exit %d, stderr %q", bad, code, errs.String())
		}
	}
}

// TestBenchJSON: --json prints the result as one JSON object whose
// figures are the run's.
func TestBenchJSON(t *testing.T) {
	var out, errs bytes.Buffer
	if code := benchMain([]string{"nexmark", "--query", "q2", "--events", "50000", "--json", "--gomaxprocs", "1"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	var r jsonResult
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &r); err != nil {
		t.Fatalf("%v: %q", err, out.String())
	}
	if r.Query != "q2" || r.Events != 50000 || r.Rows <= 0 || r.WallSec <= 0 || r.CPUSec <= 0 || r.GOMAXPROCS != 1 || r.CPUs < 1 {
		t.Fatalf("unexpected result %+v", r)
	}
}

// TestRunScaling checks the protocol's arithmetic and checks on runs
// given by a runner of fixed results: the one-core figure is the mean of
// the pinned runs, the speed-up the median of the rounds', the host
// ceiling the pinned runs made at once (their events/s summed over the
// one-core figure), and a round whose one-core run was not pinned fails.
func TestRunScaling(t *testing.T) {
	// per CPU, in call order: each round's one-core run, then its run
	// beside the other CPU's (at once)
	walls := map[int][]float64{0: {1.0, 1.0, 1.2, 1.5, 0.9, 2.0}, 1: {1.0, 1.25, 0.8, 1.5, 1.1, 2.0}, -1: {0.5, 0.625, 0.4}}
	var mu sync.Mutex
	calls := map[int]int{}
	run := func(_ context.Context, cpu, procs int) (jsonResult, error) {
		mu.Lock()
		w := walls[cpu][calls[cpu]]
		calls[cpu]++
		mu.Unlock()
		n := 1
		if cpu < 0 {
			n = procs
		}
		return jsonResult{Query: "qx", Events: 1000, Rows: 7, WallSec: w, CPUSec: w * float64(n), CPUs: n}, nil
	}
	var out bytes.Buffer
	if err := runScaling(context.Background(), "qx", 3, 2, []int{0, 1}, run, &out); err != nil {
		t.Fatal(err)
	}
	// rounds: one-core walls 1.0, 1.0, 1.0 (means); speed-ups 2.00, 1.60,
	// 2.50; ceilings 1/1.0+1/1.25 = 1.80, 1/1.5+1/1.5 = 1.33, 1/2+1/2 =
	// 1.00; speed-ups over them 111 %, 120 %, 250 %
	for _, want := range []string{
		"qx   scaling round 1: 1 core 1.000s on CPU 0, 1.000s on CPU 1; 2 cores 0.500s cpu=1.000s core_rtt=0ns: 2.00x (cpu 1.00x the one-core cpu); 1 core on 2 CPUs at once 1.000s 1.250s: host ceiling 1.80x, speed-up 111% of it\n",
		"qx   scaling: median 2.00x over 3 rounds (2.00 1.60 2.50)",
		"; host ceiling 1.33x, speed-up 120% of it (medians)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("no %q in:\n%s", want, out.String())
		}
	}
	if calls[0] != 6 || calls[1] != 6 || calls[-1] != 3 {
		t.Fatalf("runs per CPU: %v", calls)
	}
	unpinned := func(_ context.Context, cpu, procs int) (jsonResult, error) {
		return jsonResult{Events: 1000, Rows: 7, WallSec: 1, CPUSec: 1, CPUs: 2}, nil
	}
	if err := runScaling(context.Background(), "qx", 1, 2, []int{0, 1}, unpinned, io.Discard); err == nil || !strings.Contains(err.Error(), "not one") {
		t.Fatalf("unpinned one-core run: %v", err)
	}
	if err := runScaling(context.Background(), "qx", 1, 2, []int{0}, run, io.Discard); err == nil {
		t.Fatal("one CPU: no error")
	}
}

// TestScalingArgs: the children get the command's flags less those the
// protocol sets itself.
func TestScalingArgs(t *testing.T) {
	got := scalingArgs([]string{"--query", "q1", "--events", "5", "-scaling=3", "--gomaxprocs", "2", "--json", "--sink=materialize", "--scaling", "2"})
	if want := []string{"--events", "5", "--sink=materialize"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
