package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// UPDATE t SET c.f = v, c.g.h = w: assignments to fields of a composite
// column (docs/types.md#composite-types). The column's new value is
// ROW(...) of its type whose assigned fields take the new values and the
// others the current ones ((c).f), as PostgreSQL's FieldStore: a NULL
// column becomes a row with only the assigned fields set. Subscripts in
// an UPDATE target are still refused by name.

// updField is the assignments below one composite value, by field.
type updField struct {
	vals map[int]expr.Expr
	subs map[int]*updField
	loc  int32
}

// updateFieldTarget records rt, an assignment to a field path of column
// i (bound in l), in fields.
func (b *binder) updateFieldTarget(l *level, rel *catalog.Relation, i int, rt *pg.ResTarget, fields map[int]*updField) error {
	c := rel.Columns[i]
	t := c.Type
	if fields[i] == nil {
		fields[i] = &updField{loc: rt.Location}
	}
	n := fields[i]
	for j, ind := range rt.Indirection {
		s := ind.GetString_()
		if s == nil {
			return b.newErr(pgerr.FeatureNotSupported, rt.Location, "assignment to a subscript in UPDATE is not supported")
		}
		f, err := b.fieldTarget(c, t, s.Sval, rt.Location) // insert_subscript.go
		if err != nil {
			return err
		}
		ft := t.Rec.Types[f]
		if j == len(rt.Indirection)-1 {
			if rt.Val.GetSetToDefault() != nil {
				return b.newErr(pgerr.FeatureNotSupported, rt.Location, "cannot set a subfield to DEFAULT")
			}
			if n.vals[f] != nil || n.subs[f] != nil {
				return pgerr.New(pgerr.SyntaxError, "multiple assignments to same column \"%s\"", c.Name)
			}
			e, err := b.expr(l, rt.Val)
			if err != nil {
				return err
			}
			if e, err = b.assign(e, catalog.Column{Name: c.Name, Type: ft}, nodeLoc(rt.Val)); err != nil {
				return err
			}
			if n.vals == nil {
				n.vals = map[int]expr.Expr{}
			}
			n.vals[f] = e
			return nil
		}
		if n.vals[f] != nil {
			return pgerr.New(pgerr.SyntaxError, "multiple assignments to same column \"%s\"", c.Name)
		}
		if n.subs == nil {
			n.subs = map[int]*updField{}
		}
		if n.subs[f] == nil {
			n.subs[f] = &updField{loc: rt.Location}
		}
		n, t = n.subs[f], ft
	}
	return nil
}

// buildUpdateField makes the new value of a composite value cur of type
// t from the assignments in n.
func buildUpdateField(cur expr.Expr, t types.T, n *updField) (expr.Expr, error) {
	args := make([]expr.Expr, len(t.Rec.Types))
	for f, name := range t.Rec.Names {
		if v := n.vals[f]; v != nil {
			args[f] = v
			continue
		}
		old, err := expr.NewFieldSelect(cur, name)
		if err != nil {
			return nil, err
		}
		args[f] = old
		if sub := n.subs[f]; sub != nil {
			if args[f], err = buildUpdateField(old, t.Rec.Types[f], sub); err != nil {
				return nil, err
			}
		}
	}
	return &expr.RowExpr{Args: args, T: t}, nil
}
