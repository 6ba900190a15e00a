package planner

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sql"
)

// Views keep the text of their query, so renaming a table or a column would
// leave them naming what no longer exists. renameInViews rewrites the
// queries of the views that read the renamed relation directly so that they
// read it under its new names, aliased back to the old ones:
//
//	SELECT a FROM t          (t renamed to u, column a to b)
//	SELECT a FROM u AS t(a)
//
// The caller then checks that every dependent view still binds to the same
// columns; one that does not (a name the rewrite cannot reach) keeps the
// rename refused.
func (a *alterState) renameInViews() {
	if a.rewritten == nil {
		a.rewritten = map[uint32]*catalog.Relation{}
	}
	renamedCols := false
	for i, c := range a.rel.Columns {
		if a.from[i] >= 0 && a.old.Columns[a.from[i]].Name != c.Name {
			renamedCols = true
		}
	}
	for _, v := range a.views {
		if !slices.Contains(v.DependsOn, a.old.OID) {
			continue
		}
		stmts, err := sql.Parse(v.ViewQuery)
		if err != nil || len(stmts) != 1 || stmts[0].AST == nil {
			continue
		}
		root := stmts[0].AST
		if definesCTE(root.ProtoReflect(), a.old.Name) {
			continue // a WITH query of the same name: leave it to the check
		}
		changed := false
		sql.EachRangeVar(root.ProtoReflect(), func(rv *pg.RangeVar) {
			r, err := a.b.env.Catalog.Resolve(rv.Schemaname, rv.Relname, a.b.env.SearchPath)
			if err != nil || r.OID != a.old.OID {
				return
			}
			alias := &pg.Alias{Aliasname: rv.Relname}
			if rv.Alias != nil {
				alias.Aliasname = rv.Alias.Aliasname
				alias.Colnames = rv.Alias.Colnames
			}
			if renamedCols {
				// Name every column as the view saw it: the alias's own
				// names first, then the old column names.
				names := strs(alias.Colnames)
				for i := len(names); i < len(a.old.Columns); i++ {
					names = append(names, a.old.Columns[i].Name)
				}
				alias.Colnames = nil
				for _, n := range names {
					alias.Colnames = append(alias.Colnames, &pg.Node{Node: &pg.Node_String_{String_: &pg.String{Sval: n}}})
				}
			}
			rv.Relname, rv.Alias = a.rel.Name, alias
			changed = true
		})
		if !changed {
			continue
		}
		text, err := deparseView(root, stmts[0])
		if err != nil {
			continue
		}
		nv := *v
		nv.ViewQuery = text
		a.rewritten[v.OID] = &nv
	}
}

// definesCTE reports whether a parse tree has a WITH query named name.
func definesCTE(m protoreflect.Message, name string) bool {
	found := false
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if c, ok := m.Interface().(*pg.CommonTableExpr); ok && c.Ctename == name {
			found = true
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			if found || fd.Kind() != protoreflect.MessageKind || fd.IsMap() {
				return !found
			}
			if fd.IsList() {
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					walk(l.Get(i).Message())
				}
			} else {
				walk(v.Message())
			}
			return !found
		})
	}
	walk(m)
	return found
}

// pinInViews keeps the views that read the table with * from picking up a
// column ADD COLUMN appends (PostgreSQL expands * when the view is created):
// each reference to the table in a view that no longer binds to its columns
// becomes a subquery of the columns it had,
//
//	SELECT * FROM t   ->   SELECT * FROM (SELECT a, b FROM t) t
//
// cols are the table's column names before the addition.
func (a *alterState) pinInViews(cols []string) {
	if a.rewritten == nil {
		a.rewritten = map[uint32]*catalog.Relation{}
	}
	for _, v := range a.views {
		if a.dropped[v.OID] || !slices.Contains(v.DependsOn, a.old.OID) {
			continue
		}
		cur := v
		if r := a.rewritten[v.OID]; r != nil {
			cur = r
		}
		if a.bindsNow(cur) {
			continue
		}
		stmts, err := sql.Parse(cur.ViewQuery)
		if err != nil || len(stmts) != 1 || stmts[0].AST == nil {
			continue
		}
		root := stmts[0].AST
		if definesCTE(root.ProtoReflect(), a.old.Name) {
			continue
		}
		changed := false
		eachNode(root.ProtoReflect(), func(n *pg.Node) bool {
			rv := n.GetRangeVar()
			if rv == nil {
				return true
			}
			r, err := a.b.env.Catalog.Resolve(rv.Schemaname, rv.Relname, a.b.env.SearchPath)
			if err != nil || r.OID != a.old.OID {
				return false
			}
			alias := rv.Alias
			if alias == nil {
				alias = &pg.Alias{Aliasname: rv.Relname}
			}
			sel := &pg.SelectStmt{FromClause: []*pg.Node{{Node: &pg.Node_RangeVar{RangeVar: &pg.RangeVar{
				Schemaname: rv.Schemaname, Relname: rv.Relname, Inh: true, Relpersistence: "p"}}}}}
			for _, c := range cols {
				ref := &pg.ColumnRef{Fields: []*pg.Node{{Node: &pg.Node_String_{String_: &pg.String{Sval: c}}}}}
				sel.TargetList = append(sel.TargetList, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{
					Val: &pg.Node{Node: &pg.Node_ColumnRef{ColumnRef: ref}}}}})
			}
			n.Node = &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
				Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}}, Alias: alias}}
			changed = true
			return false
		})
		if !changed {
			continue
		}
		text, err := deparseView(root, stmts[0])
		if err != nil {
			continue
		}
		nv := *v
		nv.ViewQuery = text
		a.rewritten[v.OID] = &nv
	}
}

// bindsNow reports whether view v binds to its columns against the working
// definition (and the views rewritten so far).
func (a *alterState) bindsNow(v *catalog.Relation) bool {
	env := *a.b.env
	env.Catalog = &alterOverlay{Catalog: env.Catalog, old: a.old, rel: a.rel, views: a.rewritten}
	env.Source, env.Params = "", nil
	return viewStillBinds(&env, v)
}

// eachNode calls f on every Node of a parse tree, outermost first; f
// returns false to skip a node's children.
func eachNode(m protoreflect.Message, f func(*pg.Node) bool) {
	if n, ok := m.Interface().(*pg.Node); ok && !f(n) {
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind || fd.IsMap() {
			return true
		}
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				eachNode(l.Get(i).Message(), f)
			}
		} else {
			eachNode(v.Message(), f)
		}
		return true
	})
}

// deparseView renders a rewritten view query with what the parse tree
// cannot hold: a materialized view's FOR SYSTEM_TIME AS OF clauses and its
// EMIT clause, a view's SESSION WITH GAP frames.
func deparseView(root *pg.Node, st sql.Statement) (string, error) {
	var tjs []sql.TemporalJoin
	var sfs []sql.SessionFrame
	if st.Ext != nil {
		tjs, sfs = st.Ext.TemporalJoins, st.Ext.SessionFrames
	}
	text, err := sql.DeparseExtended(root, sql.TemporalRelations(root, tjs), sql.SessionWindows(root, sfs))
	if err != nil {
		return "", err
	}
	return text + emitOf(st).Text(), nil
}
