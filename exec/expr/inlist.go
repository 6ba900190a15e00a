package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/streamsql/streamsql/types"
)

// `E [NOT] IN (list)`: true if E equals some element, else NULL if E or
// some element is NULL, else false. Lists of constants of integer or string
// types are probed through a hash set; other lists apply Eq per element,
// in PostgreSQL's order (ordered), an element that fails being evaluated
// again on the rows no earlier element matched.

// Type is boolean.
func (e *InList) Type() types.T { return types.TBool }

// String renders as PostgreSQL's EXPLAIN does: (x = ANY ('{1,2}'::integer[]))
// for constant lists, (x = ANY (ARRAY[a, b])) otherwise.
func (e *InList) String() string {
	op := " = ANY "
	if e.Not {
		op = " <> ALL "
	}
	t := e.E.Type()
	vals := make([]types.Value, 0, len(e.List))
	for _, x := range e.List {
		c, ok := x.(*Const)
		if !ok || !c.T.SameKind(t) {
			vals = nil
			break
		}
		vals = append(vals, c.V)
	}
	var list string
	if vals != nil {
		list = constString(vals, types.ArrayOf(t.WithTypmod(-1)))
	} else {
		list = (&ArrayExpr{Elems: e.List}).String()
	}
	return "(" + e.E.String() + op + "(" + list + "))"
}

// Eval computes the membership test.
func (e *InList) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	l, err := e.E.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	n := l.Len()
	if out, ok := e.hashProbe(ctx, l); ok {
		return out, nil
	}
	found, null := newBits(n), newBits(n)
	for k, item := range e.ordered() {
		eq, err := evalEq(ctx, e.Eq, l, e.E.Type(), item, b)
		if err != nil && k > 0 {
			// PostgreSQL ORs the comparisons (ANDs them for NOT IN), so an
			// item is evaluated only on rows no earlier item matched.
			var ra arrow.Array
			if ra, err = evalRows(ctx, item, b, rowsWhere(found, n, false)); err == nil {
				eq, err = eqArrays(ctx, e.Eq, l, e.E.Type(), ra, item.Type())
				ra.Release()
			}
		}
		if err != nil {
			return nil, err
		}
		v, m := boolBits(eq)
		for i := range found {
			found[i] |= m[i] & v[i]
			null[i] |= ^m[i]
		}
		eq.Release()
	}
	return inResult(n, found, null, e.Not), nil
}

// ordered is the list in the order PostgreSQL compares it
// (transformAExprIn): two or more constants first, as one = ANY over their
// array, then each other item in turn; otherwise every item in turn.
func (e *InList) ordered() []Expr {
	consts := 0
	for _, x := range e.List {
		if _, ok := x.(*Const); ok {
			consts++
		}
	}
	if consts < 2 || consts == len(e.List) {
		return e.List
	}
	out := make([]Expr, 0, len(e.List))
	for _, x := range e.List {
		if _, ok := x.(*Const); ok {
			out = append(out, x)
		}
	}
	for _, x := range e.List {
		if _, ok := x.(*Const); !ok {
			out = append(out, x)
		}
	}
	return out
}

// inResult turns found/null bitmaps into the IN (or NOT IN) result.
func inResult(n int, found, null []byte, not bool) arrow.Array {
	val, valid := newBits(n), newBits(n)
	for i := range val {
		valid[i] = found[i] | ^null[i]
		val[i] = found[i]
		if not {
			val[i] = ^found[i]
		}
	}
	return makeBool(n, val, valid)
}

// hashProbe handles constant lists over integer and text-like types.
func (e *InList) hashProbe(ctx *Context, l arrow.Array) (arrow.Array, bool) {
	t := e.E.Type()
	if !(t.IsInteger() || t.Kind == types.Text || t.Kind == types.Varchar || t.Kind == types.Name) || !e.Eq.Args[0].SameKind(t) || !e.Eq.Args[1].SameKind(t) {
		return nil, false
	}
	set := map[any]struct{}{}
	hasNull := false
	for _, item := range e.List {
		c, ok := item.(*Const)
		if !ok {
			return nil, false
		}
		if c.V == nil {
			hasNull = true
			continue
		}
		if !c.T.SameKind(t) && !(c.T.IsString() && t.IsString() && c.T.Kind != types.Bpchar) {
			return nil, false
		}
		set[c.V] = struct{}{}
	}
	n := l.Len()
	found, null := newBits(n), newBits(n)
	lm := validity(l)
	if sa, ok := l.(*array.String); ok && t.IsString() {
		// text: the set by string, the rows read without boxing them
		strs := make(map[string]struct{}, len(set))
		for v := range set {
			s, ok := v.(string)
			if !ok {
				return nil, false
			}
			strs[s] = struct{}{}
		}
		for i := 0; i < n; i++ {
			if !isValid(lm, i) {
				bitutil.SetBit(null, i)
			} else if _, ok := strs[sa.Value(i)]; ok {
				bitutil.SetBit(found, i)
			} else if hasNull {
				bitutil.SetBit(null, i)
			}
		}
		return inResult(n, found, null, e.Not), true
	}
	for i := 0; i < n; i++ {
		if !isValid(lm, i) {
			bitutil.SetBit(null, i)
			continue
		}
		if _, ok := set[valueAt(l, i, t)]; ok {
			bitutil.SetBit(found, i)
		} else if hasNull {
			bitutil.SetBit(null, i)
		}
	}
	return inResult(n, found, null, e.Not), true
}

// NewInList resolves `e [NOT] IN (list)`: the operands are coerced to their
// common type (42804 on mismatch, as PostgreSQL's "IN" context).
func NewInList(e Expr, list []Expr, not bool) (*InList, error) {
	ts := append([]types.T{e.Type()}, typesOf(list)...)
	t, err := CommonType(ts, "IN")
	if err != nil {
		return nil, err
	}
	le, err := coerceImplicit(e, t)
	if err != nil {
		return nil, err
	}
	out := &InList{E: le, Not: not, List: make([]Expr, len(list))}
	for i, x := range list {
		if out.List[i], err = coerceImplicit(x, t); err != nil {
			return nil, err
		}
	}
	if out.Eq, err = resolveEq(&ColRef{T: t}, &ColRef{T: t}); err != nil {
		return nil, err
	}
	return out, nil
}
