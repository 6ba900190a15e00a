package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// The planner's contract with engine/. STUBS until the binder lands.

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
	Catalog    Catalog
	SearchPath []string
	// Params holds the parameter types the client declared ($1 is Params[0]);
	// zero-value or Unknown entries are inferred from context.
	Params []types.T
	// Eval is used to fold constants (now(), casts of literals).
	Eval *expr.Context
}

// Query is a planned SELECT (or VALUES, set operation, WITH ... SELECT).
type Query struct {
	Root    exec.Node
	Columns []types.Column
	// ParamTypes are the final types of $1..$n (inferred ones included;
	// parameters nothing constrains are text).
	ParamTypes []types.T
}

// PlanSelect binds and plans a SelectStmt node.
func PlanSelect(env *Env, stmt *pg.Node) (*Query, error) {
	return nil, pgerr.Unsupported("SELECT is not implemented yet")
}

// Insert is a planned INSERT: Source yields complete rows in table column
// order, with defaults applied and values coerced to the column types.
type Insert struct {
	Rel        *catalog.Relation
	Table      *storage.Table
	Source     exec.Node
	Returning  *Returning
	ParamTypes []types.T
}

// Update is a planned UPDATE: Source yields the row id (int8) followed by the
// complete new row in table column order.
type Update struct {
	Rel        *catalog.Relation
	Table      *storage.Table
	Source     exec.Node
	Returning  *Returning
	ParamTypes []types.T
}

// Delete is a planned DELETE: Source yields the row id (int8) followed by the
// complete old row (for RETURNING).
type Delete struct {
	Rel        *catalog.Relation
	Table      *storage.Table
	Source     exec.Node
	Returning  *Returning
	ParamTypes []types.T
}

// Returning computes a RETURNING list over the rows written (for INSERT and
// UPDATE the new rows, for DELETE the old rows, in table column order).
type Returning struct {
	Exprs   []expr.Expr
	Columns []types.Column
}

// PlanInsert binds an InsertStmt.
func PlanInsert(env *Env, stmt *pg.InsertStmt) (*Insert, error) {
	return nil, pgerr.Unsupported("INSERT is not implemented yet")
}

// PlanUpdate binds an UpdateStmt.
func PlanUpdate(env *Env, stmt *pg.UpdateStmt) (*Update, error) {
	return nil, pgerr.Unsupported("UPDATE is not implemented yet")
}

// PlanDelete binds a DeleteStmt.
func PlanDelete(env *Env, stmt *pg.DeleteStmt) (*Delete, error) {
	return nil, pgerr.Unsupported("DELETE is not implemented yet")
}

// TableDef is a bound CREATE TABLE: the relation to create (OID unset).
// Column defaults are validated (they must bind) and kept as text.
func TableDef(env *Env, stmt *pg.CreateStmt) (*catalog.Relation, error) {
	return nil, pgerr.Unsupported("CREATE TABLE is not implemented yet")
}

// ViewDef is a bound CREATE VIEW: the relation (OID unset, ViewQuery set to
// the query's text taken from source) and the OIDs of the relations it reads.
func ViewDef(env *Env, stmt *pg.ViewStmt, source string) (*catalog.Relation, []uint32, error) {
	return nil, nil, pgerr.Unsupported("CREATE VIEW is not implemented yet")
}

// BindType resolves a TypeName node (for CAST, column definitions, Parse's
// parameter types given by name).
func BindType(tn *pg.TypeName) (types.T, error) {
	return types.TUnknown, pgerr.Unsupported("types are not implemented yet")
}
