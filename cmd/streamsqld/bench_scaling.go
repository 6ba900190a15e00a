package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/streamsql/streamsql/bench"
)

// The --scaling protocol (docs/benchmarks.md, "Measuring the speed-up"):
// issue 15's scaling target compares one binary's events/s at one core
// and at all the process's cores, over the same events, alternated in one
// run, median of the rounds. Each round runs the query three times, each
// in a process of its own: at GOMAXPROCS=1 pinned to the first CPU, at
// GOMAXPROCS=1 pinned to the second, and at the full GOMAXPROCS unpinned.
// The round's one-core figure is the mean of the two pinned runs (the
// host may serve its vCPUs unequally), and its speed-up is the all-core
// events/s over it. The children report their results as JSON (--json).
//
// Each round then measures what the host gives all the cores busy: the
// same one-core run, pinned to each of the first procs CPUs at once
// (processes sharing nothing). The sum of their events/s over the
// one-core figure is the round's host ceiling: the speed-up of work that
// needs no communication at all, which a virtual machine's host may hold
// well below procs (docs/benchmarks.md, "The host's ceiling").

// jsonResult is one run's result as `bench nexmark --json` prints it.
type jsonResult struct {
	Query       string  `json:"query"`
	Events      int64   `json:"events"`
	Rows        int64   `json:"rows"`
	WallSec     float64 `json:"wall_s"`
	CPUSec      float64 `json:"cpu_s"`
	GOMAXPROCS  int     `json:"gomaxprocs"`
	Parallelism int     `json:"parallelism"`
	PeakRSS     uint64  `json:"peak_rss_bytes"`
	PeakHeap    uint64  `json:"peak_heap_bytes"`
	StateHeap   int64   `json:"state_heap_bytes"`
	CoreRTTNs   int64   `json:"core_rtt_ns,omitempty"`
	// CPUs is how many CPUs the process could run on (its affinity):
	// 1 for a pinned run.
	CPUs int `json:"cpus"`
}

// eventsPerSec is the run's throughput in wall-clock time.
func (r jsonResult) eventsPerSec() float64 { return float64(r.Events) / r.WallSec }

// scalingRound is one round of the protocol: the two pinned one-core runs
// and the all-core run.
type scalingRound struct {
	one  [2]jsonResult
	all  jsonResult
	busy []jsonResult // the one-core run on each of procs CPUs at once (none: not measured)
}

// oneEPS is the round's one-core events/s: the mean of its two pinned
// runs' wall times.
func (s scalingRound) oneEPS() float64 {
	return float64(s.one[0].Events) / ((s.one[0].WallSec + s.one[1].WallSec) / 2)
}

// speedup is the all-core run's events/s over the one-core figure.
func (s scalingRound) speedup() float64 { return s.all.eventsPerSec() / s.oneEPS() }

// ceiling is the host's ceiling: the pinned runs made at once, their
// events/s summed, over the one-core figure (0 when not measured).
func (s scalingRound) ceiling() float64 {
	var eps float64
	for _, r := range s.busy {
		eps += r.eventsPerSec()
	}
	return eps / s.oneEPS()
}

// ofCeiling is the speed-up as a share of the host's ceiling.
func (s scalingRound) ofCeiling() float64 {
	if c := s.ceiling(); c > 0 {
		return s.speedup() / c
	}
	return 0
}

// cpuRatio is the all-core run's CPU time over the pinned runs' mean: the
// work the parallel plan adds, which bounds the speed-up whatever the
// wall times.
func (s scalingRound) cpuRatio() float64 {
	return s.all.CPUSec / ((s.one[0].CPUSec + s.one[1].CPUSec) / 2)
}

// scalingRunner runs the query once in a child process: at GOMAXPROCS
// procs, pinned to CPU cpu (-1: not pinned).
type scalingRunner func(ctx context.Context, cpu, procs int) (jsonResult, error)

