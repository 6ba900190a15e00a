package planner

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/pgerr"
)

// expandMultiAssign rewrites the multiple-column assignments of an UPDATE
// or ON CONFLICT DO UPDATE target list, SET (a, b) = (x, y) and
// SET (a, b) = (SELECT ...), into one single-column assignment per column,
// as PostgreSQL's transformMultiAssignRef reads them:
//   - a row constructor, (x, y) or ROW(x, y), gives each column its own
//     element (DEFAULT included);
//   - a sub-SELECT gives column k the k-th output column of the sub-SELECT,
//     as a scalar subquery: no row gives NULL, more than one row is an error.
//     The sub-SELECT is evaluated once per column, so only a volatile
//     sub-SELECT can tell this from PostgreSQL's single evaluation.
//
// Other sources are refused as PostgreSQL refuses them. The input nodes are
// not modified; single-column targets are returned as they are.
func (b *binder) expandMultiAssign(l *level, list []*pg.Node) ([]*pg.Node, error) {
	out := make([]*pg.Node, 0, len(list))
	for _, n := range list {
		rt := n.GetResTarget()
		mar := rt.GetVal().GetMultiAssignRef()
		if mar == nil {
			out = append(out, n)
			continue
		}
		val, err := b.multiAssignValue(l, mar)
		if err != nil {
			return nil, err
		}
		out = append(out, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{
			Name: rt.Name, Indirection: rt.Indirection, Val: val, Location: rt.Location,
		}}})
	}
	return out, nil
}

// multiAssignValue is the expression assigned to column mar.Colno (1-based)
// of a multiple-column assignment; l is the UPDATE's scope (a row
// constructor's t.* stands for t's columns, as in PostgreSQL).
func (b *binder) multiAssignValue(l *level, mar *pg.MultiAssignRef) (*pg.Node, error) {
	k, n := int(mar.Colno), int(mar.Ncolumns)
	if row := mar.Source.GetRowExpr(); row != nil {
		args, err := b.expandRowStars(l, row.Args)
		if err != nil {
			return nil, err
		}
		if len(args) != n {
			return nil, b.newErr(pgerr.SyntaxError, row.Location, "number of columns does not match number of values")
		}
		return args[k-1], nil
	}
	sl := mar.Source.GetSubLink()
	if sl == nil || (sl.SubLinkType != pg.SubLinkType_MULTIEXPR_SUBLINK && sl.SubLinkType != pg.SubLinkType_EXPR_SUBLINK) {
		return nil, b.newErr(pgerr.SyntaxError, nodeLoc(mar.Source), "source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression")
	}
	if sel := sl.Subselect.GetSelectStmt(); sel != nil && sel.Op == pg.SetOperation_SETOP_NONE && sel.ValuesLists == nil {
		if !hasStarTarget(sel.TargetList) && len(sel.TargetList) != n {
			return nil, b.newErr(pgerr.SyntaxError, sl.Location, "number of columns does not match number of values")
		}
	}
	// SELECT "?multiassign?".ck FROM (sub-SELECT) AS "?multiassign?"(c1, ..., cn)
	const alias = "?multiassign?"
	cols := make([]*pg.Node, n)
	for i := range cols {
		cols[i] = pg.MakeStrNode(fmt.Sprintf("c%d", i+1))
	}
	from := &pg.Node{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
		Subquery: sl.Subselect,
		Alias:    &pg.Alias{Aliasname: alias, Colnames: cols},
	}}}
	ref := pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode(alias), pg.MakeStrNode(fmt.Sprintf("c%d", k))}, sl.Location)
	sel := &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{
		TargetList:  []*pg.Node{pg.MakeResTargetNodeWithVal(ref, sl.Location)},
		FromClause:  []*pg.Node{from},
		LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT,
		Op:          pg.SetOperation_SETOP_NONE,
	}}}
	return &pg.Node{Node: &pg.Node_SubLink{SubLink: &pg.SubLink{
		SubLinkType: pg.SubLinkType_EXPR_SUBLINK, Subselect: sel, Location: sl.Location,
	}}}, nil
}

// expandRowStars replaces each t.* among a row constructor's elements by
// references to t's columns, t.c1, ..., t.cn.
func (b *binder) expandRowStars(l *level, args []*pg.Node) ([]*pg.Node, error) {
	var out []*pg.Node
	for i, a := range args {
		cr := a.GetColumnRef()
		if cr == nil || len(cr.Fields) < 2 || cr.Fields[len(cr.Fields)-1].GetAStar() == nil {
			if out != nil {
				out = append(out, a)
			}
			continue
		}
		if out == nil {
			out = append(make([]*pg.Node, 0, len(args)), args[:i]...)
		}
		cols, _, err := b.star(l, cr)
		if err != nil {
			return nil, err
		}
		qual := cr.Fields[:len(cr.Fields)-1]
		for _, c := range cols {
			fields := append(append([]*pg.Node(nil), qual...), pg.MakeStrNode(c.name))
			out = append(out, pg.MakeColumnRefNode(fields, cr.Location))
		}
	}
	if out == nil {
		return args, nil
	}
	return out, nil
}

// hasStarTarget reports whether a target list holds a * or t.* entry, whose
// width is known only after binding.
func hasStarTarget(list []*pg.Node) bool {
	for _, n := range list {
		if cr := n.GetResTarget().GetVal().GetColumnRef(); cr != nil {
			for _, f := range cr.Fields {
				if f.GetAStar() != nil {
					return true
				}
			}
		}
	}
	return false
}
