package planner

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
)

// INSERT ... ON CONFLICT. The planner resolves the conflict target to the
// arbiter constraints and binds DO UPDATE's SET and WHERE over the pair
// (existing row, EXCLUDED row); the engine finds the conflicts in storage
// (storage.Table.FindConflicts) and applies the action.

// OnConflict is a planned ON CONFLICT clause. Immutable.
type OnConflict struct {
	// Arbiters names the constraints (primary key or UNIQUE) whose conflicts
	// the clause handles; nil means any of the table's (DO NOTHING without a
	// target).
	Arbiters []string
	// Update is nil for DO NOTHING.
	Update *ConflictUpdate
}

// ConflictUpdate is DO UPDATE SET ... [WHERE ...]. Its expressions read a
// batch whose columns are the existing row's (table column order) followed
// by the proposed row's (EXCLUDED, table column order).
type ConflictUpdate struct {
	// Set computes the new row, one expression per table column.
	Set []expr.Expr
	// Where keeps the rows to update (nil: all); the others are left as
	// they are and not counted.
	Where expr.Expr
}

func (b *binder) onConflict(oc *pg.OnConflictClause, rel *catalog.Relation, rv *pg.RangeVar, with *level) (*OnConflict, error) {
	out := &OnConflict{}
	update := oc.Action == pg.OnConflictAction_ONCONFLICT_UPDATE
	switch inf := oc.Infer; {
	case inf == nil && update:
		return nil, b.newErr(pgerr.SyntaxError, oc.Location, "ON CONFLICT DO UPDATE requires inference specification or constraint name").(*pgerr.Error).
			WithHint("For example, ON CONFLICT (column_name).")
	case inf == nil:
	case inf.Conname != "":
		if !slices.ContainsFunc(keyConstraints(rel), func(k keyConstraint) bool { return k.name == inf.Conname }) {
			return nil, pgerr.New(pgerr.UndefinedObject, "constraint \"%s\" for table \"%s\" does not exist", inf.Conname, rel.Name)
		}
		out.Arbiters = []string{inf.Conname}
	default:
		if inf.WhereClause != nil {
			return nil, b.newErr(pgerr.FeatureNotSupported, nodeLoc(inf.WhereClause), "ON CONFLICT ... WHERE is not supported")
		}
		var cols []int
		for _, n := range inf.IndexElems {
			ie := n.GetIndexElem()
			if ie == nil || ie.Name == "" {
				return nil, b.newErr(pgerr.InvalidColumnReference, -1, "there is no unique or exclusion constraint matching the ON CONFLICT specification")
			}
			i := rel.ColumnIndex(ie.Name)
			if i < 0 {
				return nil, b.newErr(pgerr.UndefinedColumn, inf.Location, "column \"%s\" does not exist", ie.Name)
			}
			if !slices.Contains(cols, i) {
				cols = append(cols, i)
			}
		}
		for _, k := range keyConstraints(rel) {
			if sameSet(k.cols, cols) {
				out.Arbiters = append(out.Arbiters, k.name)
			}
		}
		if out.Arbiters == nil {
			return nil, b.newErr(pgerr.InvalidColumnReference, -1, "there is no unique or exclusion constraint matching the ON CONFLICT specification")
		}
	}
	if !update {
		return out, nil
	}
	u, err := b.conflictUpdate(oc, rel, rv, with)
	if err != nil {
		return nil, err
	}
	out.Update = u
	return out, nil
}

// conflictUpdate binds DO UPDATE SET ... WHERE over the target row (named
// by the table's name or alias) and "excluded".
func (b *binder) conflictUpdate(oc *pg.OnConflictClause, rel *catalog.Relation, rv *pg.RangeVar, with *level) (*ConflictUpdate, error) {
	alias := rel.Name
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
	}
	target := &nsItem{alias: alias, relVisible: true, colsVisible: true}
	excluded := &nsItem{alias: "excluded", relVisible: true, colsVisible: true}
	lay := make([]int, 0, 2*len(rel.Columns))
	for _, it := range []*nsItem{target, excluded} {
		for _, c := range rel.Columns {
			id := b.newCol(c.Name, it.alias, c.Type)
			it.cols = append(it.cols, nsCol{name: c.Name, id: id})
			lay = append(lay, id)
		}
	}
	l := &level{ns: []*nsItem{target, excluded}, clause: inUpdate, parent: with}
	set := make([]expr.Expr, len(rel.Columns))
	targets, err := b.expandMultiAssign(l, oc.TargetList)
	if err != nil {
		return nil, err
	}
	for _, n := range targets {
		rt := n.GetResTarget()
		if len(rt.Indirection) > 0 {
			return nil, b.newErr(pgerr.FeatureNotSupported, rt.Location, "assignment to a field or subscript is not supported")
		}
		i := rel.ColumnIndex(rt.Name)
		if i < 0 {
			return nil, b.newErr(pgerr.UndefinedColumn, rt.Location, "column \"%s\" of relation \"%s\" does not exist", rt.Name, rel.Name)
		}
		if set[i] != nil {
			return nil, pgerr.New(pgerr.SyntaxError, "multiple assignments to same column \"%s\"", rt.Name)
		}
		if rt.Val.GetSetToDefault() == nil {
			switch c := rel.Columns[i]; {
			case c.Generated != "":
				return nil, generatedUpdateError(c) // generated.go
			case c.Identity == 'a':
				return nil, pgerr.New(pgerr.GeneratedAlways, "column \"%s\" can only be updated to DEFAULT", c.Name).
					WithDetail("Column \"%s\" is an identity column defined as GENERATED ALWAYS.", c.Name)
			}
		}
		var e expr.Expr
		var err error
		if rt.Val.GetSetToDefault() != nil {
			e, err = b.defaultExpr(rel, i)
		} else if e, err = b.expr(l, rt.Val); err == nil {
			e, err = b.assign(e, rel.Columns[i], nodeLoc(rt.Val))
		}
		if err != nil {
			return nil, err
		}
		set[i] = e
	}
	for i := range set {
		if set[i] == nil {
			set[i] = b.colRef(target.cols[i].id)
		}
	}
	ph := &physical{b: b}
	u := &ConflictUpdate{Set: make([]expr.Expr, len(set))}
	for i, e := range set {
		m, err := ph.expr(e, lay)
		if err != nil {
			return nil, err
		}
		u.Set[i] = m
	}
	if oc.WhereClause != nil {
		l.clause = inWhere
		cond, err := b.expr(l, oc.WhereClause)
		if err != nil {
			return nil, err
		}
		if cond, err = b.boolArg(cond, "WHERE", nodeLoc(oc.WhereClause)); err != nil {
			return nil, err
		}
		if u.Where, err = ph.expr(cond, lay); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// keyConstraint is a primary key or UNIQUE constraint of a relation.
type keyConstraint struct {
	name string
	cols []int
}

func keyConstraints(rel *catalog.Relation) []keyConstraint {
	var out []keyConstraint
	if len(rel.PrimaryKey) > 0 {
		out = append(out, keyConstraint{rel.PKName, rel.PrimaryKey})
	}
	for _, u := range rel.Unique {
		out = append(out, keyConstraint{u.Name, u.Columns})
	}
	return out
}

// sameSet reports whether a and b hold the same column indexes (b has no
// repeats).
func sameSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
