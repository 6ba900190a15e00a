// Package blackhole is the blackhole sink (connector = 'blackhole'): it
// counts the rows it receives and drops them, for benchmarks and tests.
// With a FORMAT clause it also encodes every row (and drops the bytes), so
// that a benchmark can measure the encoder. It registers itself at init.
//
// Its writer commits nothing anywhere: Commit moves the rows written since
// the last commit into Status.Rows (rows "made visible"), so
// streamsql_sinks shows what a real sink would have delivered.
package blackhole
