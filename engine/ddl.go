package engine

import (
	"context"
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/storage"
)

// planTableDef binds CREATE TABLE; a temporary table goes to the session's
// temporary schema (temp.go).
func planTableDef(env *planner.Env, c *pg.CreateStmt) (*catalog.Relation, error) {
	if err := checkOnCommit(c.Relation, c.Oncommit); err != nil {
		return nil, err
	}
	return planner.TableDef(env, c)
}

// copyLikeComments gives the table created by stmt the column comments
// of the relations its LIKE ... INCLUDING COMMENTS clauses name (the
// planner copied the columns, by name: planner/ddl_like.go).
func (s *Session) copyLikeComments(stmt *pg.CreateStmt, created *catalog.Relation) error {
	cm, ok := s.eng.cat.(interface {
		ObjectDescription(oid uint32, subID int32) (string, bool)
		Comment(oid uint32, sub int32, text string) error
	})
	if !ok {
		return nil
	}
	for _, elt := range stmt.TableElts {
		lc := elt.GetTableLikeClause()
		if lc == nil || lc.Options&planner.LikeComments == 0 {
			continue
		}
		src, err := s.eng.cat.Resolve(lc.Relation.Schemaname, lc.Relation.Relname, s.set.searchPath())
		if err != nil {
			return err
		}
		for i, c := range src.Columns {
			text, ok := cm.ObjectDescription(src.OID, int32(i+1))
			if j := created.ColumnIndex(c.Name); ok && j >= 0 {
				if err := cm.Comment(created.OID, int32(j+1), text); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// planViewDef binds CREATE VIEW. A view reading a temporary relation is
// temporary itself, as in PostgreSQL: it goes to the session's temporary
// schema with the notice `view "v" will be a temporary view` (and is
// 42P16 when the statement names a permanent schema).
func planViewDef(env *planner.Env, cat Catalog, v *pg.ViewStmt, stmt sql.Statement) (*catalog.Relation, []uint32, *pgerr.Error, error) {
	rel, deps, err := planner.ViewDef(env, v, stmt.Source)
	if err != nil || rel.IsTemp() {
		return rel, deps, nil, err
	}
	for _, d := range deps {
		if r := cat.Relation(d); r != nil && r.IsTemp() {
			n := pgerr.New(pgerr.SuccessfulCompletion, "view \"%s\" will be a temporary view", rel.Name)
			n.Severity = pgerr.SevNotice
			if v.View.Schemaname != "" {
				return nil, nil, nil, pgerr.New(pgerr.InvalidTableDefinition, "cannot create temporary relation in non-temporary schema")
			}
			rel.Schema = env.TempSchema
			return rel, deps, n, nil
		}
	}
	return rel, deps, nil, nil
}

// execCreateTableAs runs CREATE TABLE t AS SELECT: the table takes the
// query's column names and types, then receives its rows.
func (s *Session) execCreateTableAs(ctx context.Context, env *planner.Env, c *pg.CreateTableAsStmt, stmt sql.Statement) (*Result, error) {
	if c.Objtype == pg.ObjectType_OBJECT_MATVIEW {
		return s.execCreateMatView(ctx, env, c, stmt)
	}
	params, _, err := planner.TableStorageParams(nil, c.Into.Options, false)
	if err != nil {
		return nil, err
	}
	q, err := planner.PlanSelect(env, c.Query)
	if err != nil {
		return nil, err
	}
	if err := refuseRowLocks(q, "CREATE TABLE AS"); err != nil { // rowlock.go
		return nil, err
	}
	if err := checkOnCommit(c.Into.Rel, c.Into.OnCommit); err != nil {
		return nil, err
	}
	schema, err := planner.CreateSchema(env, c.Into.Rel)
	if err != nil {
		return nil, err
	}
	rel := &catalog.Relation{Schema: schema, Name: c.Into.Rel.Relname, Kind: catalog.KindTable, StorageParams: params}
	names := c.Into.ColNames
	if len(names) > len(q.Columns) {
		return nil, pgerr.New(pgerr.SyntaxError, "too many column names were specified")
	}
	for i, col := range q.Columns {
		name := col.Name
		if i < len(names) {
			name = names[i].GetString_().GetSval()
		}
		rel.Columns = append(rel.Columns, catalog.Column{Name: name, Type: col.Type})
	}
	rel.Owner = s.sessionOwner()
	s.noteTemp(rel.Schema)
	created, err := s.eng.cat.CreateTable(rel, c.IfNotExists)
	if err != nil {
		return s.maybeSkip(err, c.IfNotExists, "CREATE TABLE AS")
	}
	s.tempCreated(created)
	tbl := s.eng.cat.Table(created.OID)
	if tbl == nil {
		return nil, pgerr.Internal("table %s has no storage", created.Name)
	}
	if c.Into.SkipData {
		return &Result{Tag: "CREATE TABLE AS"}, nil
	}
	ectx := s.execContext(ctx, nil)
	defer closeBudget(ectx)
	rec, err := collect(ectx, q.Root, q.Columns)
	if err == nil {
		var n int64
		if n, err = s.insert(ctx, tbl, rec); err == nil {
			return &Result{Tag: fmt.Sprintf("SELECT %d", n)}, nil
		}
	}
	// The query or its rows failed: the table goes too, as in PostgreSQL,
	// where the statement creates nothing.
	s.dropQuietly(created)
	return nil, err
}

// truncatable returns rel's stored table if the session may truncate it:
// a table, not append-only, with the TRUNCATE privilege.
func (s *Session) truncatable(rel *catalog.Relation) (*storage.Table, error) {
	tbl := s.eng.cat.Table(rel.OID)
	if rel.Kind != catalog.KindTable || tbl == nil {
		return nil, pgerr.New(pgerr.WrongObjectType, "%q is not a table", rel.Name)
	}
	if err := refuseAppendOnly(rel, "truncate"); err != nil {
		return nil, err
	}
	if err := s.checkPriv(rel, catalog.PrivTruncate); err != nil { // grant.go
		return nil, err
	}
	return tbl, nil
}

func (s *Session) execTruncate(ctx context.Context, t *pg.TruncateStmt) (*Result, error) {
	tbls := make([]*storage.Table, 0, len(t.Relations))
	var rels []*catalog.Relation
	for _, r := range t.Relations { // check them all before truncating any
		rv := r.GetRangeVar()
		rel, err := s.eng.cat.Resolve(rv.Schemaname, rv.Relname, s.set.searchPath())
		if err != nil {
			return nil, err
		}
		tbl, err := s.truncatable(rel)
		if err != nil {
			return nil, err
		}
		tbls = append(tbls, tbl)
		rels = append(rels, rel)
	}
	var notices []*pgerr.Error
	if t.Behavior == pg.DropBehavior_DROP_CASCADE {
		// the tables whose foreign keys reference those, transitively
		in := map[uint32]bool{}
		for _, r := range rels {
			in[r.OID] = true
		}
		for i := 0; i < len(rels); i++ {
			for _, rk := range s.referencedBy(rels[i]) {
				r := rk.Table
				if in[r.OID] {
					continue
				}
				in[r.OID] = true
				tbl, err := s.truncatable(r)
				if err != nil {
					return nil, err
				}
				n := pgerr.New(pgerr.SuccessfulCompletion, "truncate cascades to table \"%s\"", r.Name)
				n.Severity = pgerr.SevNotice
				notices = append(notices, n)
				rels, tbls = append(rels, r), append(tbls, tbl)
			}
		}
	}
	if err := s.refuseTruncateReferenced(rels); err != nil { // constraints.go
		return nil, err
	}
	for _, tbl := range tbls {
		if err := s.truncate(ctx, tbl); err != nil {
			return nil, err
		}
	}
	return &Result{Tag: "TRUNCATE TABLE", Notices: notices}, nil
}

// explainExecute returns the plan of EXECUTE's prepared statement: its
// generic plan, parameters shown as $n (PostgreSQL may show a plan made
// for the arguments' values).
func (s *Session) explainExecute(e *pg.ExecuteStmt) (*exec.PlanTree, error) {
	p, err := s.lookupPrepared(e.Name)
	if err != nil {
		return nil, err
	}
	if err := executeArity(e, p); err != nil { // prepare.go
		return nil, err
	}
	pl, _ := p.plan.(*plan)
	if pl == nil {
		return nil, pgerr.Unsupported("EXPLAIN of this statement is not supported")
	}
	switch pl.kind {
	case kindSelect:
		return exec.Tree(pl.query.Root), nil
	case kindInsert:
		return explainWrite("Insert on "+pl.insert.Rel.Name, pl.insert.Source), nil
	case kindUpdate:
		return explainWrite("Update on "+pl.update.Rel.Name, pl.update.Source), nil
	case kindDelete:
		return explainWrite("Delete on "+pl.del.Rel.Name, pl.del.Source), nil
	case kindMerge:
		return explainMerge(pl.merge), nil
	}
	return nil, pgerr.Unsupported("EXPLAIN of this statement is not supported")
}

// explain plans the statement under EXPLAIN and renders its plan as its
// options (checked by explainOptions, without ANALYZE) ask: text, with
// each node's output columns under VERBOSE, or one JSON document.
func (s *Session) explain(env *planner.Env, e *pg.ExplainStmt, o explainOpts) (string, error) {
	if c := e.Query.GetCreateTableAsStmt(); c != nil && c.Objtype == pg.ObjectType_OBJECT_MATVIEW {
		if o.verbose || o.json {
			return "", pgerr.Unsupported("EXPLAIN (VERBOSE) and EXPLAIN (FORMAT JSON) of CREATE MATERIALIZED VIEW are not supported: its plan is text")
		}
		return explainMatView(env, c)
	}
	t, err := s.explainTree(env, e)
	if err != nil {
		return "", err
	}
	if o.json {
		return t.JSON(o.verbose)
	}
	return t.Text(o.verbose), nil
}

// explainTree plans the statement under EXPLAIN.
func (s *Session) explainTree(env *planner.Env, e *pg.ExplainStmt) (*exec.PlanTree, error) {
	switch n := e.Query.Node.(type) {
	case *pg.Node_SelectStmt:
		q, err := planner.PlanSelect(env, e.Query)
		if err != nil {
			return nil, err
		}
		return exec.Tree(q.Root), nil
	case *pg.Node_InsertStmt:
		p, err := planner.PlanInsert(env, n.InsertStmt)
		if err != nil {
			return nil, err
		}
		return explainWrite("Insert on "+p.Rel.Name, p.Source), nil
	case *pg.Node_UpdateStmt:
		p, err := planner.PlanUpdate(env, n.UpdateStmt)
		if err != nil {
			return nil, err
		}
		return explainWrite("Update on "+p.Rel.Name, p.Source), nil
	case *pg.Node_DeleteStmt:
		p, err := planner.PlanDelete(env, n.DeleteStmt)
		if err != nil {
			return nil, err
		}
		return explainWrite("Delete on "+p.Rel.Name, p.Source), nil
	case *pg.Node_MergeStmt:
		m, err := planner.PlanMerge(env, n.MergeStmt)
		if err != nil {
			return nil, err
		}
		return explainMerge(m), nil
	case *pg.Node_ExecuteStmt:
		return s.explainExecute(n.ExecuteStmt)
	}
	return nil, pgerr.Unsupported("EXPLAIN of this statement is not supported")
}

// explainWrite is a write's plan: its head line ("Insert on t") above
// the plan of the rows it writes.
func explainWrite(head string, src exec.Node) *exec.PlanTree {
	return &exec.PlanTree{Line: head, Children: []*exec.PlanTree{exec.Tree(src)}}
}
