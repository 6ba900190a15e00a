package expr

import (
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Expected values below were checked against PostgreSQL 15.

func TestIntArithmetic(t *testing.T) {
	b := batch(t, col{types.TInt4, []types.Value{int64(7), int64(-7), nil, int64(2147483647)}},
		col{types.TInt4, []types.Value{int64(2), int64(2), int64(5), int64(1)}})
	x, y := ref(0, types.TInt4), ref(1, types.TInt4)
	expectValues(t, mustBinary(t, "/", x, y), b, int64(3), int64(-3), nil, int64(2147483647))
	expectValues(t, mustBinary(t, "%", x, y), b, int64(1), int64(-1), nil, int64(0))
	expectValues(t, mustBinary(t, "-", x, y), b, int64(5), int64(-9), nil, int64(2147483646))
	_, err := evalValues(t, mustBinary(t, "+", x, y), b)
	expectErr(t, err, pgerr.NumericValueOutOfRange, "integer out of range")
	_, err = evalValues(t, mustBinary(t, "*", x, i4(1000000)), b)
	expectErr(t, err, pgerr.NumericValueOutOfRange, "integer out of range")
}

func TestIntOverflowIgnoresNullRows(t *testing.T) {
	// Garbage under a NULL must not raise: only the non-NULL row counts.
	b := batch(t, col{types.TInt2, []types.Value{int64(1), nil}}, col{types.TInt2, []types.Value{int64(0), int64(0)}})
	e := mustBinary(t, "/", ref(0, types.TInt2), ref(1, types.TInt2))
	_, err := evalValues(t, e, b)
	expectErr(t, err, pgerr.DivisionByZero, "division by zero")
	b2 := batch(t, col{types.TInt2, []types.Value{nil, int64(32767)}})
	expectValues(t, mustBinary(t, "/", &Const{V: int64(1), T: types.TInt2}, ref(0, types.TInt2)), b2, nil, int64(0))
	_, err = evalValues(t, mustBinary(t, "+", ref(0, types.TInt2), &Const{V: int64(1), T: types.TInt2}), b2)
	expectErr(t, err, pgerr.NumericValueOutOfRange, "smallint out of range")
}

func TestMixedIntegerTypes(t *testing.T) {
	cases := []struct {
		l, r types.T
		want types.T
	}{
		{types.TInt2, types.TInt4, types.TInt4},
		{types.TInt4, types.TInt8, types.TInt8},
		{types.TInt4, types.TNumeric, types.TNumeric},
		{types.TInt4, types.TFloat8, types.TFloat8},
		{types.TFloat4, types.TInt8, types.TFloat8},
		{types.TFloat4, types.TNumeric, types.TFloat8},
		{types.TInt2, types.TFloat4, types.TFloat8},
		{types.TFloat4, types.TInt4, types.TFloat8}, // float48 wins on the preferred type
		{types.TFloat4, types.TFloat8, types.TFloat8},
		{types.TInt2, types.TInt2, types.TInt2},
	}
	for _, c := range cases {
		e := mustBinary(t, "+", &ColRef{T: c.l}, &ColRef{T: c.r})
		if !e.Type().Equal(c.want) {
			t.Errorf("%s + %s: %s, want %s", c.l, c.r, e.Type(), c.want)
		}
	}
	// Expected types above are pg_typeof(...) in PostgreSQL 15.
	// unknown literal takes the other side's type
	e := mustBinary(t, "+", &ColRef{T: types.TInt8}, lit("5"))
	if !e.Type().Equal(types.TInt8) {
		t.Fatalf("bigint + '5': %s", e.Type())
	}
	_, err := NewBinary("+", &ColRef{T: types.TInt4}, lit("x"))
	expectErr(t, err, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "x"`)
}

func TestOperatorDoesNotExist(t *testing.T) {
	_, err := NewBinary("+", &ColRef{T: types.TInt4}, &ColRef{T: types.TText})
	expectErr(t, err, pgerr.UndefinedFunction, "operator does not exist: integer + text")
	if h := pgerr.As(err).Hint; h != "No operator matches the given name and argument types. You might need to add explicit type casts." {
		t.Fatalf("hint %q", h)
	}
	_, err = NewCall("foo", []Expr{i4(1)})
	expectErr(t, err, pgerr.UndefinedFunction, "function foo(integer) does not exist")
	_, err = NewUnary("-", &ColRef{T: types.TText})
	expectErr(t, err, pgerr.UndefinedFunction, "operator does not exist: - text")
}

func TestUnaryMinusOverflow(t *testing.T) {
	b := batch(t, col{types.TInt8, []types.Value{int64(-9223372036854775808)}})
	e, err := NewUnary("-", ref(0, types.TInt8))
	if err != nil {
		t.Fatal(err)
	}
	_, err = evalValues(t, e, b)
	expectErr(t, err, pgerr.NumericValueOutOfRange, "bigint out of range")
}

func TestFloatDivisionByZero(t *testing.T) {
	b := batch(t, col{types.TFloat8, []types.Value{1.5, 0.0}})
	_, err := evalValues(t, mustBinary(t, "/", &Const{V: 1.0, T: types.TFloat8}, ref(0, types.TFloat8)), b)
	expectErr(t, err, pgerr.DivisionByZero, "division by zero")
}
