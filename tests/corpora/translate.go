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
	setNoop = regexp.MustCompile(`(?is)^\s*set\s+(rw_implicit_flush|streaming_parallelism|rw_streaming_[a-z_]+|streaming_[a-z_]+|rw_enable_[a-z_]+|background_ddl|query_mode)\b`)
	// dml starts a statement that writes a table.
	dml = regexp.MustCompile(`(?is)^\s*(insert|update|delete)\b`)
)

// Translate adapts one RisingWave statement to streamsql:
//   - SET rw_implicit_flush / streaming_parallelism and friends become a no-op
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
