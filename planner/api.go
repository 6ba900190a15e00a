package planner

import (
	"github.com/apache/arrow-go/v18/arrow"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// The planner's contract with engine/.

// Catalog is what binding needs from the catalog (implemented by
// *catalog.Catalog). Safe for concurrent use.
type Catalog interface {
	// Resolve finds a relation by name; schema "" searches searchPath
	// (pg_catalog is always searched first, as PostgreSQL does). A missing
	// relation is 42P01 `relation "x" does not exist`.
	Resolve(schema, name string, searchPath []string) (*catalog.Relation, error)
	// Table returns the stored data of a table relation (nil for others).
	Table(oid uint32) *storage.Table
}

// Env is the binding environment of one statement.
type Env struct {
	Catalog Catalog
	// ModifyingWith lets the statement's outermost WITH hold INSERT,
	// UPDATE and DELETE (ModifyingCTE): set where the caller runs them.
	ModifyingWith bool
	SearchPath    []string
	// Params holds the parameter types the client declared ($1 is Params[0]);
	// zero-value or Unknown entries are inferred from context.
	Params []types.T
	// Eval is used to fold constants (now(), casts of literals).
	Eval *expr.Context
	// Source is the statement's query string; parse-tree locations are byte
	// offsets into it, turned into error positions. "" means no positions.
	Source string
	// Streams, if set, supplies the rows of materialized views for batch
	// queries and the keys of views for streaming plans. Nil: materialized
	// views cannot be read in batch queries and have no stream key.
	Streams Streams
	// Emit is the EMIT clause of a continuous query (PlanStream); nil is
	// EMIT ON UPDATE. Its offsets point into Source.
	Emit *sql.Emit
	// TemporalJoins are the statement's FOR SYSTEM_TIME AS OF clauses
	// (PlanStream: lookup joins, stream_lookup.go). Offsets point into the
	// text the planned tree was parsed from.
	TemporalJoins []sql.TemporalJoin
	// SessionFrames are the statement's SESSION WITH GAP window frames
	// (window_session.go). Offsets point into the text the planned tree
	// was parsed from.
	SessionFrames []sql.SessionFrame
	// Parallelism is the number of instances PlanStream gives each keyed
	// operator (stream_parallel.go); 0 or 1: one.
	Parallelism int
	// ParallelismAuto (a streaming_parallelism that was not SET) lowers
	// Parallelism for a plan with several keyed operators
	// (stream_parallel_auto.go); StreamQuery.Parallelism is the result.
	ParallelismAuto bool
	// SplitDistinct is streaming_split_distinct: on, off or auto (the
	// server's default; "" is off): whether an aggregation with count(DISTINCT ...) is
	// planned as a split-distinct aggregation (stream_splitdistinct.go).
	SplitDistinct string
	// NoSharedReads plans every scan of a source as a read of its own
	// instead of one read shared by the plan's scans of that source
	// (stream_share.go); for the benchmark's comparison only.
	NoSharedReads bool
	// Access, if set, checks that role may use rel with every privilege of
	// priv, returning PostgreSQL's 42501 when not; Role is the session's
	// role. Relations a view reads are checked with the view owner's role.
	// Nil: no checks (superusers, plans of the server itself).
	Access func(role uint32, rel *catalog.Relation, priv catalog.Privilege) error
	Role   uint32
	// TempSchema is the name of the session's temporary schema (pg_temp_N),
	// where CREATE TEMP puts relations, whether or not it exists yet; ""
	// refuses temporary relations.
	TempSchema string
}

// Streams is what planning needs from the streaming runtime (implemented by
// engine/). Safe for concurrent use.
type Streams interface {
	// ViewRows returns a materialized view's rows as of the last completed
	// epoch. The batches are shared and immutable: callers neither modify
	// nor release them.
	ViewRows(oid uint32) ([]arrow.RecordBatch, error)
	// ViewKey returns a materialized view's stream key (column positions;
	// nil: none, rows are a multiset).
	ViewKey(oid uint32) []int
}

// ViewAppendOnly is implemented by Streams that know whether a view's
// output never retracts; a scan of such a view is append-only.
type ViewAppendOnly interface {
	ViewAppendOnly(oid uint32) bool
}

// Query is a planned SELECT (or VALUES, set operation, WITH ... SELECT).
type Query struct {
	Root    exec.Node
	Columns []types.Column
	// ParamTypes are the final types of $1..$n (inferred ones included;
	// parameters nothing constrains are text).
	ParamTypes []types.T
	// Views are the materialized views the query reads: the engine reads
	// them at one epoch (exec.Context.Views).
	Views []uint32
	// With lists the data-modifying WITH queries the statement runs first
	// (dml_with.go): the engine then reads every row before applying the
	// writes.
	With []*ModifyingCTE
	// Locks are the tables FOR UPDATE/SHARE locks (bind_lock.go): the
	// engine takes their write locks before it reads.
	Locks []RowLock
}

// PlanSelect binds and plans a SelectStmt node.
func PlanSelect(env *Env, stmt *pg.Node) (q *Query, err error) {
	defer recoverTo(&err)
	b := newBinder(env)
	b.lockable = true // Query.Locks (bind_lock.go)
	if s := stmt.GetSelectStmt(); s != nil && env != nil && env.ModifyingWith {
		b.topWith = s.WithClause
	}
	plan, err := b.query(stmt, nil, nil, false)
	if err != nil {
		return nil, err
	}
	if len(b.locks) > 0 && len(b.modifying) > 0 {
		return nil, pgerr.Unsupported("SELECT FOR UPDATE/SHARE with a data-modifying WITH query is not supported")
	}
	plan = optimize(plan)
	p := &physical{b: b}
	root, err := p.root(plan)
	if err != nil {
		return nil, err
	}
	// The output keeps the query's column names even where an identity
	// projection that renamed columns (a view's or an alias's) was removed.
	cols := append([]types.Column(nil), root.Columns()...)
	for i, id := range plan.outIDs() {
		if i < len(cols) {
			cols[i].Name = b.cols[id].name
			cols[i].TableOID, cols[i].AttNum = b.cols[id].origin.rel, b.cols[id].origin.attnum
		}
	}
	return &Query{Root: root, Columns: cols, ParamTypes: b.paramTypes(), Views: b.matviews, With: b.modifying, Locks: b.locks}, nil
}

// Insert is a planned INSERT: Source yields complete rows in table column
// order, with defaults applied and values coerced to the column types.
type Insert struct {
	Rel        *catalog.Relation
	Table      *storage.Table
	Source     exec.Node
	Returning  *Returning
	OnConflict *OnConflict // nil without ON CONFLICT
	// Checks are the table's CHECK constraints (nil: none), checked on
	// every row written (constraints.go).
	Checks *RowChecks
	// Gen computes the table's generated columns (nil: none) on every row
	// written, before the checks (generated.go).
	Gen        *RowGen
	ParamTypes []types.T
	// With lists the data-modifying WITH queries the statement runs first
	// (dml_with.go).
	With []*ModifyingCTE
}

// Update is a planned UPDATE: Source yields the row id (int8) followed by the
// complete new row in table column order.
type Update struct {
	Rel        *catalog.Relation
	Table      *storage.Table
	Source     exec.Node
	Returning  *Returning
	Checks     *RowChecks // as Insert.Checks
	Gen        *RowGen    // as Insert.Gen
	ParamTypes []types.T
	// With lists the data-modifying WITH queries the statement runs first
	// (dml_with.go).
	With []*ModifyingCTE
}

// Delete is a planned DELETE: Source yields the row id (int8) followed by the
// complete old row (for RETURNING).
type Delete struct {
	Rel        *catalog.Relation
	Table      *storage.Table
	Source     exec.Node
	Returning  *Returning
	ParamTypes []types.T
	// With lists the data-modifying WITH queries the statement runs first
	// (dml_with.go).
	With []*ModifyingCTE
}

// Returning computes a RETURNING list over the rows written (for INSERT and
// UPDATE the new rows, for DELETE the old rows, in table column order).
type Returning struct {
	Exprs   []expr.Expr
	Columns []types.Column
}

// PlanInsert binds an InsertStmt.
func PlanInsert(env *Env, stmt *pg.InsertStmt) (p *Insert, err error) {
	defer recoverTo(&err)
	return planInsert(env, stmt)
}

// PlanUpdate binds an UpdateStmt.
func PlanUpdate(env *Env, stmt *pg.UpdateStmt) (p *Update, err error) {
	defer recoverTo(&err)
	return planUpdate(env, stmt)
}

// PlanDelete binds a DeleteStmt.
func PlanDelete(env *Env, stmt *pg.DeleteStmt) (p *Delete, err error) {
	defer recoverTo(&err)
	return planDelete(env, stmt)
}

// TableDef is a bound CREATE TABLE: the relation to create (OID unset).
// Column defaults are validated (they must bind) and kept as text.
func TableDef(env *Env, stmt *pg.CreateStmt) (r *catalog.Relation, err error) {
	defer recoverTo(&err)
	return tableDef(env, stmt)
}

// ViewDef is a bound CREATE VIEW: the relation (OID unset, ViewQuery set to
// the query's text taken from source) and the OIDs of the relations it reads.
func ViewDef(env *Env, stmt *pg.ViewStmt, source string) (r *catalog.Relation, deps []uint32, err error) {
	defer recoverTo(&err)
	return viewDef(env, stmt, source)
}

// BindType resolves a TypeName node (for CAST, column definitions, Parse's
// parameter types given by name).
func BindType(tn *pg.TypeName) (t types.T, err error) {
	defer recoverTo(&err)
	t, _, err = bindTypeName(tn)
	return t, err
}

// recoverTo turns a panic of the planner (a bug) into an internal error for
// the one statement, so that it never crosses the package boundary.
func recoverTo(err *error) {
	if r := recover(); r != nil {
		*err = pgerr.Internal("planner: %v", r)
	}
}

// DefaultExprs binds the defaults of columns cols of rel, for writes that
// leave those columns out (COPY with a column list); a column without a
// default gets NULL. The expressions read no columns.
func DefaultExprs(env *Env, rel *catalog.Relation, cols []int) (out []expr.Expr, err error) {
	defer recoverTo(&err)
	b := newBinder(env)
	p := &physical{b: b}
	for _, i := range cols {
		e, err := b.defaultExpr(rel, i)
		if err != nil {
			return nil, err
		}
		pe, err := p.expr(e, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, pe)
	}
	return out, nil
}
