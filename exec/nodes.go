package exec

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// The physical operators. The planner builds these structs directly (fields
// are the contract); each has its Open/Columns/Children/Explain in its own
// file (scan.go, filter.go, ...). Out columns (Cols) are always given by the
// planner, with the result names the user will see.

// Scan reads a stored table's snapshot, skipping deleted rows.
type Scan struct {
	Table *storage.Table
	Name  string // table name for EXPLAIN
	// Cols are the table's columns to read, in output order; Proj[i] is the
	// table column index of output column i.
	Cols []types.Column
	Proj []int
	// WithRowID appends an int8 column holding each row's id (for UPDATE and DELETE).
	WithRowID bool
	// Filter, when set, is applied while scanning (pushed down), over the
	// output columns (before the row id column).
	Filter expr.Expr
	// Key, when set (see KeyLookup, scan_key.go), is the Param or Const the
	// single-column primary key must equal for Filter to hold: Open looks
	// the row up in the key index instead of reading every chunk.
	Key expr.Expr
}

// FuncScan produces batches from a function at Open time (system tables,
// set-returning functions such as generate_series over constants).
type FuncScan struct {
	Name string
	// Scan is the node's EXPLAIN label ("Seq Scan" for a materialized
	// view's or a source's rows, "CTE Scan", "WorkTable Scan", "Recursive
	// Union" without a Name); "" is "Function Scan".
	Scan    string
	Cols    []types.Column
	Produce func(ctx *Context) ([]arrow.RecordBatch, error)
	// Stream, when set, is used instead of Produce: it returns an iterator
	// that makes its batches on demand (long series stay lazy and cancelable).
	Stream func(ctx *Context) (Iterator, error)
}

// Values produces literal rows (VALUES lists, and the one empty row of a SELECT
// without FROM when Cols is empty and len(Rows) == 1).
type Values struct {
	Cols []types.Column
	Rows [][]expr.Expr
}

// Filter keeps the rows where Cond is true.
type Filter struct {
	Input Node
	Cond  expr.Expr
}

// Project computes Exprs over each input batch.
type Project struct {
	Input Node
	Exprs []expr.Expr
	Cols  []types.Column
}

// AggCall is one aggregate in a HashAgg.
type AggCall struct {
	Fn       *AggFunc
	Args     []expr.Expr // over the input columns
	Distinct bool
	Filter   expr.Expr // FILTER (WHERE ...), nil when absent
	OrderBy  []SortKey // within-aggregate order (string_agg, array_agg)
}

// HashAgg groups by GroupBy and computes Aggs. Output columns are the group
// keys then the aggregates. With no GroupBy it produces exactly one row, even
// over empty input (count(*) = 0).
type HashAgg struct {
	Input   Node
	GroupBy []expr.Expr
	Aggs    []AggCall
	Cols    []types.Column
}

// SortKey orders by an expression over the input columns.
type SortKey struct {
	E          expr.Expr
	Desc       bool
	NullsFirst bool // PostgreSQL default: true when Desc, false otherwise
}

// Sort orders its input completely (stable).
type Sort struct {
	Input Node
	Keys  []SortKey
}

// Limit skips Offset rows then passes at most Limit rows. Either may be nil;
// both are evaluated once (constants or parameters); a negative count is an
// error (2201W / 2201X), NULL means no limit.
type Limit struct {
	Input         Node
	Limit, Offset expr.Expr
	// WithTies (FETCH FIRST ... WITH TIES) holds the ORDER BY keys of the
	// sorted input: rows equal on them to the last row counted pass too.
	WithTies []SortKey
}

// JoinKind is the join type.
type JoinKind uint8

// Join kinds. Semi and Anti output the left columns only.
const (
	InnerJoin JoinKind = iota
	LeftJoin
	RightJoin
	FullJoin
	SemiJoin
	AntiJoin
)

// HashJoin joins on LeftKeys[i] = RightKeys[i] (NULL keys never match), then
// Residual (over the left columns followed by the right columns), building
// the hash table from Right. Output: left columns then right columns, except
// Semi/Anti which output the left columns.
type HashJoin struct {
	Left, Right         Node
	Kind                JoinKind
	LeftKeys, RightKeys []expr.Expr
	Residual            expr.Expr
	Cols                []types.Column

	noSpill bool // a spilled partition's join: never spills again
}

// NestedLoopJoin joins on an arbitrary condition (nil: cross join), over the
// left columns followed by the right columns. Output as HashJoin.
type NestedLoopJoin struct {
	Left, Right Node
	Kind        JoinKind
	Cond        expr.Expr
	Cols        []types.Column
}

// SetOpKind is UNION, INTERSECT or EXCEPT.
type SetOpKind uint8

// Set operations.
const (
	Union SetOpKind = iota
	Intersect
	Except
)

// SetOp combines two inputs of the same column types. UNION ALL is Append.
type SetOp struct {
	Kind        SetOpKind
	All         bool
	Left, Right Node
	Cols        []types.Column
}

// Append concatenates its inputs (UNION ALL).
type Append struct {
	Inputs []Node
	Cols   []types.Column
}

// Distinct removes duplicate rows (NULLs equal), keeping the first of each.
// With On set (DISTINCT ON), rows are distinct on those expressions only.
type Distinct struct {
	Input Node
	On    []expr.Expr
}

// FrameMode is ROWS, RANGE or GROUPS.
type FrameMode uint8

// Frame modes.
const (
	FrameRange FrameMode = iota
	FrameRows
	FrameGroups
	// FrameSession is RisingWave's SESSION WITH GAP frame: a row's frame
	// is its session, the run of the partition's rows (in the one
	// ascending ORDER BY key) in which each is less than Gap after the
	// one before it. Start and End are unused.
	FrameSession
)

// BoundKind is one end of a window frame.
type BoundKind uint8

// Frame bounds.
const (
	UnboundedPreceding BoundKind = iota
	Preceding
	CurrentRow
	Following
	UnboundedFollowing
)

// FrameBound is one end of a frame; Offset is set for Preceding/Following.
type FrameBound struct {
	Kind   BoundKind
	Offset expr.Expr
}

// Frame is a window frame. The default (no ORDER BY: whole partition; with
// ORDER BY: RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) is spelled out
// by the planner.
type Frame struct {
	Mode       FrameMode
	Start, End FrameBound
	// Gap is a FrameSession frame's gap: a constant interval.
	Gap expr.Expr
	// Exclude is the EXCLUDE clause (default: NO OTHERS).
	Exclude FrameExclusion
}

// FrameExclusion is a frame's EXCLUDE clause.
type FrameExclusion uint8

// Frame exclusions.
const (
	ExcludeNoOthers   FrameExclusion = iota // EXCLUDE NO OTHERS (the default)
	ExcludeCurrentRow                       // EXCLUDE CURRENT ROW
	ExcludeGroup                            // EXCLUDE GROUP: the current row and its peers
	ExcludeTies                             // EXCLUDE TIES: the peers, not the current row
)

// WindowCall is one window function.
type WindowCall struct {
	Fn          *WindowFunc
	Args        []expr.Expr
	PartitionBy []expr.Expr
	OrderBy     []SortKey
	Frame       Frame
	Filter      expr.Expr
	Distinct    bool
}

// Window appends one column per call to its input's columns. Output rows may
// come in a different order than input rows (partitioned and sorted).
type Window struct {
	Input Node
	Calls []WindowCall
	Cols  []types.Column
}
