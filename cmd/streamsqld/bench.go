package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/bench"
)

// benchUsage is the bench subcommand's synopsis.
const benchUsage = `usage: streamsqld bench nexmark [flags]

Runs Nexmark queries in-process on the nexmark generator, each into a
counting discard sink (or a materialized view with --sink materialize), and
prints per query: events/s, CPU time, events/s per core (events per CPU
second), peak RSS, the peak Go heap and the job's state after a GC, and,
with two CPUs or more, core_rtt: a cache line's round trip between two of
them just before the run, which shows where a virtual machine's host put
its vCPUs (docs/benchmarks.md).
With several queries each runs in a process of its own (clean peak RSS).
Set GOMAXPROCS (or --gomaxprocs) to choose the cores.

flags:
`

// benchMain runs `streamsqld bench ...` and returns the exit status.
func benchMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "nexmark" {
		fmt.Fprint(stderr, benchUsage)
		fmt.Fprintln(stderr, "  (the only benchmark is nexmark)")
		return 2
	}
	fs := flag.NewFlagSet("streamsqld bench nexmark", flag.ContinueOnError)
	fs.SetOutput(stderr)
	queries := fs.String("query", "q0", "queries to run, comma-separated, or 'all' ("+strings.Join(bench.Queries(), ", ")+")")
	events := fs.Int64("events", 10_000_000, "events of all three kinds per run (46 of 50 are bids)")
	seed := fs.Uint64("seed", 0, "generator seed")
	sink := fs.String("sink", "discard", "where the query's output goes: discard (count and drop, Nexmark's blackhole), materialize (a materialized view's state), or file:DIR / parquet:DIR (the file sink, JSON lines or Parquet, into DIR/<query>)")
	gen := fs.Bool("generator", false, "also run the query's sources alone into discard sinks (the generator's cost) and report the engine's share")
	procs := fs.Int("gomaxprocs", 0, "GOMAXPROCS for the runs (0: as set by the environment)")
	barrier := fs.Duration("barrier-interval", 0, "epoch length (0: the server's default, 100ms)")
	ckpt := fs.Duration("checkpoint-interval", 0, "checkpoint the query's state this often into a temporary directory (0: no checkpoints), to measure their cost")
	sqlText := fs.String("sql", "", "run this SELECT over the sources bid, auction and person instead of --query")
	explain := fs.Bool("explain", false, "print each query's streaming plan instead of running it")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the query's run to this file (one query)")
	memProfile := fs.String("memprofile", "", "write a heap profile taken at the end of the run, with the job's state live, to this file (one query)")
	traceFile := fs.String("trace", "", "write a Go execution trace of the query's run to this file (one query): go tool trace -pprof=sync FILE shows where goroutines waited")
	noOpStats := fs.Bool("no-operator-stats", false, "do not count rows and backpressure per operator (what /metrics reports), to measure the counters' cost")
	par := fs.Int("parallelism", 0, "instances of each keyed operator (SET streaming_parallelism; 0: the server's default, GOMAXPROCS spread over the plan's keyed operators)")
	split := fs.String("split-distinct", "auto", "streaming_split_distinct: on, off or auto (docs/sql.md)")
	shared := fs.Bool("shared-reads", true, "read a source scanned several times by a query once (docs/streaming.md, section Shared source reads); --shared-reads=false reads it once per scan, to measure what sharing saves")
	inProcess := fs.Bool("in-process", false, "run several queries in this process instead of one process each")
	hugePages := fs.Bool("huge-pages", true, "advise the Go heap as transparent huge pages, as the server's --huge-pages does by default (docs/streaming.md, section Huge pages); --huge-pages=false to measure without")
	scaling := fs.Int("scaling", 0, "measure the speed-up at GOMAXPROCS (--gomaxprocs, else all the process's CPUs) over one core: this many rounds, each running the query at one core pinned to the first CPU, at one core pinned to the second and at all cores, each in a process of its own; prints each round and the medians (docs/benchmarks.md, section Measuring the speed-up)")
	asJSON := fs.Bool("json", false, "print each query's result as one JSON object")
	instances := fs.String("instances", "", "run each query at these parallelisms (e.g. 1,2,4,8), profile its CPU by fragment and instance, print each instance's share and rows, and project the wall time to 16 cores (docs/benchmarks.md)")
	fs.Usage = func() {
		fmt.Fprint(stderr, benchUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "streamsqld bench: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if f, dir, _ := strings.Cut(*sink, ":"); *sink != "discard" && *sink != "materialize" && (f != "file" && f != "parquet" || dir == "") {
		fmt.Fprintf(stderr, "streamsqld bench: --sink is discard, materialize, file:DIR or parquet:DIR, not %q\n", *sink)
		return 2
	}
	names := bench.Queries()
	if *queries != "all" {
		names = strings.Split(*queries, ",")
	}
	if *sqlText != "" {
		names = []string{"sql"}
	}
	for _, q := range names {
		if _, err := bench.QuerySQL(q); err != nil && *sqlText == "" {
			fmt.Fprintln(stderr, "streamsqld bench:", err)
			return 2
		}
	}
	if *procs > 0 {
		runtime.GOMAXPROCS(*procs)
	}
	if *par < 0 {
		fmt.Fprintf(stderr, "streamsqld bench: --parallelism must be at least 1 (0: GOMAXPROCS), not %d\n", *par)
		return 2
	}
	auto := *par == 0
	if auto {
		*par = runtime.GOMAXPROCS(0)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *hugePages && (len(names) == 1 || *inProcess) && !*explain {
		if err := startHugePages(ctx, hugeReserve); err != nil { // hugepages_linux.go
			fmt.Fprintln(stderr, "streamsqld bench: warning:", err)
		}
	}

	if *explain {
		for _, q := range names {
			lines, err := bench.ExplainOpts(q, *sqlText, bench.Options{Parallelism: *par, ParallelismAuto: auto, SplitDistinct: *split, Unshared: !*shared})
			if err != nil {
				fmt.Fprintln(stderr, "streamsqld bench:", err)
				return 1
			}
			fmt.Fprintf(stdout, "%s:\n  %s\n", q, strings.Join(lines, "\n  "))
		}
		return 0
	}
	var pars []int
	if *instances != "" {
		var err error
		if pars, err = parseParallelisms(*instances); err != nil {
			fmt.Fprintln(stderr, "streamsqld bench:", err)
			return 2
		}
		if *cpuProfile != "" || *memProfile != "" || *traceFile != "" || *gen {
			fmt.Fprintln(stderr, "streamsqld bench: --instances takes a CPU profile of its own: not with --cpuprofile, --memprofile, --trace or --generator")
			return 2
		}
	}
	if *scaling < 0 {
		fmt.Fprintf(stderr, "streamsqld bench: --scaling takes a number of rounds, not %d\n", *scaling)
		return 2
	}
	if *scaling > 0 {
		if *cpuProfile != "" || *memProfile != "" || *traceFile != "" || *gen || pars != nil || *asJSON || *inProcess {
			fmt.Fprintln(stderr, "streamsqld bench: --scaling runs the query in processes of its own: not with --cpuprofile, --memprofile, --trace, --generator, --instances, --json or --in-process")
			return 2
		}
		return benchScaling(ctx, names, *scaling, args[1:], stdout, stderr)
	}
	if (*cpuProfile != "" || *memProfile != "" || *traceFile != "") && len(names) > 1 {
		fmt.Fprintln(stderr, "streamsqld bench: --cpuprofile, --memprofile and --trace take one query")
		return 2
	}
	if len(names) > 1 && !*inProcess {
		return benchChildren(ctx, names, args[1:], stdout, stderr)
	}
	for _, q := range names {
		o := bench.Options{Query: q, SQL: *sqlText, Events: *events, Seed: *seed, Materialize: *sink == "materialize", BarrierInterval: *barrier, CoreRTT: true,
			CheckpointInterval: *ckpt, NoOperatorStats: *noOpStats, Parallelism: *par, ParallelismAuto: auto, SplitDistinct: *split, Unshared: !*shared}
		if f, dir, ok := strings.Cut(*sink, ":"); ok && (f == "file" || f == "parquet") {
			o.FileSink, o.FileFormat = dir, map[string]string{"file": "JSON", "parquet": "PARQUET"}[f]
		}
		if pars != nil {
			if err := runInstances(ctx, o, pars, stdout); err != nil {
				fmt.Fprintln(stderr, "streamsqld bench:", err)
				return 1
			}
			continue
		}
		var g bench.Result
		if *gen {
			// The generator first: the query's peak RSS then covers both.
			o := o
			o.GeneratorOnly, o.Materialize = true, false
			r, err := bench.Run(ctx, o)
			if err != nil {
				fmt.Fprintln(stderr, "streamsqld bench:", err)
				return 1
			}
			g = r
			fmt.Fprintf(stdout, "%s (generator only)\n", r)
		}
		r, err := runProfiled(ctx, o, *cpuProfile, *memProfile, *traceFile)
		if err != nil {
			fmt.Fprintln(stderr, "streamsqld bench:", err)
			return 1
		}
		if *asJSON {
			fmt.Fprintln(stdout, resultJSON(jsonOf(r)))
		} else {
			fmt.Fprintln(stdout, r)
		}
		if *gen {
			if d := r.CPU - g.CPU; d > 0 {
				fmt.Fprintf(stdout, "%-4s engine only (minus the generator): cpu=%.3fs events/s/core=%.0f\n",
					q, d.Seconds(), float64(r.Events)/d.Seconds())
			} else {
				fmt.Fprintf(stdout, "%-4s engine only (minus the generator): below the noise of the measurement\n", q)
			}
		}
	}
	return 0
}

// runProfiled runs o, writing a CPU profile of the run to cpuFile, a
// heap profile of its end to memFile and an execution trace of it to
// traceFile when they are set.
func runProfiled(ctx context.Context, o bench.Options, cpuFile, memFile, traceFile string) (bench.Result, error) {
	if traceFile != "" {
		f, err := os.Create(traceFile)
		if err != nil {
			return bench.Result{}, err
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			return bench.Result{}, fmt.Errorf("execution trace: %w", err)
		}
		defer trace.Stop()
	}
	if memFile != "" {
		f, err := os.Create(memFile)
		if err != nil {
			return bench.Result{}, err
		}
		defer f.Close()
		o.HeapProfile = f
	}
	if cpuFile != "" {
		f, err := os.Create(cpuFile)
		if err != nil {
			return bench.Result{}, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return bench.Result{}, fmt.Errorf("cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	return bench.Run(ctx, o)
}

// benchChildren runs each query in a process of its own, with the same
// flags, so that each one's peak RSS is its own.
func benchChildren(ctx context.Context, names, args []string, stdout, stderr io.Writer) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "streamsqld bench:", err)
		return 1
	}
	var rest []string // args without --query
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--query" || a == "-query":
			i++
		case strings.HasPrefix(a, "--query=") || strings.HasPrefix(a, "-query="):
		default:
			rest = append(rest, a)
		}
	}
	status := 0
	for _, q := range names {
		cmd := exec.CommandContext(ctx, self, append([]string{"bench", "nexmark", "--query", q}, rest...)...)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(runtime.GOMAXPROCS(0)))
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(stderr, "streamsqld bench: %s: %v\n", q, err)
			status = 1
		}
	}
	return status
}
