package planner

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/storage"
)

// The logical algebra. Every column a logical node produces has a statement-
// wide id (an index into binder.cols); expressions in logical nodes read
// columns by id (expr.ColRef.Idx and expr.OuterRef.Idx hold ids, not
// positions). Because ids never change, rewrite rules can move filters and
// reorder joins freely; physical translation (physical.go) turns ids into
// batch positions. Logical nodes are built and rewritten by one goroutine.
type lnode interface {
	// outIDs returns the ids of the node's output columns, in order.
	outIDs() []int
}

// lScan reads a stored table. ids[i] is the id of table column i; rowID is
// the id of the row-id column, or -1.
type lScan struct {
	rel    *catalog.Relation
	table  *storage.Table
	alias  string
	ids    []int
	rowID  int
	filter []expr.Expr
	// asOf is the FOR SYSTEM_TIME AS OF clause of a lookup join's table
	// (stream_lookup.go); lookup is set once a JOIN took the scan as its
	// table side.
	asOf   *sql.TemporalJoin
	lookup bool
}

// lFunc produces rows from a function: system tables and set-returning
// functions in FROM. Its argument expressions (which may read outer
// columns) are handed to produce after physical translation.
type lFunc struct {
	name    string
	scan    string // exec.FuncScan.Scan: its EXPLAIN label, "" for "Function Scan"
	ids     []int
	args    []expr.Expr
	produce func(args []expr.Expr) func(ctx *exec.Context) ([]arrow.RecordBatch, error)
	// stream, when set, replaces produce with a lazy iterator.
	stream func(args []expr.Expr) func(ctx *exec.Context) (exec.Iterator, error)
	// lookup, when set (a keyed materialized view), replaces produce under
	// a filter that needs column keyCol to equal key (a Param or Const):
	// it returns just the matching row (stream_bind.go).
	lookup func(key expr.Expr) func(ctx *exec.Context) ([]arrowBatch, error)
	keyCol int
	// srf is the call of a set-returning function in FROM (nil for other
	// rows), ordinality whether its last column numbers the values: the
	// stream planner makes a ProjectSet of it (stream_lateral.go).
	srf        *srfCall
	ordinality bool
}

// lValues is a VALUES list (or the single empty row of a SELECT without FROM).
type lValues struct {
	ids  []int
	rows [][]expr.Expr
}

// lFilter keeps the rows where every condition is true.
type lFilter struct {
	in    lnode
	conds []expr.Expr
}

// lProject computes exprs, giving the results ids.
type lProject struct {
	in    lnode
	ids   []int
	exprs []expr.Expr
}

// lJoin joins left and right on the conjunction conds (empty: cross join).
type lJoin struct {
	left, right lnode
	kind        exec.JoinKind
	conds       []expr.Expr
	// temporal marks a lookup join (FOR SYSTEM_TIME AS OF PROCTIME()): right
	// is the table looked up; the join keeps its sides (stream_lookup.go).
	temporal bool
}

// lAgg groups by groups (outputs groupIDs) and computes aggs (outputs aggIDs).
type lAgg struct {
	in       lnode
	groupIDs []int
	groups   []expr.Expr
	aggIDs   []int
	aggs     []exec.AggCall
}

// lWindow appends one column per window call.
type lWindow struct {
	in    lnode
	ids   []int
	calls []exec.WindowCall
}

// lSort orders rows.
type lSort struct {
	in   lnode
	keys []exec.SortKey
}

// lLimit is LIMIT/OFFSET; with ties set (FETCH FIRST ... WITH TIES, over
// an lSort with those keys) rows tying with the last one counted pass too.
type lLimit struct {
	in            lnode
	limit, offset expr.Expr
	ties          []exec.SortKey
}

// lDistinct removes duplicates (on all columns, or on the on expressions).
type lDistinct struct {
	in lnode
	on []expr.Expr
}

// lSetOp is UNION / INTERSECT / EXCEPT; right's columns line up with left's
// by position, and the node outputs ids.
type lSetOp struct {
	kind        exec.SetOpKind
	all         bool
	left, right lnode
	ids         []int
}

func (n *lScan) outIDs() []int {
	if n.rowID >= 0 {
		return append(append([]int(nil), n.ids...), n.rowID)
	}
	return n.ids
}
func (n *lFunc) outIDs() []int    { return n.ids }
func (n *lValues) outIDs() []int  { return n.ids }
func (n *lFilter) outIDs() []int  { return n.in.outIDs() }
func (n *lProject) outIDs() []int { return n.ids }
func (n *lJoin) outIDs() []int {
	if n.kind == exec.SemiJoin || n.kind == exec.AntiJoin {
		return n.left.outIDs()
	}
	return append(append([]int(nil), n.left.outIDs()...), n.right.outIDs()...)
}
func (n *lAgg) outIDs() []int      { return append(append([]int(nil), n.groupIDs...), n.aggIDs...) }
func (n *lWindow) outIDs() []int   { return append(append([]int(nil), n.in.outIDs()...), n.ids...) }
func (n *lSort) outIDs() []int     { return n.in.outIDs() }
func (n *lLimit) outIDs() []int    { return n.in.outIDs() }
func (n *lDistinct) outIDs() []int { return n.in.outIDs() }
func (n *lSetOp) outIDs() []int    { return n.ids }

// lProjectSet appends the values of the set-returning functions of a
// select list (in lockstep), repeating each input row once per value.
type lProjectSet struct {
	in    lnode
	calls []*srfCall
	args  [][]expr.Expr
	ids   []int
	// outer keeps a row the functions give nothing for, once, their
	// columns NULL (LEFT JOIN LATERAL f(...) ON true).
	outer bool
	// ordinality: the last of ids numbers each row's values from 1
	// (f(...) WITH ORDINALITY in FROM, one function).
	ordinality bool
	// keep are conditions every output row must meet; with outer, a row
	// none of whose values meets them is kept once with NULLs (LEFT JOIN
	// LATERAL f(...) ON cond). Only the stream planner sets them
	// (stream_lateral.go); the batch engine runs such a join as an lApply.
	keep []expr.Expr
}

func (n *lProjectSet) outIDs() []int { return append(append([]int(nil), n.in.outIDs()...), n.ids...) }

// lShared is an already optimized input used by several parents (the
// grouping sets of one query); the optimizer leaves it alone, since
// rewriting it in place for one parent would change it for the others.
type lShared struct {
	in lnode
	// twice marks a streaming plan's input read by two parents (NOT IN,
	// stream_notin.go): each plans its own copy.
	twice bool
	// key, when set, makes the input computed once per execution for
	// every lShared with the same key (a WITH query with volatile
	// functions, cte_shared.go): exec.SharedScan.
	key *exec.SharedKey
}

func (n *lShared) outIDs() []int { return n.in.outIDs() }
