package engine

import (
	"context"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
)

// execCreateIndex runs CREATE INDEX. Plain indexes are accepted and not
// built: scans are vectorized and keys have their own hash indexes. A
// UNIQUE index over columns is enforced: it becomes a unique key of the
// table, exactly as ALTER TABLE ... ADD CONSTRAINT name UNIQUE (cols) does
// (so it is listed as a constraint in pg_constraint, where PostgreSQL lists
// only the index).
func (s *Session) execCreateIndex(ctx context.Context, env *planner.Env, idx *pg.IndexStmt) (*Result, error) {
	if rv := idx.Relation; rv != nil { // grant.go
		if err := s.checkOwnerByName(rv.Schemaname, rv.Relname, catalog.KindTable, catalog.KindMatView); err != nil {
			return nil, err
		}
	}
	if _, err := planner.RelOptions(planner.OptIndex, idx.Options); err != nil {
		return nil, err
	}
	for _, p := range idx.IndexParams { // an index is not built, but its COLLATE is checked
		if e := p.GetIndexElem(); e != nil && len(e.Collation) > 0 {
			if err := planner.CheckCollation(e.Collation); err != nil {
				return nil, err
			}
		}
	}
	if !idx.Unique {
		return &Result{Tag: "CREATE INDEX"}, nil
	}
	if idx.WhereClause != nil || len(idx.IndexIncludingParams) > 0 || idx.NullsNotDistinct {
		return nil, pgerr.Unsupported("partial, INCLUDE and NULLS NOT DISTINCT unique indexes are not supported")
	}
	keys := make([]*pg.Node, 0, len(idx.IndexParams))
	cols := make([]string, 0, len(idx.IndexParams))
	for _, p := range idx.IndexParams {
		e := p.GetIndexElem()
		if e == nil || e.Name == "" {
			return nil, pgerr.Unsupported("unique indexes on expressions are not supported")
		}
		keys = append(keys, &pg.Node{Node: &pg.Node_String_{String_: &pg.String{Sval: e.Name}}})
		cols = append(cols, e.Name)
	}
	name := idx.Idxname
	if name == "" { // PostgreSQL's default index name
		name = idx.Relation.Relname + "_" + strings.Join(cols, "_") + "_idx"
	}
	alter := &pg.Node{Node: &pg.Node_AlterTableStmt{AlterTableStmt: &pg.AlterTableStmt{
		Relation: idx.Relation,
		Objtype:  pg.ObjectType_OBJECT_TABLE,
		Cmds: []*pg.Node{{Node: &pg.Node_AlterTableCmd{AlterTableCmd: &pg.AlterTableCmd{
			Subtype: pg.AlterTableType_AT_AddConstraint,
			Def: &pg.Node{Node: &pg.Node_Constraint{Constraint: &pg.Constraint{
				Contype: pg.ConstrType_CONSTR_UNIQUE, Conname: name, Keys: keys,
			}}},
		}}}},
	}}}
	res, err := s.execAlter(ctx, env, alter)
	if err != nil {
		if e := pgerr.As(err); e != nil && e.Code == pgerr.DuplicateTable && idx.IfNotExists {
			n := pgerr.New(pgerr.DuplicateTable, "relation %q already exists, skipping", name)
			n.Severity = pgerr.SevNotice
			return &Result{Tag: "CREATE INDEX", Notices: []*pgerr.Error{n}}, nil
		}
		return nil, err
	}
	res.Tag = "CREATE INDEX"
	return res, nil
}