// runScaling runs rounds rounds of the protocol for query q at procs
// cores over the CPUs cpus (the first two are pinned), printing each
// round and then the medians.
func runScaling(ctx context.Context, q string, rounds, procs int, cpus []int, run scalingRunner, stdout io.Writer) error {
	if procs < 2 || len(cpus) < 2 {
		return fmt.Errorf("--scaling compares one core with several, and this process may use %d CPU(s) at GOMAXPROCS %d", len(cpus), procs)
	}
	var rs []scalingRound
	for i := 1; i <= rounds; i++ {
		var s scalingRound
		var err error
		for k := range s.one {
			if s.one[k], err = run(ctx, cpus[k], 1); err != nil {
				return fmt.Errorf("round %d, one core (CPU %d): %w", i, cpus[k], err)
			}
		}
		if s.all, err = run(ctx, -1, procs); err != nil {
			return fmt.Errorf("round %d, %d cores: %w", i, procs, err)
		}
		if len(cpus) >= procs {
			if s.busy, err = runBusy(ctx, cpus[:procs], run); err != nil {
				return fmt.Errorf("round %d, one core on each of %d CPUs at once: %w", i, procs, err)
			}
		}
		for _, r := range append(s.one[:], s.busy...) {
			if r.CPUs > 1 {
				return fmt.Errorf("round %d: a one-core run could use %d CPUs, not one", i, r.CPUs)
			}
		}
		rs = append(rs, s)
		fmt.Fprintf(stdout, "%-4s scaling round %d: 1 core %.3fs on CPU %d, %.3fs on CPU %d; %d cores %.3fs cpu=%.3fs core_rtt=%dns: %.2fx (cpu %.2fx the one-core cpu)",
			q, i, s.one[0].WallSec, cpus[0], s.one[1].WallSec, cpus[1], procs, s.all.WallSec, s.all.CPUSec, s.all.CoreRTTNs,
			s.speedup(), s.cpuRatio())
		if len(s.busy) > 0 {
			walls := make([]string, len(s.busy))
			for k, r := range s.busy {
				walls[k] = fmt.Sprintf("%.3fs", r.WallSec)
			}
			fmt.Fprintf(stdout, "; 1 core on %d CPUs at once %s: host ceiling %.2fx, speed-up %.0f%% of it",
				len(s.busy), strings.Join(walls, " "), s.ceiling(), 100*s.ofCeiling())
		}
		fmt.Fprintln(stdout)
	}
	sp := make([]string, len(rs))
	for i, s := range rs {
		sp[i] = fmt.Sprintf("%.2f", s.speedup())
	}
	med := median(rs, scalingRound.speedup)
	rtts := make([]int64, len(rs))
	for i, s := range rs {
		rtts[i] = s.all.CoreRTTNs
	}
	fmt.Fprintf(stdout, "%-4s scaling: median %.2fx over %d rounds (%s); 1 core %.0f events/s, %d cores %.0f events/s (medians); cpu %.2fx the one-core cpu (median); core_rtt %d-%dns",
		q, med, len(rs), strings.Join(sp, " "), median(rs, scalingRound.oneEPS), procs,
		median(rs, func(s scalingRound) float64 { return s.all.eventsPerSec() }), median(rs, scalingRound.cpuRatio),
		slices.Min(rtts), slices.Max(rtts))
	if len(rs[0].busy) > 0 {
		fmt.Fprintf(stdout, "; host ceiling %.2fx, speed-up %.0f%% of it (medians)", median(rs, scalingRound.ceiling), 100*median(rs, scalingRound.ofCeiling))
	}
	fmt.Fprintln(stdout)
	return nil
}

// runBusy runs the one-core run pinned to each CPU of cpus at the same
// time, and returns the results once every run has ended.
func runBusy(ctx context.Context, cpus []int, run scalingRunner) ([]jsonResult, error) {
	rs := make([]jsonResult, len(cpus))
	errs := make([]error, len(cpus))
	var wg sync.WaitGroup
	for k, cpu := range cpus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs[k], errs[k] = run(ctx, cpu, 1)
		}()
	}
	wg.Wait()
	return rs, errors.Join(errs...)
}

