package expr

import (
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestSimpleCase: a CASE whose WHENs compare one expression with
// constants picks the first equal WHEN per row (duplicates and NULL
// constants included), NULL subjects go to ELSE, and a branch is still
// only evaluated on its rows.
func TestSimpleCase(t *testing.T) {
	b := batch(t,
		col{types.TText, []types.Value{"Apple", "google", nil, "x", "APPLE"}},
		col{types.TInt4, []types.Value{int64(0), int64(2), int64(5), nil, int64(0)}})
	c, x := ref(0, types.TText), ref(1, types.TInt4)
	low := func() Expr { return call(t, "lower", c) }
	eq := func(l, r Expr) Expr { return mustBinary(t, "=", l, r) }
	cs, err := NewCase([]When{
		{Cond: eq(low(), lit("apple")), Result: lit("0")},
		{Cond: eq(&Const{V: "google", T: types.TText}, low()), Result: lit("1")},
		{Cond: eq(low(), lit("apple")), Result: lit("dup")},
		{Cond: eq(low(), &Const{T: types.TText}), Result: lit("null")},
	}, c)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := cs.simpleSubject(); s == nil {
		t.Fatal("not taken as a simple CASE")
	}
	expectValues(t, cs, b, "0", "1", nil, "x", "0")
	// integers, and 100 / x only on the rows that reach ELSE
	ci, err := NewCase([]When{
		{Cond: eq(x, i4(0)), Result: i4(-1)},
		{Cond: eq(i4(2), x), Result: i4(-2)},
	}, mustBinary(t, "/", i4(100), x))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := ci.simpleSubject(); s == nil {
		t.Fatal("integer CASE not taken as simple")
	}
	expectValues(t, ci, b, int64(-1), int64(-2), int64(20), nil, int64(-1))
	// different subjects, or a volatile one: the searched evaluation
	mixed, _ := NewCase([]When{{Cond: eq(low(), lit("apple")), Result: i4(1)}, {Cond: eq(c, lit("x")), Result: i4(2)}}, nil)
	if s, _ := mixed.simpleSubject(); s != nil {
		t.Fatal("two subjects taken as one")
	}
	expectValues(t, mixed, b, int64(1), nil, nil, int64(2), int64(1))
	if stableScalar(call(t, "random")) || !stableScalar(low()) {
		t.Fatal("random() is volatile, lower() is not")
	}
}
