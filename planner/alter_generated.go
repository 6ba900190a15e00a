package planner

import (
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
)

// ALTER TABLE and generated columns (generated.go): ADD COLUMN ...
// GENERATED computes the rows already there, DROP COLUMN of a column a
// generated column reads needs CASCADE, DROP EXPRESSION makes it a plain
// column.

// dropGeneratedUsing handles the generated columns reading column name,
// which DROP COLUMN drops: refused without cascade, as PostgreSQL refuses
// it, else they are dropped first (with PostgreSQL's notice).
func (a *alterState) dropGeneratedUsing(name string, cascade bool) error {
	if gs := a.generatedUsing(name); len(gs) > 0 {
		if !cascade {
			details := make([]string, len(gs))
			for k, g := range gs {
				details[k] = fmt.Sprintf("column %s of table %s depends on column %s of table %s", g, a.old.Name, name, a.old.Name)
			}
			return pgerr.New(pgerr.DependentObjectsStillExist, "cannot drop column %s of table %s because other objects depend on it", name, a.old.Name).
				WithDetail("%s", strings.Join(details, "\n")).
				WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
		}
		for _, g := range gs { // the generated columns reading it go too
			if err := a.dropColumn(g, false, true); err != nil {
				return err
			}
		}
		what := make([]string, len(gs))
		for k, g := range gs {
			what[k] = fmt.Sprintf("drop cascades to column %s of table %s", g, a.old.Name)
		}
		if len(gs) == 1 {
			a.notice("%s", what[0])
		} else {
			a.notice("drop cascades to %d other objects", len(gs))
			a.notices[len(a.notices)-1].Detail = strings.Join(what, "\n")
		}
	}
	return nil
}

// dropExpression runs ALTER COLUMN name DROP EXPRESSION [IF EXISTS]: the
// column keeps its values and is no longer generated.
func (a *alterState) dropExpression(name string, missingOK bool) error {
	i, err := a.column(name)
	if err != nil {
		return err
	}
	if a.rel.Columns[i].Generated == "" {
		if missingOK {
			a.notice("column \"%s\" of relation \"%s\" is not a stored generated column, skipping", name, a.old.Name)
			return nil
		}
		return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "column \"%s\" of relation \"%s\" is not a stored generated column", name, a.old.Name)
	}
	a.rel.Columns[i].Generated = ""
	return nil
}

// generatedUsing names the generated columns whose expressions read
// column name.
func (a *alterState) generatedUsing(name string) []string {
	var out []string
	for _, c := range a.rel.Columns {
		if c.Generated != "" && c.Name != name && slices.Contains(columnRefs(mustParseExpr(c.Generated)), name) {
			out = append(out, c.Name)
		}
	}
	return out
}

// generatedFill binds the generation expression n of column i, added by
// ADD COLUMN, over the rows being rewritten (each column reference becomes
// that column's value in the old row, a.src), and stores its text.
func (a *alterState) generatedFill(i int, n *pg.Node) (expr.Expr, error) {
	e, ids, err := a.b.bindGeneration(a.rel, i, n) // generated.go
	if err != nil {
		if pe := pgerr.As(err); pe != nil {
			pe.Position = 0 // PostgreSQL's ALTER TABLE reports these without one
		}
		return nil, err
	}
	pos := make(map[int]int, len(ids))
	for j, id := range ids {
		pos[id] = j
	}
	fill, err := transform(e, func(x expr.Expr) (expr.Expr, bool, error) {
		if cr, ok := x.(*expr.ColRef); ok {
			if j, ok := pos[cr.Idx]; ok && j < len(a.src) {
				return a.src[j], true, nil
			}
		}
		return x, false, nil
	})
	if err != nil {
		return nil, err
	}
	text, err := deparseExpr(n)
	if err != nil {
		return nil, err
	}
	a.rel.Columns[i].Generated = text
	return fill, nil
}