// median is the median of f over rs (the mean of the middle two for an
// even count).
func median(rs []scalingRound, f func(scalingRound) float64) float64 {
	v := make([]float64, len(rs))
	for i, s := range rs {
		v[i] = f(s)
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// childRunner is the scalingRunner of `streamsqld bench nexmark`: it runs
// this executable with args (the command's flags less --query, --scaling
// and --gomaxprocs) for query q and reads its --json line.
func childRunner(q string, args []string) (scalingRunner, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, cpu, procs int) (jsonResult, error) {
		cmd := exec.CommandContext(ctx, self, append([]string{"bench", "nexmark", "--query", q, "--json", "--gomaxprocs", strconv.Itoa(procs)}, args...)...)
		var out, errs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errs
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(procs))
		if cpu >= 0 {
			err = startPinned(cmd, cpu) // bench_pin_linux.go
		} else {
			err = cmd.Start()
		}
		if err == nil {
			err = cmd.Wait()
		}
		if err != nil {
			return jsonResult{}, fmt.Errorf("%w: %s", err, strings.TrimSpace(errs.String()))
		}
		sc := bufio.NewScanner(&out)
		for sc.Scan() {
			var r jsonResult
			if line := sc.Bytes(); len(line) > 0 && line[0] == '{' {
				if err := json.Unmarshal(line, &r); err != nil {
					return jsonResult{}, fmt.Errorf("reading the run's result: %w", err)
				}
				if r.WallSec <= 0 || r.Events <= 0 {
					return jsonResult{}, fmt.Errorf("the run reported no events or no time: %s", line)
				}
				return r, nil
			}
		}
		return jsonResult{}, fmt.Errorf("the run printed no result: %q", out.String())
	}, nil
}

// scalingArgs is args (the command's flags) without --query, --scaling,
// --gomaxprocs and --json, which the protocol sets per child.
func scalingArgs(args []string) []string {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := strings.TrimLeft(args[i], "-")
		name, _, hasValue := strings.Cut(a, "=")
		switch name {
		case "query", "scaling", "gomaxprocs":
			if !hasValue {
				i++
			}
			continue
		case "json":
			continue
		}
		rest = append(rest, args[i])
	}
	return rest
}

// jsonOf is r as --json prints it.
func jsonOf(r bench.Result) jsonResult {
	cpus, _ := allowedCPUs() // none where unknown
	return jsonResult{Query: r.Query, Events: r.Events, Rows: r.Rows, WallSec: r.Wall.Seconds(), CPUSec: r.CPU.Seconds(),
		GOMAXPROCS: r.Procs, Parallelism: r.Parallelism, PeakRSS: r.PeakRSS, PeakHeap: r.PeakHeap, StateHeap: r.StateHeap,
		CoreRTTNs: r.CoreRTT.Nanoseconds(), CPUs: len(cpus)}
}

// benchScaling runs the --scaling protocol for each query of names, with
// the command's other flags args, and returns the exit status.
func benchScaling(ctx context.Context, names []string, rounds int, args []string, stdout, stderr io.Writer) int {
	cpus, err := allowedCPUs()
	if err != nil {
		fmt.Fprintln(stderr, "streamsqld bench:", err)
		return 1
	}
	status := 0
	for _, q := range names {
		run, err := childRunner(q, scalingArgs(args))
		if err == nil {
			err = runScaling(ctx, q, rounds, runtime.GOMAXPROCS(0), cpus, run, stdout)
		}
		if err != nil {
			fmt.Fprintf(stderr, "streamsqld bench: %s: %v\n", q, err)
			status = 1
		}
	}
	return status
}

// resultJSON is r's --json line.
func resultJSON(r jsonResult) string {
	b, _ := json.Marshal(r) // plain fields: never fails
	return string(b)
}
