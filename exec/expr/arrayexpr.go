package expr

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// ARRAY[...] constructors and subscripts (one-dimensional arrays, 1-based).

// Type returns the array type.
func (e *ArrayExpr) Type() types.T { return e.T }

func (e *ArrayExpr) String() string {
	parts := make([]string, len(e.Elems))
	for i, x := range e.Elems {
		parts[i] = x.String()
	}
	return "ARRAY[" + strings.Join(parts, ", ") + "]"
}

// Eval builds one list per row from the element expressions.
func (e *ArrayExpr) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	elems := make([]arrow.Array, len(e.Elems))
	defer releaseAll(elems)
	for i, x := range e.Elems {
		a, err := x.Eval(ctx, b)
		if err != nil {
			return nil, err
		}
		if elems[i], err = castTo(ctx, a, x.Type(), *e.T.Elem); err != nil {
			return nil, err
		}
	}
	lb := array.NewListBuilder(ctx.Allocator(), e.T.Elem.ArrowType())
	defer lb.Release()
	vb := lb.ValueBuilder()
	for r := 0; r < n; r++ {
		lb.Append(true)
		for _, a := range elems {
			if err := appendValue(vb, valueAt(a, r, *e.T.Elem), *e.T.Elem); err != nil {
				return nil, err
			}
		}
	}
	return lb.NewArray(), nil
}

// NewArrayExpr builds ARRAY[elems...] with the elements' common type
// (ARRAY[] with no elements needs an explicit type: pass elem, else text).
func NewArrayExpr(elems []Expr) (*ArrayExpr, error) {
	t, err := CommonType(typesOf(elems), "ARRAY")
	if err != nil {
		return nil, err
	}
	out := &ArrayExpr{T: types.ArrayOf(t), Elems: make([]Expr, len(elems))}
	for i, x := range elems {
		if out.Elems[i], err = coerceImplicit(x, t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Type returns the element type.
func (e *Subscript) Type() types.T { return e.T }

func (e *Subscript) String() string { return "(" + e.E.String() + ")[" + e.Index.String() + "]" }

// Eval picks element Index (1-based) of each row's array; NULL when out of range.
func (e *Subscript) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	if c, ok := e.E.(*Call); ok && c.Fn.Element != nil {
		if k, ok := e.Index.(*Const); ok && k.V != nil {
			if kv, ok := k.V.(int64); ok {
				return c.evalElement(ctx, b, kv)
			}
		}
	}
	a, err := e.E.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	ix, err := e.Index.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer ix.Release()
	l, ok := a.(*array.List)
	if !ok {
		return nil, pgerr.Internal("subscript of a non-array value")
	}
	n := a.Len()
	idx := make([]int, n)
	iv := make([]int64, n)
	readInt(ix, iv)
	for i := range idx {
		idx[i] = -1
		if l.IsNull(i) || ix.IsNull(i) {
			continue
		}
		s, end := l.ValueOffsets(i)
		if k := iv[i]; k >= 1 && k <= end-s {
			idx[i] = int(s + k - 1)
		}
	}
	return takeRows(ctx.Allocator(), l.ListValues(), idx), nil
}

// NewSubscript builds e[index]; index is coerced to integer.
func NewSubscript(e, index Expr) (*Subscript, error) {
	t := e.Type()
	if t.Kind != types.Array {
		return nil, pgerr.New(pgerr.DatatypeMismatch, "cannot subscript type %s because it does not support subscripting", t)
	}
	ix, err := Coerce(index, types.TInt4, false)
	if err != nil {
		return nil, pgerr.New(pgerr.DatatypeMismatch, "array subscript must have type integer")
	}
	return &Subscript{E: e, Index: ix, T: *t.Elem}, nil
}
