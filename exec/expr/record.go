package expr

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Record values (types.Record): the ROW(...) constructor, field selection
// (x).name, comparisons of record values and IS [NOT] NULL on them. Record
// comparison operators are PostgreSQL's record_eq/record_lt family: field
// by field, NULL fields equal to each other and above every value. (A
// comparison of two ROW(...) constructors written out is bound by the
// planner field by field instead, with SQL's NULL semantics, as
// PostgreSQL's RowCompareExpr does; see RowCompare.)

// RowExpr is ROW(a, b, ...): a record of its arguments. Immutable.
type RowExpr struct {
	Args []Expr
	T    types.T
	// Untyped keeps, by argument, an untyped literal or parameter as
	// written (Args has it as text), so that a cast or assignment of the
	// row to a composite type gives it the field's type (composite.go).
	Untyped []Expr
}

// NewRowExpr builds ROW(args...) with the given field names (nil: f1, f2,
// ...). An untyped argument (NULL, 'abc') becomes text, as PostgreSQL
// resolves unknown fields of a row.
func NewRowExpr(args []Expr, names []string) (*RowExpr, error) {
	ts := make([]types.T, len(args))
	out := make([]Expr, len(args))
	var untyped []Expr
	for i, a := range args {
		ts[i] = a.Type()
		out[i] = a
		if ts[i].Kind == types.Unknown {
			if untyped == nil {
				untyped = make([]Expr, len(args))
			}
			untyped[i] = a
			ts[i] = types.TText
			var err error
			if out[i], err = coerceImplicit(a, types.TText); err != nil {
				return nil, err
			}
		}
	}
	return &RowExpr{Args: out, T: types.RecordOf(names, ts), Untyped: untyped}, nil
}

// Type returns the record type.
func (e *RowExpr) Type() types.T { return e.T }

func (e *RowExpr) String() string {
	parts := make([]string, len(e.Args))
	for i, a := range e.Args {
		parts[i] = a.String()
	}
	return "ROW(" + strings.Join(parts, ", ") + ")"
}

// Eval builds a struct array from the arguments; a row is never NULL.
func (e *RowExpr) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	fs := e.T.Fields()
	cols := make([]arrow.Array, len(e.Args))
	defer releaseAll(cols)
	fields := make([]arrow.Field, len(e.Args))
	for i, a := range e.Args {
		x, err := a.Eval(ctx, b)
		if err != nil {
			return nil, err
		}
		if cols[i], err = castTo(ctx, x, a.Type(), fs[i]); err != nil {
			return nil, err
		}
		fields[i] = arrow.Field{Name: "f" + itoa(i+1), Type: fs[i].ArrowType(), Nullable: true}
	}
	if len(cols) == 0 {
		return types.MakeArray(ctx.Allocator(), e.T, make([]types.Value, n))
	}
	return array.NewStructArrayWithFields(cols, fields)
}

func itoa(i int) string {
	var buf [20]byte
	p := len(buf)
	for {
		p--
		buf[p] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			break
		}
	}
	return string(buf[p:])
}

// FieldSelect is (E).name: one field of a record.
type FieldSelect struct {
	E    Expr
	Idx  int
	Name string
}

// NewFieldSelect builds (e).name; 42703 when the record has no such field.
func NewFieldSelect(e Expr, name string) (*FieldSelect, error) {
	t := e.Type()
	if t.Kind != types.Record || t.Rec == nil {
		return nil, pgerr.New(pgerr.UndefinedColumn, "column notation .%s applied to type %s, which is not a composite type", name, t)
	}
	for i, n := range t.Rec.Names {
		if n == name {
			return &FieldSelect{E: e, Idx: i, Name: name}, nil
		}
	}
	return nil, pgerr.New(pgerr.UndefinedColumn, "could not identify column \"%s\" in record data type", name)
}

// Type returns the field's type.
func (e *FieldSelect) Type() types.T { return e.E.Type().Rec.Types[e.Idx] }

func (e *FieldSelect) String() string { return "(" + e.E.String() + ")." + quoteIdentIfNeeded(e.Name) }

// Eval reads the field; NULL where the record itself is NULL.
func (e *FieldSelect) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	a, err := e.E.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	s := a.(*array.Struct)
	f := s.Field(e.Idx)
	if s.NullN() == 0 {
		f.Retain()
		return f, nil
	}
	t := e.Type()
	vals := make([]types.Value, s.Len())
	for i := range vals {
		if s.IsValid(i) {
			vals[i] = valueAt(f, i, t)
		}
	}
	return types.MakeArray(ctx.Allocator(), t, vals)
}

func quoteIdentIfNeeded(s string) string {
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
	}
	return s
}

// recordBinary binds a comparison of two record values (record_eq,
// record_lt, ...); nil, nil when an operand is not a record.
func recordBinary(op string, l, r Expr) (Expr, error) {
	lt, rt := l.Type(), r.Type()
	if lt.Kind != types.Record || rt.Kind != types.Record || !isCmpOp(op) {
		return nil, nil
	}
	t, err := CommonType([]types.T{lt, rt}, "record")
	if err != nil {
		return nil, err
	}
	args, err := coerceAll([]Expr{l, r}, t)
	if err != nil {
		return nil, err
	}
	f := &Func{Name: op, Args: []types.T{t, t}, Return: types.TBool, Strict: true, Kernel: valueCompare(op, t)}
	return &Call{Fn: f, Args: args}, nil
}

