// Package bench runs the Nexmark benchmark in-process: a query of
// bench/nexmark/*.sql over the nexmark connector's generator, on the path a
// materialized view takes (catalog sources, planner.PlanStream, an
// exec/dataflow job with its source readers and exec/stream operators), but
// ending in a sink that counts and discards its rows (Nexmark's blackhole
// sink) instead of a Materialize, or in a Materialize when asked.
//
// Run measures the wall time until the bounded sources are exhausted and the
// last epoch is complete (dataflow's Flush), the process's CPU time over the
// same span (getrusage), and memory: peak RSS, the peak Go heap sampled
// during the run, and the live heap after a GC at the end, while the job's
// state is still held. GeneratorOnly runs the same sources into discard
// sinks with no operator, so the generator's own cost can be subtracted.
//
//	r, err := bench.Run(ctx, bench.Options{Query: "q3", Events: 10_000_000})
//	fmt.Println(r) // events/s, events/s per core, memory
//
// streamsqld's `bench nexmark` subcommand and the Go benchmarks beside this
// file call Run; docs/benchmarks.md has the numbers.
//
// Ownership and concurrency: Run owns everything it creates (a temporary
// catalog directory, a dataflow runtime) and removes it before returning.
// Several Runs may go on at once, but their CPU and RSS figures are the
// process's, so measure one at a time.
package bench
