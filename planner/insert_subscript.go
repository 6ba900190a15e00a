package planner

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// INSERT INTO t (col[1], col[2]) VALUES (a, b) and INSERT INTO t (c.f1,
// c.f2[1], arr[1].f) ...: target columns with subscripts and composite
// fields. As in PostgreSQL, the assignments start from NULL (not the
// column's default) and apply in order, a later one to the same element
// or field winning; elements skipped over and fields not assigned are
// NULL. Subscripts must be integer constants, one per array level,
// starting the array at 1 (streamsql keeps no other lower bound); slices,
// several subscripts in a row (multidimensional arrays) and DEFAULT for an
// element or field are refused by name. The column's domain, if any,
// checks the finished value.

// subStep is one step of a target's path: a subscript or a field.
type subStep struct {
	field int // the field's index in its composite type, or -1 for a subscript
	idx   int64
}

// subTarget is one target col[idx].f...: its position k in the target
// list and its path.
type subTarget struct {
	k    int
	path []subStep
	loc  int32
}

// subscriptTarget records target k, rt (column i with indirection).
func (b *binder) subscriptTarget(rel *catalog.Relation, i, k int, rt *pg.ResTarget) error {
	c := rel.Columns[i]
	t := c.Type
	var path []subStep
	for j, ind := range rt.Indirection {
		if s := ind.GetString_(); s != nil {
			f, err := b.fieldTarget(c, t, s.Sval, rt.Location)
			if err != nil {
				return err
			}
			path = append(path, subStep{field: f})
			t = t.Rec.Types[f]
			continue
		}
		ix := ind.GetAIndices()
		if ix == nil {
			return b.newErr(pgerr.FeatureNotSupported, rt.Location, "this assignment target is not supported")
		}
		if t.Kind != types.Array {
			return b.newErr(pgerr.DatatypeMismatch, rt.Location, "cannot subscript type %s because it does not support subscripting", t)
		}
		if j > 0 && rt.Indirection[j-1].GetAIndices() != nil {
			return b.newErr(pgerr.FeatureNotSupported, rt.Location, "assignment to several subscripts of a multidimensional array is not supported")
		}
		if ix.IsSlice {
			return b.newErr(pgerr.FeatureNotSupported, rt.Location, "assignment to an array slice is not supported")
		}
		n := ix.Uidx.GetAConst()
		if n == nil || n.GetIval() == nil {
			return b.newErr(pgerr.FeatureNotSupported, nodeLoc(ix.Uidx), "an INSERT target's subscript must be an integer constant")
		}
		path = append(path, subStep{field: -1, idx: int64(n.GetIval().Ival)})
		t = *t.Elem
	}
	if b.subTargets == nil {
		b.subTargets = map[int][]subTarget{}
	}
	b.subTargets[i] = append(b.subTargets[i], subTarget{k: k, path: path, loc: rt.Location})
	return nil
}

// fieldTarget finds field name of t, the type of (part of) column c, for
// an assignment target; PostgreSQL's errors when t is no composite type
// or has no such field.
func (b *binder) fieldTarget(c catalog.Column, t types.T, name string, loc int32) (int, error) {
	if t.Kind != types.Record || !t.IsUserDefined() {
		return -1, b.newErr(pgerr.DatatypeMismatch, loc, "cannot assign to field \"%s\" of column \"%s\" because its type %s is not a composite type", name, c.Name, t)
	}
	f := slices.Index(t.Rec.Names, name)
	if f < 0 {
		return -1, b.newErr(pgerr.UndefinedColumn, loc, "cannot assign to field \"%s\" of column \"%s\" because there is no such column in data type %s", name, c.Name, t)
	}
	return f, nil
}

// subDefaultError is PostgreSQL's refusal of DEFAULT for target k of
// subs.
func (b *binder) subDefaultError(subs []subTarget, k int, loc int32) error {
	for _, s := range subs {
		if s.k == k && s.path[0].field >= 0 {
			return b.newErr(pgerr.FeatureNotSupported, loc, "cannot set a subfield to DEFAULT")
		}
	}
	return b.newErr(pgerr.FeatureNotSupported, loc, "cannot set an array element to DEFAULT")
}

// subNode is the value being built for one level of a column: a leaf
// (an assigned value), or the elements or fields assigned below it.
type subNode struct {
	t        types.T
	leaf     expr.Expr
	loc      int32
	children map[int64]*subNode // element index or field number
	first    int64              // the first element assigned (arrays)
}

// subscriptAssign builds column c's value from its targets; value binds
// the expression given for target k.
func (b *binder) subscriptAssign(c catalog.Column, subs []subTarget, value func(k int) (expr.Expr, error)) (expr.Expr, error) {
	root := &subNode{t: c.Type, loc: subs[0].loc}
	for _, s := range subs {
		e, err := value(s.k)
		if err != nil {
			return nil, err
		}
		n := root
		for _, st := range s.path {
			key := st.idx
			var ct types.T
			if st.field >= 0 {
				key, ct = int64(st.field), n.t.Rec.Types[st.field]
			} else {
				ct = *n.t.Elem
			}
			if n.children == nil {
				n.children, n.first = map[int64]*subNode{}, key
				n.leaf = nil
			}
			if key < 1 && st.field < 0 {
				n.first = key
			}
			ch := n.children[key]
			if ch == nil {
				ch = &subNode{t: ct, loc: s.loc}
				n.children[key] = ch
			}
			n = ch
		}
		if n.leaf, err = b.assign(e, catalog.Column{Name: c.Name, Type: n.t}, s.loc); err != nil {
			return nil, err
		}
		n.children = nil
	}
	v, err := b.buildSub(c, root)
	if err != nil {
		return nil, err
	}
	return b.assign(v, c, subs[0].loc)
}

// buildSub makes the expression of node n.
func (b *binder) buildSub(c catalog.Column, n *subNode) (expr.Expr, error) {
	if n.children == nil {
		if n.leaf == nil {
			return &expr.Const{V: nil, T: n.t}, nil
		}
		return n.leaf, nil
	}
	if n.t.Kind == types.Record {
		args := make([]expr.Expr, len(n.t.Rec.Types))
		for f := range args {
			ch := n.children[int64(f)]
			if ch == nil {
				args[f] = &expr.Const{V: nil, T: n.t.Rec.Types[f]}
				continue
			}
			var err error
			if args[f], err = b.buildSub(c, ch); err != nil {
				return nil, err
			}
		}
		return &expr.RowExpr{Args: args, T: n.t}, nil
	}
	if n.first != 1 { // also any element below 1
		return nil, b.newErr(pgerr.FeatureNotSupported, n.loc, "array lower bounds other than 1 are not supported (the first element assigned to \"%s\" must be [1])", c.Name)
	}
	var last int64
	for k := range n.children {
		last = max(last, k)
	}
	if last > 100000 {
		return nil, pgerr.New(pgerr.ProgramLimitExceeded, "array size exceeds the maximum allowed (%d)", 100000)
	}
	arr := &expr.ArrayExpr{T: n.t, Elems: make([]expr.Expr, last)}
	for j := int64(1); j <= last; j++ {
		ch := n.children[j]
		if ch == nil {
			arr.Elems[j-1] = &expr.Const{V: nil, T: *n.t.Elem}
			continue
		}
		var err error
		if arr.Elems[j-1], err = b.buildSub(c, ch); err != nil {
			return nil, err
		}
	}
	return arr, nil
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
