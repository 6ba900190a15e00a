// Package slt reads and runs sqllogictest scripts against a PostgreSQL-protocol
// server.
//
// It understands two dialects of the format:
//
//   - the classic one (sqlite's sqllogictest, files ending in .test): one value
//     a line, rendered as the reference harness does (integers "%d", reals
//     "%.3f", NULL, "(empty)", unprintable characters as "@"), results larger
//     than the hash threshold stored as "N values hashing to <md5>";
//   - the sqllogictest-rs one (files ending in .slt or .slt.part): one row a
//     line, values in PostgreSQL's text form, compared after folding runs of
//     whitespace; "statement error <regex>", "query error <regex>",
//     "statement count N", "control substitution on|off", "let", "system ok"
//     (skipped) and "query ... retry N backoff Xs" (run once, never sleeps);
//     streamsql adds the column type letter '*' (that column's values are
//     not compared: they render as "*", e.g. a subscription's epoch_time)
//     and $__SCRIPT_DIR__ (the script's directory) to substitution;
//
// Both dialects accept skipif/onlyif, halt, hash-threshold, include and
// streamsql's own "restart" record, which restarts the server on the same data
// directory (to test durability) and reconnects.
//
// Parse turns a script into Records; a Runner executes them over pgconn using
// the simple query protocol, or optionally the extended one (text results
// either way), and reports per file
// "name: P passed, F failed, S skipped". A SkipList names records (path:line)
// that are known to differ from a corpus's expectations on purpose.
//
// Records and Scripts are immutable after Parse. A Runner runs one file at a
// time and must not be shared between goroutines; separate Runners may run
// concurrently against separate databases.
package slt
