package exec

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Node is an immutable physical plan operator. A plan is a tree of Nodes built
// by planner/; it holds no run-time state, so one plan can be opened many
// times, concurrently.
type Node interface {
	// Columns describes the rows this node produces.
	Columns() []types.Column
	// Children returns the inputs, for EXPLAIN and plan walks.
	Children() []Node
	// Explain returns this node's line in EXPLAIN, e.g.
	// "HashJoin (inner) on t.a = u.a".
	Explain() string
	// Open creates the node's running state for one execution. The returned
	// Iterator is used by one goroutine.
	Open(ctx *Context) (Iterator, error)
}

// Iterator is one execution of a Node: it produces batches on demand.
type Iterator interface {
	// Next returns the next batch, or (nil, nil) at the end. Batches have the
	// Node's Columns (as Arrow storage types, see types/arrow.go) and at least
	// one row. The caller owns the batch; it may be retained past the next call.
	Next() (arrow.RecordBatch, error)
	// Close releases the iterator's state; it is safe to call more than once
	// and before the end.
	Close() error
}

// Context is one statement execution's environment, shared by all of its
// operators (and their expressions through Eval).
type Context struct {
	Eval *expr.Context
	// BatchSize is the target number of rows per batch (default 4096).
	BatchSize int
	// Views holds the snapshots of the materialized views the statement
	// reads, all as of one epoch (taken by the engine before the plan is
	// opened); a view not in it is read at its own last epoch.
	Views map[uint32][]arrow.RecordBatch
	// TempDir, when set, is where operators past work_mem spill (Sort, HashAgg, HashJoin);
	// files there are unlinked as soon as they are created.
	TempDir string
	// Analyze, when set, counts rows, loops and time per node for EXPLAIN
	// ANALYZE (see OpenNode).
	Analyze *Analyze
	// Workers is how many goroutines one HashAgg (with GROUP BY) or
	// HashJoin probe of the statement may use, GOMAXPROCS at most; 0 or 1
	// runs every operator on the calling goroutine. The engine sets it to
	// 1 + max_parallel_workers_per_gather (see exec/parallel.go).
	Workers int
}

// DefaultBatchSize is the number of rows operators aim for in one batch.
const DefaultBatchSize = 4096

// Size returns ctx.BatchSize or the default.
func (c *Context) Size() int {
	if c == nil || c.BatchSize <= 0 {
		return DefaultBatchSize
	}
	return c.BatchSize
}
