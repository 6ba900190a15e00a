package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// INSERT INTO t (col[1], col[2]) VALUES (a, b): subscripted target
// columns of an INSERT. As in PostgreSQL, the assignments start from NULL
// (not the column's default) and apply in order, a later one to the same
// element winning; elements skipped over are NULL. The subscripts must be
// integer constants of one dimension, starting the array at 1 (streamsql
// keeps no other lower bound); slices, fields (col.f), several
// dimensions and DEFAULT for an element are refused by name.

// subTarget is one target col[idx]: its position k in the target list.
type subTarget struct {
	k   int
	idx int64
	loc int32
}

// subscriptTarget records target k, rt (a subscripted column i).
func (b *binder) subscriptTarget(rel *catalog.Relation, i, k int, rt *pg.ResTarget) error {
	c := rel.Columns[i]
	if len(rt.Indirection) != 1 || rt.Indirection[0].GetAIndices() == nil {
		return b.newErr(pgerr.FeatureNotSupported, rt.Location, "assignment to a field or to several subscripts is not supported")
	}
	if c.Type.Kind != types.Array {
		return b.newErr(pgerr.DatatypeMismatch, rt.Location, "cannot subscript type %s because it does not support subscripting", c.Type)
	}
	ix := rt.Indirection[0].GetAIndices()
	if ix.IsSlice {
		return b.newErr(pgerr.FeatureNotSupported, rt.Location, "assignment to an array slice is not supported")
	}
	n := ix.Uidx.GetAConst()
	if n == nil || n.GetIval() == nil {
		return b.newErr(pgerr.FeatureNotSupported, nodeLoc(ix.Uidx), "an INSERT target's subscript must be an integer constant")
	}
	if b.subTargets == nil {
		b.subTargets = map[int][]subTarget{}
	}
	b.subTargets[i] = append(b.subTargets[i], subTarget{k: k, idx: int64(n.GetIval().Ival), loc: rt.Location})
	return nil
}

// subscriptAssign builds column c's value from its subscripted targets;
// value binds the expression given for target k.
func (b *binder) subscriptAssign(c catalog.Column, subs []subTarget, value func(k int) (expr.Expr, error)) (expr.Expr, error) {
	elemT := *c.Type.Elem
	slots := map[int64]expr.Expr{}
	var first, last int64
	for j, s := range subs {
		e, err := value(s.k)
		if err != nil {
			return nil, err
		}
		if e, err = b.assign(e, catalog.Column{Name: c.Name, Type: elemT}, s.loc); err != nil {
			return nil, err
		}
		if j == 0 {
			first = s.idx
		}
		if s.idx < 1 {
			first = s.idx
		}
		slots[s.idx] = e
		last = max(last, s.idx)
	}
	if first != 1 { // also any element below 1
		return nil, b.newErr(pgerr.FeatureNotSupported, subs[0].loc, "array lower bounds other than 1 are not supported (the first element assigned to \"%s\" must be [1])", c.Name)
	}
	if last > 100000 {
		return nil, pgerr.New(pgerr.ProgramLimitExceeded, "array size exceeds the maximum allowed (%d)", 100000)
	}
	arr := &expr.ArrayExpr{T: c.Type, Elems: make([]expr.Expr, last)}
	for j := int64(1); j <= last; j++ {
		if e := slots[j]; e != nil {
			arr.Elems[j-1] = e
		} else {
			arr.Elems[j-1] = &expr.Const{V: nil, T: elemT}
		}
	}
	return b.assign(arr, c, subs[0].loc)
}

// countOf counts i in xs.
func countOf(xs []int, i int) int {
	n := 0
	for _, x := range xs {
		if x == i {
			n++
		}
	}
	return n
}
