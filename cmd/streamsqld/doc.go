// Command streamsqld is the streamsql server: it opens the data directory
// and serves the PostgreSQL protocol until SIGINT or SIGTERM.
//
//	streamsqld [--listen 127.0.0.1:5433] [--data-dir ./streamsql-data] [--clock wall|manual]
//
// --clock manual makes processing time (idle_timeout, EARLY EVERY, EMIT
// EVERY) a clock that starts at 2024-01-01 00:00:00 UTC and only moves by
// ADVANCE CLOCK BY interval, for tests (docs/watermarks.md).
//
// `streamsqld bench nexmark --query q3 --events 10000000` runs a Nexmark
// query in-process instead and reports its throughput and memory (see
// docs/benchmarks.md and package bench).
package main
