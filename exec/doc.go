// Package exec runs physical plans: immutable operator trees (Node) whose
// executions (Iterator) pull Arrow record batches from their inputs.
//
// The operators are vectorized: they work on whole batches (about 4096 rows)
// with tight loops over typed Arrow buffers. Grouping, distinct, set operations
// and hash joins share one open-addressing hash table (hashtable.go) with
// specialized paths for integer and text keys; aggregate states live in flat
// typed slices indexed by group id (agg_*.go). Sort compares with per-type
// comparators (compare.go) and gathers with a typed take (take.go).
//
// A Node is shared and never mutated after the planner builds it; everything
// an execution remembers lives in its Iterator, which is used by one goroutine.
// Batches returned by Next belong to the caller.
package exec
