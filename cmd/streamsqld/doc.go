// Command streamsqld is the streamsql server: it opens the data directory
// and serves the PostgreSQL protocol until SIGINT or SIGTERM.
//
//	streamsqld [--listen 127.0.0.1:5433] [--data-dir ./streamsql-data] [--clock wall|manual]
//
// --clock manual makes processing time (idle_timeout, EARLY EVERY, EMIT
// EVERY) a clock that starts at 2024-01-01 00:00:00 UTC and only moves by
// ADVANCE CLOCK BY interval, for tests (docs/watermarks.md).
//
// A table log damaged before its end (a checksum failure with valid data
// after it, or a log shorter than a checkpoint recorded) stops the start
// with exit status 3 and a message naming the table, file and offset;
// --recover-damaged starts anyway, keeping the rows before the damage and
// moving the rest of the file into <data-dir>/damaged (docs/streaming.md,
// "Restarts and checkpoints").
//
// `streamsqld bench nexmark --query q3 --events 10000000` runs a Nexmark
// query in-process instead and reports its throughput and memory (see
// docs/benchmarks.md and package bench).
//
// `streamsqld kafka-dev [--listen 127.0.0.1:9092] [--topic metrics:4]` runs
// a development Kafka broker (franz-go's kfake, in memory, nothing kept)
// for trying the Kafka source and sinks and for tests (docs/connectors.md).
package main
