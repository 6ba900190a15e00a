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
		eachRangeVar(root.ProtoReflect(), func(rv *pg.RangeVar) {
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
		text, err := sql.Deparse(root)
		if err != nil {
			continue
		}
		nv := *v
		nv.ViewQuery = text
		a.rewritten[v.OID] = &nv
	}
}

// eachRangeVar calls f on every relation reference of a parse tree.
func eachRangeVar(m protoreflect.Message, f func(*pg.RangeVar)) {
	if rv, ok := m.Interface().(*pg.RangeVar); ok {
		f(rv)
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind || fd.IsMap() {
			return true
		}
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				eachRangeVar(l.Get(i).Message(), f)
			}
		} else {
			eachRangeVar(v.Message(), f)
		}
		return true
	})
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
