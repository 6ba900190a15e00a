package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
)

// renameStreaming plans ALTER MATERIALIZED VIEW / FOREIGN TABLE (SOURCE) /
// TABLE ... RENAME TO when the relation is a materialized view or a source,
// and checks the object type the statement named against the relation's
// kind with PostgreSQL's errors. It returns (nil, nil) for tables and plain
// views under ALTER TABLE/VIEW, which PlanRename handles.
//
// Renaming a materialized view or a source changes only its name: its job
// (keyed by OID) keeps running with its state and subscribers. The views
// that read it have their query text rewritten to the new name (see
// renameInViews), so they keep working and \d+ shows the new name.
func renameStreaming(env *Env, stmt *pg.RenameStmt) (*Alter, error) {
	rv := stmt.Relation
	if env == nil || env.Catalog == nil || rv == nil {
		return nil, nil
	}
	old, err := env.Catalog.Resolve(rv.Schemaname, rv.Relname, env.SearchPath)
	if err != nil {
		if stmt.MissingOk && pgerr.CodeOf(err) == pgerr.UndefinedTable {
			return skipped(missingNotice(rv.Relname))
		}
		return nil, err
	}
	switch stmt.RenameType {
	case pg.ObjectType_OBJECT_VIEW:
		if old.Kind != catalog.KindView {
			return nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a view", old.Name)
		}
	case pg.ObjectType_OBJECT_MATVIEW:
		if old.Kind != catalog.KindMatView {
			return nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a materialized view", old.Name)
		}
	case pg.ObjectType_OBJECT_FOREIGN_TABLE:
		if old.Kind != catalog.KindSource {
			return nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a foreign table", old.Name)
		}
	}
	if old.Kind != catalog.KindMatView && old.Kind != catalog.KindSource {
		return nil, nil
	}
	if stmt.Newname == old.Name {
		return nil, pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", stmt.Newname)
	}
	a := &alterState{b: newBinder(env), old: old, dropped: map[uint32]bool{}, retyped: map[string]bool{}}
	r := *old
	r.Name = stmt.Newname
	a.rel = &r
	for i := range old.Columns {
		a.from = append(a.from, i)
	}
	if dc, ok := env.Catalog.(dependentsCatalog); ok {
		a.views = dc.Dependents(old.OID)
	}
	a.renameInViews()
	if v := a.broken(); v != nil {
		return nil, pgerr.New(pgerr.FeatureNotSupported, "cannot rename %s \"%s\" because view \"%s\" depends on it", kindName(old.Kind), old.Name, v.Name).
			WithHint("Views keep the text of their query: drop the view, rename, and create the view again.")
	}
	return a.finish()
}

// missingNotice is the IF EXISTS notice of an ALTER whose relation is missing.
func missingNotice(name string) error {
	n := pgerr.New(pgerr.SuccessfulCompletion, "relation \"%s\" does not exist, skipping", name)
	n.Severity = pgerr.SevNotice
	return n
}
