package expr

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/streamsql/streamsql/types"
)

// Boolean logic with SQL's three values, computed a byte (eight rows) at a
// time over the value and validity bitmaps.

// boolBits returns a boolean array's value bits and validity bits, both
// starting at bit 0; validity is all ones when there are no NULLs.
func boolBits(a arrow.Array) (v, m []byte) {
	n := a.Len()
	d := a.Data()
	v = d.Buffers()[1].Bytes()
	if d.Offset() != 0 {
		c := newBits(n)
		bitutil.CopyBitmap(v, d.Offset(), n, c, 0)
		v = c
	}
	m = validity(a)
	if m == nil {
		m = newBits(n)
		bitutil.SetBitsTo(m, 0, int64(n), true)
	}
	return v, m
}

// evalRows evaluates e for the given rows of b only and returns a
// full-length array that is NULL elsewhere. It lets CASE, COALESCE and
// AND/OR skip rows that must not be evaluated (1/x where x = 0).
func evalRows(ctx *Context, e Expr, b arrow.RecordBatch, rows []int) (arrow.Array, error) {
	n := int(b.NumRows())
	if len(rows) == n {
		return e.Eval(ctx, b)
	}
	mem := ctx.Allocator()
	if len(rows) == 0 {
		return allNull(mem, e.Type().ArrowType(), n), nil
	}
	sub := sliceBatch(mem, b, rows, e)
	defer sub.Release()
	r, err := e.Eval(ctx, sub)
	if err != nil {
		return nil, err
	}
	defer r.Release()
	scatter := make([]int, n)
	for i := range scatter {
		scatter[i] = -1
	}
	for k, i := range rows {
		scatter[i] = k
	}
	return takeRows(mem, r, scatter), nil
}

// rowsWhere lists the rows whose bit in bits is clear (want false) or set.
func rowsWhere(bits []byte, n int, want bool) []int {
	rows := make([]int, 0, n)
	for i := 0; i < n; i++ {
		if bitutil.BitIsSet(bits, i) == want {
			rows = append(rows, i)
		}
	}
	return rows
}

// evalLogic is AND (and=true) or OR over args. A row is decided by a FALSE
// (AND) or TRUE (OR) argument; later arguments are evaluated only while
// some rows are undecided, and when one fails, it is retried on the
// undecided rows only, so `x <> 0 AND 1/x > 0` behaves as in PostgreSQL.
func evalLogic(ctx *Context, args []Expr, b arrow.RecordBatch, and bool) (arrow.Array, error) {
	n := int(b.NumRows())
	nb := len(newBits(n))
	decided, null := newBits(n), newBits(n)
	for k, e := range args {
		a, err := e.Eval(ctx, b)
		if err != nil && k > 0 {
			a, err = evalRows(ctx, e, b, rowsWhere(decided, n, false))
		}
		if err != nil {
			return nil, err
		}
		v, m := boolBits(a)
		for i := 0; i < nb; i++ {
			if and {
				decided[i] |= m[i] &^ v[i]
			} else {
				decided[i] |= m[i] & v[i]
			}
			null[i] |= ^m[i]
		}
		a.Release()
		if k < len(args)-1 && bitutil.CountSetBits(decided, 0, n) == n {
			break
		}
	}
	val, valid := newBits(n), newBits(n)
	for i := 0; i < nb; i++ {
		valid[i] = decided[i] | ^null[i]
		if and {
			val[i] = ^decided[i] & ^null[i]
		} else {
			val[i] = decided[i]
		}
	}
	return makeBool(n, val, valid), nil
}

// Type is boolean.
func (e *And) Type() types.T { return types.TBool }

// Eval computes the conjunction.
func (e *And) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	return evalLogic(ctx, e.Args, b, true)
}

func (e *And) String() string { return joinExprs(e.Args, " AND ") }

// Type is boolean.
func (e *Or) Type() types.T { return types.TBool }

// Eval computes the disjunction.
func (e *Or) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	return evalLogic(ctx, e.Args, b, false)
}

func (e *Or) String() string { return joinExprs(e.Args, " OR ") }

func joinExprs(es []Expr, sep string) string {
	parts := make([]string, len(es))
	for i, a := range es {
		parts[i] = a.String()
	}
	return "(" + strings.Join(parts, sep) + ")"
}

// Type is boolean.
func (e *Not) Type() types.T { return types.TBool }

// Eval negates; NULL stays NULL.
func (e *Not) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	a, err := e.E.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	v, _ := boolBits(a)
	out := make([]byte, len(v))
	for i := range v {
		out[i] = ^v[i]
	}
	return makeBool(a.Len(), out, validity(a)), nil
}

func (e *Not) String() string { return "(NOT " + e.E.String() + ")" }

// Type is boolean.
func (e *IsNull) Type() types.T { return types.TBool }

// Eval tests each row for NULL; the result is never NULL.
func (e *IsNull) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	a, err := e.E.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	if t := e.E.Type(); t.Kind == types.Record {
		return recordIsNull(a, t, e.Not), nil
	}
	n := a.Len()
	out := newBits(n)
	if m := validity(a); m != nil {
		copy(out, m)
	} else {
		bitutil.SetBitsTo(out, 0, int64(n), true)
	}
	if !e.Not {
		for i := range out {
			out[i] = ^out[i]
		}
	}
	return makeBool(n, out, nil), nil
}

func (e *IsNull) String() string {
	if e.Not {
		return "(" + e.E.String() + " IS NOT NULL)"
	}
	return "(" + e.E.String() + " IS NULL)"
}

// Type is boolean.
func (e *IsBool) Type() types.T { return types.TBool }

// Eval is IS [NOT] TRUE/FALSE/UNKNOWN; the result is never NULL.
func (e *IsBool) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	a, err := e.E.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	n := a.Len()
	v, m := boolBits(a)
	out := newBits(n)
	for i := range out {
		switch {
		case e.Value == nil:
			out[i] = ^m[i]
		case *e.Value:
			out[i] = m[i] & v[i]
		default:
			out[i] = m[i] &^ v[i]
		}
		if e.Not {
			out[i] = ^out[i]
		}
	}
	return makeBool(n, out, nil), nil
}

func (e *IsBool) String() string {
	w := "UNKNOWN"
	if e.Value != nil {
		w = "FALSE"
		if *e.Value {
			w = "TRUE"
		}
	}
	if e.Not {
		w = "NOT " + w
	}
	return "(" + e.E.String() + " IS " + w + ")"
}

// Type is boolean.
func (e *IsDistinct) Type() types.T { return types.TBool }

// Eval compares with NULLs equal to each other and unequal to values.
func (e *IsDistinct) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	l, err := e.L.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	r, err := e.R.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer r.Release()
	eq, err := eqArrays(ctx, e.Eq, l, e.L.Type(), r, e.R.Type())
	if err != nil {
		return nil, err
	}
	defer eq.Release()
	n := l.Len()
	v, _ := boolBits(eq)
	lm, rm := validity(l), validity(r)
	out := newBits(n)
	for i := 0; i < n; i++ {
		lv, rv := isValid(lm, i), isValid(rm, i)
		distinct := lv != rv || (lv && !bitutil.BitIsSet(v, i))
		if distinct != e.Not {
			bitutil.SetBit(out, i)
		}
	}
	return makeBool(n, out, nil), nil
}

func (e *IsDistinct) String() string {
	if e.Not {
		return "(" + e.L.String() + " IS NOT DISTINCT FROM " + e.R.String() + ")"
	}
	return "(" + e.L.String() + " IS DISTINCT FROM " + e.R.String() + ")"
}
