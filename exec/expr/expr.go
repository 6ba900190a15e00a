package expr

import (
	"context"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// Expr is a bound, typed scalar expression. Expr trees are immutable once
// built and may be evaluated concurrently by many goroutines; whatever an
// evaluation needs to remember lives in the Context.
type Expr interface {
	// Type is the SQL type of the result.
	Type() types.T
	// Eval computes the expression for every row of b and returns an array of
	// b.NumRows() values with Type().ArrowType(). The caller owns the result.
	// Row errors (division by zero, overflow, bad casts) fail the whole call
	// with a *pgerr.Error.
	Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error)
	// String renders the expression for EXPLAIN, close to PostgreSQL's deparse.
	String() string
}

// Context carries what evaluation needs beyond the batch. One Context serves
// one statement execution; it is used by one goroutine at a time unless noted.
type Context struct {
	// Ctx is canceled when the statement is canceled or times out.
	Ctx context.Context
	// Mem allocates result arrays; nil means memory.DefaultAllocator.
	Mem memory.Allocator
	// Params are the values of $1, $2, ... (Params[0] is $1).
	Params []types.Value
	// Location is the session's TimeZone (for timestamptz <-> timestamp,
	// date_trunc on timestamptz, text output).
	Location *time.Location
	// Now is the statement's transaction timestamp: now(), current_timestamp.
	Now time.Time
	// Session answers session-dependent functions (current_user, current_schema,
	// current_setting, version...). May be nil in tests.
	Session SessionInfo
	// Catalog answers catalog-dependent functions and casts (regclass,
	// format_type, pg_table_is_visible, pg_get_expr...). May be nil in tests.
	Catalog CatalogInfo
	// Outer holds the current outer rows of correlated subqueries, innermost
	// last; OuterRef reads from it.
	Outer []OuterRow
	// Subqueries caches the result of uncorrelated subqueries, keyed by node.
	Subqueries map[*Subquery]any
	// Shared holds the results of plan parts computed once per execution
	// and read several times (exec.SharedScan); nil computes each read
	// anew. Set by whoever creates the execution's Context.
	Shared *SharedResults
	// Tx, when set, is the session's open transaction: table scans (exec)
	// read tables as the transaction sees them, its own writes included.
	// Expressions never use it; it rides here so that every plan of the
	// statement, subqueries included, sees the same transaction.
	Tx *storage.Tx
	// Views, when set, are the snapshots of the materialized views the
	// statement reads, all as of one epoch (exec.Context.Views); they ride
	// here so that nested plans (subqueries) read the same snapshots.
	Views map[uint32][]arrow.RecordBatch
	// Budget is the statement's memory budget (nil: unlimited): kernels
	// that build values check what they build against it, and operators
	// reserve the state they retain from it (exec/membudget).
	Budget *membudget.Query
}

// MemBudget returns the statement's memory budget (nil: unlimited).
func (c *Context) MemBudget() *membudget.Query {
	if c == nil {
		return nil
	}
	return c.Budget
}

// Allocator returns ctx.Mem or the default allocator.
func (c *Context) Allocator() memory.Allocator {
	if c == nil || c.Mem == nil {
		return memory.DefaultAllocator
	}
	return c.Mem
}

// OuterRow is one row of an enclosing query, seen by a correlated subquery.
type OuterRow struct {
	Batch arrow.RecordBatch
	Row   int
}

// SessionInfo is the session state that SQL functions can read.
type SessionInfo interface {
	User() string
	Database() string
	// Setting returns a run-time parameter's value (current_setting); ok false
	// when the parameter does not exist.
	Setting(name string) (value string, ok bool)
	// SearchPath returns the schemas in search order (current_schemas).
	SearchPath() []string
	// BackendPID returns pg_backend_pid().
	BackendPID() int32
}

// CatalogInfo is the catalog as SQL functions see it. Implemented by the
// catalog package; safe for concurrent use.
type CatalogInfo interface {
	// RelationOID resolves a possibly qualified relation name ('t',
	// 'public.t', '"T"') as a regclass cast does.
	RelationOID(name string, searchPath []string) (uint32, error)
	// RelationName renders a relation OID as regclass output does
	// (qualified only when not visible on the search path).
	RelationName(oid uint32, searchPath []string) (string, bool)
	// TypeOID resolves a type name as a regtype cast does.
	TypeOID(name string) (uint32, error)
	// TableIsVisible implements pg_table_is_visible.
	TableIsVisible(oid uint32, searchPath []string) bool
	// ColumnDefault returns the text of a column default (pg_get_expr on pg_attrdef).
	ColumnDefault(relOID uint32, attnum int16) (string, bool)
	// ViewDefinition returns a view's query text (pg_get_viewdef).
	ViewDefinition(oid uint32) (string, bool)
	// ObjectDescription returns a COMMENT (obj_description / col_description).
	ObjectDescription(oid uint32, subID int32) (string, bool)
	// UserName renders a role OID (pg_get_userbyid).
	UserName(oid uint32) string
}
