package engine

import (
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// The streaming statements and clauses parse (sql/extensions.go); until the
// streaming runtime runs them, the engine refuses each one by name, with its
// position, rather than ignore it. CREATE TABLE's APPEND ONLY and WATERMARK
// FOR are kept in the catalog (tableStreamingClauses).

// checkStreamingClauses refuses the streaming clauses lifted from a
// PostgreSQL statement.
func checkStreamingClauses(stmt sql.Statement) error {
	x := stmt.Ext
	if x == nil || stmt.AST == nil {
		return nil
	}
	refuse := func(what string, pos int) error {
		return pgerr.Unsupported("%s is not supported yet", what).WithPosition(stmt.CharPos(pos))
	}
	_, createTable := stmt.AST.Node.(*pg.Node_CreateStmt) // see tableStreamingClauses
	switch {
	case x.Watermark != nil && !createTable:
		return refuse("WATERMARK FOR", x.Watermark.Pos)
	case x.AppendOnly && !createTable:
		return refuse("APPEND ONLY", stmt.Offset)
	case len(x.Structs) > 0:
		return refuse("STRUCT types", x.Structs[0].Pos)
	case x.Emit != nil && !emitAllowed(stmt):
		return pgerr.Unsupported("%s can only end the query of CREATE MATERIALIZED VIEW or SUBSCRIBE", x.Emit.Written).WithPosition(stmt.CharPos(x.Emit.Pos))
	case len(x.TemporalJoins) > 0 && !emitAllowed(stmt):
		return pgerr.Unsupported("FOR SYSTEM_TIME AS OF can only be used in the query of CREATE MATERIALIZED VIEW, CREATE SINK or SUBSCRIBE").
			WithPosition(stmt.CharPos(x.TemporalJoins[0].Pos))
	}
	return nil
}

// tableStreamingClauses stores CREATE TABLE's APPEND ONLY and WATERMARK FOR
// in rel.
func tableStreamingClauses(env *planner.Env, rel *catalog.Relation, stmt sql.Statement) error {
	x := stmt.Ext
	if x == nil {
		return nil
	}
	rel.AppendOnly = x.AppendOnly
	return watermarkClause(env, rel, stmt)
}

// watermarkClause stores the WATERMARK FOR clause of CREATE TABLE or CREATE
// SOURCE in rel (as text, catalog.Watermark) after binding it over rel's
// columns, so that a bad one fails here: the stream planner binds it again
// for every view that reads rel.
func watermarkClause(env *planner.Env, rel *catalog.Relation, stmt sql.Statement) error {
	if stmt.Ext == nil || stmt.Ext.Watermark == nil {
		return nil
	}
	w := stmt.Ext.Watermark
	rel.Watermark = &catalog.Watermark{Column: w.Column, Expr: w.Expr}
	for _, o := range w.Options {
		if rel.Watermark.Options == nil {
			rel.Watermark.Options = map[string]string{}
		}
		rel.Watermark.Options[o.Key] = o.Value
	}
	return planner.CheckWatermark(env, rel, planner.WatermarkPos{Source: stmt.Source, ColumnPos: w.ColumnPos, ExprPos: w.ExprPos})
}

// showRelations answers SHOW TABLES / MATERIALIZED VIEWS / SOURCES / SINKS:
// the names of that kind visible on the search path, sorted.
func (s *Session) showRelations(what string) (*Result, error) {
	var kind catalog.RelKind
	switch what {
	case "TABLES":
		kind = catalog.KindTable
	case "MATERIALIZED VIEWS":
		kind = catalog.KindMatView
	case "SOURCES":
		kind = catalog.KindSource
	case "SINKS":
		kind = catalog.KindSink
	default:
		return nil, pgerr.Unsupported("SHOW %s is not supported", what)
	}
	path := s.set.searchPath()
	var names []string
	for _, r := range s.eng.cat.Relations() {
		if r.Kind == kind && s.eng.cat.TableIsVisible(r.OID, path) {
			names = append(names, r.Name)
		}
	}
	sort.Strings(names)
	rows := make([][]string, len(names))
	for i, n := range names {
		rows[i] = []string{n}
	}
	return tableRows("SHOW", []types.Column{{Name: "Name", Type: types.TText}}, rows), nil
}
