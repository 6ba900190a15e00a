package engine

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/sql"
)

// The EMIT clause (streaming-sql.md section 4) ends the query of CREATE
// MATERIALIZED VIEW (also under EXPLAIN) and of SUBSCRIBE (query); the
// planner gives it to the query's windowed aggregations
// (planner.Env.Emit). A view stores it after its query text
// (sql.Emit.Text), so that a restart plans it the same way.

// stmtEmit returns a statement's EMIT clause, or nil.
func stmtEmit(stmt sql.Statement) *sql.Emit {
	if stmt.Ext == nil {
		return nil
	}
	return stmt.Ext.Emit
}

// stmtTemporal returns a statement's FOR SYSTEM_TIME AS OF clauses.
func stmtTemporal(stmt sql.Statement) []sql.TemporalJoin {
	if stmt.Ext == nil {
		return nil
	}
	return stmt.Ext.TemporalJoins
}

// stmtSessions returns a statement's SESSION WITH GAP window frames.
func stmtSessions(stmt sql.Statement) []sql.SessionFrame {
	if stmt.Ext == nil {
		return nil
	}
	return stmt.Ext.SessionFrames
}

// emitAllowed reports whether stmt may carry an EMIT clause: CREATE
// MATERIALIZED VIEW, or EXPLAIN of it (SUBSCRIBE has no PostgreSQL tree
// and is not checked here).
func emitAllowed(stmt sql.Statement) bool {
	n := stmt.AST
	if e := n.GetExplainStmt(); e != nil {
		n = e.Query
	}
	c := n.GetCreateTableAsStmt()
	return c != nil && c.Objtype == pg.ObjectType_OBJECT_MATVIEW
}
