package expr

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

func cast(t *testing.T, e Expr, ty types.T) func(t *testing.T) Expr {
	return func(t *testing.T) Expr {
		c, err := NewCast(e, ty, true)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}

func TestCasts(t *testing.T) {
	f4 := &Const{V: 0.5, T: types.TFloat4}
	runSQL(t, []sqlCase{
		{"numeric->int half away", cast(t, num("2.5"), types.TInt4), "3"},
		{"numeric->int negative", cast(t, num("-2.5"), types.TInt4), "-3"},
		{"float->int half even", cast(t, f8(2.5), types.TInt4), "2"},
		{"float->int 3.5", cast(t, f8(3.5), types.TInt4), "4"},
		{"varchar truncates", cast(t, lit("abcdef"), types.TVarchar.WithTypmod(7)), "abc"},
		{"numeric typmod", cast(t, num("1234.5678"), types.TNumeric.WithTypmod(6<<16|2+4)), "1234.57"},
		{"float4->numeric", cast(t, f4, types.TNumeric), "0.5"},
		{"float8->numeric", cast(t, f8(0.1), types.TNumeric), "0.1"},
		{"big float->numeric", cast(t, f8(1e20), types.TNumeric), "100000000000000000000"},
		{"bool->int", cast(t, &Const{V: true, T: types.TBool}, types.TInt4), "1"},
		{"text->bool", cast(t, lit("yes"), types.TBool), "t"},
		{"int->text", cast(t, i4(12), types.TText), "12"},
		{"int->oid wraps", cast(t, i4(-1), types.TOid), "4294967295"},
		{"bool->text", cast(t, &Const{V: true, T: types.TBool}, types.TText), "true"},
		{"bpchar->text strips", op("||", &Const{V: "ab  ", T: types.TBpchar.WithTypmod(8)}, lit("|")), "ab|"},
		{"array cast", cast(t, &Const{V: []types.Value{int64(1), int64(2)}, T: types.ArrayOf(types.TInt4)}, types.ArrayOf(types.TText)), "{1,2}"},
	})
	errCases := []struct {
		e    Expr
		to   types.T
		code pgerr.Code
		msg  string
	}{
		{&Const{V: int64(2147483648), T: types.TInt8}, types.TInt4, pgerr.NumericValueOutOfRange, "integer out of range"},
		{f8(1e10), types.TInt4, pgerr.NumericValueOutOfRange, "integer out of range"},
		{num("12345.6"), types.TNumeric.WithTypmod(5<<16 | 2 + 4), pgerr.NumericValueOutOfRange, "numeric field overflow"},
		{lit("abc"), types.TInt4, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "abc"`},
		{lit("99999999999"), types.TInt4, pgerr.NumericValueOutOfRange, `value "99999999999" is out of range for type integer`},
		{num("NaN"), types.TInt4, pgerr.FeatureNotSupported, "cannot convert NaN to integer"},
		{i4(1), types.TDate, pgerr.CannotCoerce, "cannot cast type integer to date"},
	}
	for _, c := range errCases {
		_, err := NewCast(c.e, c.to, true)
		expectErr(t, err, c.code, c.msg)
	}
	_, err := NewCast(num("12345.6"), types.TNumeric.WithTypmod(5<<16|2+4), true)
	if d := pgerr.As(err).Detail; d != "A field with precision 5, scale 2 must round to an absolute value less than 10^3." {
		t.Fatalf("detail %q", d)
	}
}

func TestCastColumns(t *testing.T) {
	// Vectorized paths: int8 -> int4 range check skips NULL rows; text -> int.
	b := batch(t, col{types.TInt8, []types.Value{int64(1), nil, int64(-7)}}, col{types.TText, []types.Value{"12", nil, " 3 "}})
	c, _ := NewCast(ref(0, types.TInt8), types.TInt2, true)
	expectValues(t, c, b, int64(1), nil, int64(-7))
	c, _ = NewCast(ref(1, types.TText), types.TInt4, true)
	expectValues(t, c, b, int64(12), nil, int64(3))
	c, _ = NewCast(ref(0, types.TInt8), types.TText, true)
	expectValues(t, c, b, "1", nil, "-7")
	c, _ = NewCast(ref(0, types.TInt8), types.TFloat4, true)
	expectValues(t, c, b, 1.0, nil, -7.0)
	big := batch(t, col{types.TInt8, []types.Value{int64(1), int64(40000)}})
	c, _ = NewCast(ref(0, types.TInt8), types.TInt2, true)
	_, err := evalValues(t, c, big)
	expectErr(t, err, pgerr.NumericValueOutOfRange, "smallint out of range")
}

func TestCoerceAndCommonType(t *testing.T) {
	// assignment: numeric -> int rounds, varchar(n) checks length
	e, err := Coerce(num("2.5"), types.TInt4, true)
	if err != nil {
		t.Fatal(err)
	}
	if v := e.(*Const).V; v != int64(3) {
		t.Fatalf("numeric -> int4 assignment: %v", v)
	}
	_, err = Coerce(num("2.5"), types.TInt4, false)
	expectErr(t, err, pgerr.DatatypeMismatch, "cannot cast type numeric to integer")
	_, err = Coerce(lit("abcd"), types.TVarchar.WithTypmod(7), true)
	expectErr(t, err, pgerr.StringDataRightTruncation, "value too long for type character varying(3)")
	_, err = Coerce(&ColRef{T: types.TText}, types.TInt4, true)
	expectErr(t, err, pgerr.DatatypeMismatch, "cannot cast type text to integer")
	e, err = Coerce(&ColRef{T: types.TInt4}, types.TText, true)
	if err != nil || !e.Type().Equal(types.TText) {
		t.Fatalf("int4 -> text assignment: %v %v", e, err)
	}

	ct := func(ts ...types.T) types.T {
		t.Helper()
		r, err := CommonType(ts, "COALESCE")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := ct(types.TInt4, types.TNumeric); !r.Equal(types.TNumeric) {
		t.Fatalf("integer, numeric: %s", r)
	}
	if r := ct(types.TInt4, types.TInt8); !r.Equal(types.TInt8) {
		t.Fatalf("integer, bigint: %s", r)
	}
	if r := ct(types.TUnknown, types.TUnknown); !r.Equal(types.TText) {
		t.Fatalf("unknown, unknown: %s", r)
	}
	if r := ct(types.TVarchar.WithTypmod(14), types.TVarchar.WithTypmod(14)); !r.Equal(types.TVarchar.WithTypmod(14)) {
		t.Fatalf("typmod kept: %s", r)
	}
	_, err = CommonType([]types.T{types.TInt4, types.TTimestampTZ}, "COALESCE")
	expectErr(t, err, pgerr.DatatypeMismatch, "COALESCE types integer and timestamp with time zone cannot be matched")
	_, err = NewCoalesce([]Expr{i4(1), lit("a")})
	expectErr(t, err, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "a"`)
}

func TestUnknownParams(t *testing.T) {
	// $1 + 1: the parameter takes integer, re-typed rather than cast.
	e := mustBinary(t, "+", &Param{Idx: 0, T: types.TUnknown}, i4(1))
	p, ok := e.(*Call).Args[0].(*Param)
	if !ok || !p.T.Equal(types.TInt4) {
		t.Fatalf("param not re-typed: %s", e.(*Call).Args[0])
	}
	ctx := testCtx()
	ctx.Params = []types.Value{"41"} // untyped parameters arrive as text
	one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 2)
	a, err := e.Eval(ctx, one)
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsOf(a, types.TInt4); got[0] != int64(42) || got[1] != int64(42) {
		t.Fatalf("$1 + 1 = %v", got)
	}
	// explicit cast re-types too
	c, err := NewCast(&Param{Idx: 1, T: types.TUnknown}, types.TDate, true)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := c.(*Param); !ok || !p.T.Equal(types.TDate) {
		t.Fatalf("$2::date: %s", c)
	}
	// $1 || 'x' with both unknown resolves to text
	e = mustBinary(t, "||", &Param{Idx: 0, T: types.TUnknown}, lit("x"))
	if p := e.(*Call).Args[0].(*Param); !p.T.Equal(types.TText) {
		t.Fatalf("$1 || 'x': %s", p.T)
	}
}

func TestFoldAndString(t *testing.T) {
	e := mustBinary(t, "*", mustBinary(t, "+", i4(1), i4(2)), ref(0, types.TInt4))
	if got := e.String(); got != "((1 + 2) * c0)" {
		t.Fatalf("String: %s", got)
	}
	f, err := Fold(testCtx(), e)
	if err != nil {
		t.Fatal(err)
	}
	if f != e {
		t.Fatalf("folded a column reference: %s", f)
	}
	inner := e.(*Call).Args[0]
	f, err = Fold(testCtx(), inner)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := f.(*Const); !ok || c.V != int64(3) {
		t.Fatalf("Fold(1 + 2) = %s", f)
	}
	_, err = Fold(testCtx(), mustBinary(t, "/", i4(1), i4(0)))
	expectErr(t, err, pgerr.DivisionByZero, "division by zero")
	r, _ := NewCall("random", nil)
	if f, _ := Fold(testCtx(), r); f != r {
		t.Fatal("folded random()")
	}
	neg := mustBinary(t, ">", ref(0, types.TInt4), i4(-1))
	if got := neg.String(); got != "(c0 > '-1'::integer)" {
		t.Fatalf("String: %s", got)
	}
	cs, _ := NewCase([]When{{Cond: &IsNull{E: ref(0, types.TInt4)}, Result: lit("n")}}, lit("v"))
	if got := cs.String(); got != "CASE WHEN (c0 IS NULL) THEN 'n'::text ELSE 'v'::text END" {
		t.Fatalf("String: %s", got)
	}
}

func TestParamValues(t *testing.T) {
	cases := []struct {
		v    types.Value
		t    types.T
		want types.Value
	}{
		{"41", types.TInt4, int64(41)},
		{int64(3), types.TFloat8, 3.0},
		{2.5, types.TInt4, int64(2)},
		{"abc", types.TText, "abc"},
		{nil, types.TInt4, nil},
	}
	for _, c := range cases {
		got, err := paramValue(c.v, c.t)
		if err != nil || got != c.want {
			t.Errorf("paramValue(%v, %s) = %v, %v; want %v", c.v, c.t, got, err, c.want)
		}
	}
	got, err := paramValue(int64(7), types.TNumeric)
	if err != nil || numericString(got.(*apd.Decimal)) != "7" {
		t.Fatalf("int64 -> numeric param: %v %v", got, err)
	}
	_, err = paramValue("x", types.TInt4)
	expectErr(t, err, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "x"`)
}

func TestInListString(t *testing.T) {
	in, err := NewInList(ref(0, types.TInt4), []Expr{i4(1), i4(2)}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := in.String(); got != "(c0 = ANY ('{1,2}'::integer[]))" {
		t.Fatalf("String: %s", got)
	}
	in, _ = NewInList(ref(0, types.TInt4), []Expr{ref(1, types.TInt4), i4(2)}, true)
	if got := in.String(); got != "(c0 <> ALL (ARRAY[c1, 2]))" {
		t.Fatalf("String: %s", got)
	}
}
