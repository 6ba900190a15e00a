package expr

import (
	"testing"

	"github.com/streamsql/streamsql/types"
)

func TestThreeValuedLogic(t *testing.T) {
	T, F := true, false
	vals := []types.Value{T, T, T, F, F, F, nil, nil, nil}
	other := []types.Value{T, F, nil, T, F, nil, T, F, nil}
	b := batch(t, col{types.TBool, vals}, col{types.TBool, other})
	x, y := ref(0, types.TBool), ref(1, types.TBool)
	expectValues(t, &And{Args: []Expr{x, y}}, b, T, F, nil, F, F, F, nil, F, nil)
	expectValues(t, &Or{Args: []Expr{x, y}}, b, T, T, T, T, F, nil, T, nil, nil)
	expectValues(t, &Not{E: x}, b, F, F, F, T, T, T, nil, nil, nil)
	expectValues(t, &IsNull{E: x}, b, F, F, F, F, F, F, T, T, T)
	expectValues(t, &IsNull{E: x, Not: true}, b, T, T, T, T, T, T, F, F, F)
	expectValues(t, &IsBool{E: x, Value: &T}, b, T, T, T, F, F, F, F, F, F)
	expectValues(t, &IsBool{E: x, Value: &F, Not: true}, b, T, T, T, F, F, F, T, T, T)
	expectValues(t, &IsBool{E: x}, b, F, F, F, F, F, F, T, T, T)
}

func TestAndSkipsDecidedRows(t *testing.T) {
	// x <> 0 AND 10 / x > 1 must not divide by zero (PostgreSQL short-circuits).
	b := batch(t, col{types.TInt4, []types.Value{int64(0), int64(5), int64(20), nil}})
	x := ref(0, types.TInt4)
	e := &And{Args: []Expr{mustBinary(t, "<>", x, i4(0)), mustBinary(t, ">", mustBinary(t, "/", i4(10), x), i4(1))}}
	expectValues(t, e, b, false, true, false, nil)
}

func TestIsDistinct(t *testing.T) {
	b := batch(t, col{types.TInt4, []types.Value{int64(1), int64(1), nil, nil}}, col{types.TInt4, []types.Value{int64(1), int64(2), int64(1), nil}})
	eq := mustBinary(t, "=", ref(0, types.TInt4), ref(1, types.TInt4)).(*Call)
	expectValues(t, &IsDistinct{L: ref(0, types.TInt4), R: ref(1, types.TInt4), Eq: eq.Fn}, b, false, true, true, false)
	expectValues(t, eq, b, true, false, nil, nil)
}

func TestIntervalComparison(t *testing.T) {
	iv := func(s string) Expr { return typed(t, s, types.TInterval) }
	runSQL(t, []sqlCase{
		{"month is 30 days", op("=", iv("1 month"), iv("30 days")), "t"},
		{"day vs hours", op(">", iv("1 day"), iv("23 hours")), "t"},
		{"negative", op("<", iv("-1 day"), iv("1 second")), "t"},
	})
}