// commonRecord is the field-wise common type of records with as many
// fields; ok false when their shapes differ.
func commonRecord(ts []types.T, context string) (types.T, bool, error) {
	var shape types.T
	found := false
	for _, t := range ts {
		if t.Kind == types.Unknown {
			continue
		}
		if t.Kind != types.Record || t.Rec == nil {
			return types.T{}, false, nil
		}
		if !found {
			shape, found = t, true
			continue
		}
		if len(t.Rec.Types) != len(shape.Rec.Types) || t.Rec.OID != shape.Rec.OID {
			// (a composite type of the catalog matches itself only)
			return types.T{}, false, pgerr.New(pgerr.DatatypeMismatch, "%s types %s and %s cannot be matched", context, shape, t)
		}
	}
	if !found {
		return types.T{}, false, nil
	}
	if shape.Rec.OID != 0 {
		return shape, true, nil // all of one composite type
	}
	fields := make([]types.T, len(shape.Rec.Types))
	for i := range fields {
		col := make([]types.T, 0, len(ts))
		for _, t := range ts {
			if t.Kind == types.Record {
				col = append(col, t.Rec.Types[i])
			}
		}
		ft, err := CommonType(col, context)
		if err != nil {
			return types.T{}, false, err
		}
		fields[i] = ft
	}
	return types.RecordOf(shape.Rec.Names, fields), true, nil
}

// recordCastContext is the context in which one record converts to
// another: field by field, with as many fields.
func recordCastContext(from, to types.T) castCtx {
	if from.Rec == nil || to.Rec == nil || len(from.Rec.Types) != len(to.Rec.Types) {
		return 0
	}
	if from.Rec.OID != 0 && to.Rec.OID != 0 && from.Rec.OID != to.Rec.OID {
		return 0 // one composite type to another
	}
	c := ctxImplicit
	for i := range from.Rec.Types {
		fc := castContext(from.Rec.Types[i], to.Rec.Types[i])
		if fc == 0 {
			return 0
		}
		if fc > c {
			c = fc
		}
	}
	return c
}

// castRecordValue converts a record field by field.
func castRecordValue(ctx *Context, v types.Value, from, to types.T, explicit bool) (types.Value, error) {
	in, _ := v.(types.RowValue)
	out := make(types.RowValue, len(in))
	for i, f := range in {
		if f == nil {
			continue
		}
		r, err := castValue(ctx, f, from.Rec.Types[i], to.Rec.Types[i], explicit)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

// recordIsNull is IS [NOT] NULL on records: IS NULL when the record is
// NULL or every field is, IS NOT NULL when it is not NULL and no field is.
func recordIsNull(a arrow.Array, t types.T, not bool) arrow.Array {
	n := a.Len()
	out := newBits(n)
	for i := 0; i < n; i++ {
		v := valueAt(a, i, t)
		allNull, noneNull := true, v != nil
		if r, ok := v.(types.RowValue); ok {
			for _, f := range r {
				if f == nil {
					noneNull = false
				} else {
					allNull = false
				}
			}
		}
		if (!not && allNull) || (not && noneNull) {
			bitutil.SetBit(out, i)
		}
	}
	return makeBool(n, out, nil)
}

// RowCompare is ROW(a, b) op ROW(c, d) for <, <=, > and >= as SQL defines
// it (PostgreSQL's RowCompareExpr): the first pair of fields that is not
// equal decides; a NULL pair before that makes the result NULL; all pairs
// equal make <= and >= true. Eq[i] is field i's = and Cmp[i] its op.
type RowCompare struct {
	Op      string
	Eq, Cmp []Expr
}

// Type is boolean.
func (e *RowCompare) Type() types.T { return types.TBool }

func (e *RowCompare) String() string {
	l := make([]string, len(e.Cmp))
	r := make([]string, len(e.Cmp))
	for i, c := range e.Cmp {
		if call, ok := c.(*Call); ok && len(call.Args) == 2 {
			l[i], r[i] = call.Args[0].String(), call.Args[1].String()
		}
	}
	return "(ROW(" + strings.Join(l, ", ") + ") " + e.Op + " ROW(" + strings.Join(r, ", ") + "))"
}

// Eval decides each row from the pairs' = and op results.
func (e *RowCompare) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	eqs := make([]arrow.Array, len(e.Eq))
	cmps := make([]arrow.Array, len(e.Cmp))
	defer releaseAll(eqs)
	defer releaseAll(cmps)
	for i := range e.Eq {
		var err error
		if eqs[i], err = e.Eq[i].Eval(ctx, b); err != nil {
			return nil, err
		}
		if cmps[i], err = e.Cmp[i].Eval(ctx, b); err != nil {
			return nil, err
		}
	}
	out, valid := newBits(n), newBits(n)
	orEqual := e.Op == "<=" || e.Op == ">="
	for r := 0; r < n; r++ {
		res, isNull := orEqual, false
		for i := range eqs {
			eq := eqs[i].(*array.Boolean)
			if eq.IsNull(r) {
				isNull = true
				break
			}
			if !eq.Value(r) {
				c := cmps[i].(*array.Boolean)
				isNull = c.IsNull(r)
				res = !isNull && c.Value(r)
				break
			}
		}
		if !isNull {
			bitutil.SetBit(valid, r)
			if res {
				bitutil.SetBit(out, r)
			}
		}
	}
	return makeBool(n, out, valid), nil
}
