// Package corpora runs the peers' window test suites in ../shared/corpora
// (RisingWave's and Flink's .slt files) through tests/slt with an adapter for
// their dialect. Translate is a pure function, safe for concurrent use.
package corpora

import (
	"regexp"
	"strings"
)

var (
	// setNoop matches RisingWave session settings that have no meaning
	// here: streamsql views are always fed at every epoch, with one
	// parallelism.
	setNoop = regexp.MustCompile(`(?is)^\s*set\s+(rw_implicit_flush|implicit_flush|upsert_dml|streaming_parallelism|rw_streaming_[a-z_]+|streaming_[a-z_]+|rw_enable_[a-z_]+|background_ddl|query_mode)\b`)
	// utcOffset is a timestamptz's zero offset as RisingWave renders it.
	utcOffset = regexp.MustCompile(`(\d\d:\d\d:\d\d(?:\.\d+)?)\+00:00\b`)
	// minutes is a timestamp at minute precision (Flink's docs, transcribed).
	minutes = regexp.MustCompile(`(\d{4}-\d\d-\d\d \d\d:\d\d)( |$)`)
	// dml starts a statement that writes a table.
	dml = regexp.MustCompile(`(?is)^\s*(insert|update|delete)\b`)
)

// Translate adapts one RisingWave statement to streamsql:
//   - SET [rw_]implicit_flush / upsert_dml / streaming_parallelism and friends
//     become a no-op (upsert_dml: our INSERT into a table with a primary key
//     already fails on a duplicate; the files that rely on upserts are skipped)
//     query;
//   - a DML statement is followed by FLUSH, so the views reflect it when the
//     next record runs (RisingWave's implicit flush; harmless where the file
//     flushes itself).
func Translate(sql string) string {
	switch {
	case setNoop.MatchString(sql):
		return "SELECT 1"
	case dml.MatchString(sql):
		return strings.TrimRight(strings.TrimSpace(sql), ";") + ";\nFLUSH"
	}
	return sql
}

// Expect adapts one expected result line of a peer's file to our rendering
// of the same values: RisingWave's "+00:00" zero offset becomes "+00"
// (PostgreSQL's), and Flink's doc timestamps at minute precision
// ("2020-04-15 08:05") gain their seconds. Safe for concurrent use.
func Expect(line string) string {
	line = utcOffset.ReplaceAllString(line, "$1+00")
	return minutes.ReplaceAllString(line, "$1:00$2")
}
