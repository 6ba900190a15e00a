package expr

// readsColumns marks in used the input columns e reads. It returns false
// when e holds a node it does not know (a subquery, which may read the
// current row through its outer references, or an Expr of another
// package): the caller must then assume e reads every column.
func readsColumns(e Expr, used []bool) bool {
	switch x := e.(type) {
	case nil, *Const, *Param, *OuterRef:
		return true
	case *ColRef:
		if x.Idx < 0 || x.Idx >= len(used) {
			return false
		}
		used[x.Idx] = true
		return true
	case *Call:
		return readsAll(x.Args, used)
	case *Cast:
		return readsColumns(x.E, used)
	case *DomainCheck:
		return readsColumns(x.E, used)
	case *And:
		return readsAll(x.Args, used)
	case *Or:
		return readsAll(x.Args, used)
	case *Not:
		return readsColumns(x.E, used)
	case *IsNull:
		return readsColumns(x.E, used)
	case *IsBool:
		return readsColumns(x.E, used)
	case *IsDistinct:
		return readsColumns(x.L, used) && readsColumns(x.R, used)
	case *NullIf:
		return readsColumns(x.L, used) && readsColumns(x.R, used)
	case *Case:
		for _, w := range x.Whens {
			if !readsColumns(w.Cond, used) || !readsColumns(w.Result, used) {
				return false
			}
		}
		return readsColumns(x.Else, used)
	case *Coalesce:
		return readsAll(x.Args, used)
	case *InList:
		return readsColumns(x.E, used) && readsAll(x.List, used)
	case *Like:
		return readsColumns(x.E, used) && readsColumns(x.Pattern, used) && readsColumns(x.Escape, used)
	case *ArrayExpr:
		return readsAll(x.Elems, used)
	case *RowExpr:
		return readsAll(x.Args, used)
	case *FieldSelect:
		return readsColumns(x.E, used)
	case *RowCompare:
		return readsAll(x.Eq, used) && readsAll(x.Cmp, used)
	case *Subscript:
		return readsColumns(x.E, used) && readsColumns(x.Index, used)
	}
	return false
}

func readsAll(es []Expr, used []bool) bool {
	for _, e := range es {
		if !readsColumns(e, used) {
			return false
		}
	}
	return true
}

// ReadsColumns marks in used the input columns e reads (used has one
// entry per input column); false when e holds a node it cannot see
// through (the caller must assume e reads every column).
func ReadsColumns(e Expr, used []bool) bool { return readsColumns(e, used) }
