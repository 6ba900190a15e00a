package expr

import (
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

func TestCaseIsLazy(t *testing.T) {
	// CASE WHEN x = 0 THEN 0 ELSE 100 / x END never divides by zero.
	b := batch(t, col{types.TInt4, []types.Value{int64(0), int64(5), nil, int64(-3)}})
	x := ref(0, types.TInt4)
	c, err := NewCase([]When{{Cond: mustBinary(t, "=", x, i4(0)), Result: i4(0)}}, mustBinary(t, "/", i4(100), x))
	if err != nil {
		t.Fatal(err)
	}
	expectValues(t, c, b, int64(0), int64(20), nil, int64(-33))
	// without ELSE unmatched rows are NULL
	c2, _ := NewCase([]When{{Cond: mustBinary(t, ">", x, i4(1)), Result: lit("big")}}, nil)
	if !c2.Type().Equal(types.TText) {
		t.Fatalf("CASE type %s", c2.Type())
	}
	expectValues(t, c2, b, nil, "big", nil, nil)
	_, err = NewCase([]When{{Cond: mustBinary(t, ">", x, i4(1)), Result: i4(1)}}, &ColRef{T: types.TText})
	// the ELSE first, as PostgreSQL 15 reports it
	expectErr(t, err, pgerr.DatatypeMismatch, "CASE types text and integer cannot be matched")
}

func TestCoalesceIsLazy(t *testing.T) {
	b := batch(t, col{types.TInt4, []types.Value{int64(1), nil, nil}}, col{types.TInt4, []types.Value{int64(0), int64(0), int64(4)}})
	x, y := ref(0, types.TInt4), ref(1, types.TInt4)
	// COALESCE(x, 8 / y - 2 / y ... ) only evaluates 8 / y on rows where x is NULL.
	c, err := NewCoalesce([]Expr{x, mustBinary(t, "/", i4(8), mustBinary(t, "+", y, &Const{V: int64(1), T: types.TInt8})), i4(7)})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Type().Equal(types.TInt8) {
		t.Fatalf("COALESCE type %s", c.Type())
	}
	expectValues(t, c, b, int64(1), int64(8), int64(1))
	c2, _ := NewCoalesce([]Expr{x, mustBinary(t, "/", i4(8), y)})
	_, err = evalValues(t, c2, b)
	expectErr(t, err, pgerr.DivisionByZero, "division by zero")
}

func TestNullIfAndInList(t *testing.T) {
	b := batch(t, col{types.TInt4, []types.Value{int64(1), int64(2), nil, int64(3)}})
	x := ref(0, types.TInt4)
	ni, err := NewNullIf(x, i4(2))
	if err != nil {
		t.Fatal(err)
	}
	expectValues(t, ni, b, int64(1), nil, nil, int64(3))
	in, err := NewInList(x, []Expr{i4(1), lit("3")}, false)
	if err != nil {
		t.Fatal(err)
	}
	expectValues(t, in, b, true, false, nil, true)
	notIn, _ := NewInList(x, []Expr{i4(1), &Const{T: types.TInt4}}, true)
	expectValues(t, notIn, b, false, nil, nil, nil)
	// non-constant list
	in2, _ := NewInList(x, []Expr{mustBinary(t, "+", x, i4(0)), i4(9)}, false)
	expectValues(t, in2, b, true, true, nil, true)
	_, err = NewInList(x, []Expr{lit("a")}, false)
	expectErr(t, err, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "a"`)
}

func TestLike(t *testing.T) {
	b := batch(t, col{types.TText, []types.Value{"abc", "ABC", "a_c", "a%", nil, "x\ny"}})
	s := ref(0, types.TText)
	cases := []struct {
		pat       string
		esc       Expr
		ci, regex bool
		want      []types.Value
	}{
		{"a%", nil, false, false, []types.Value{true, false, true, true, nil, false}},
		{"a%", nil, true, false, []types.Value{true, true, true, true, nil, false}},
		{`a\_c`, nil, false, false, []types.Value{false, false, true, false, nil, false}},
		{"a#%", lit("#"), false, false, []types.Value{false, false, false, true, nil, false}},
		{"_", nil, false, false, []types.Value{false, false, false, false, nil, false}},
		{"x_y", nil, false, false, []types.Value{false, false, false, false, nil, true}},
		{"abc", nil, false, false, []types.Value{true, false, false, false, nil, false}},
		{"%c", nil, false, false, []types.Value{true, false, true, false, nil, false}},
		{"%_%", nil, false, false, []types.Value{true, true, true, true, nil, true}},
		{"%b%", nil, false, false, []types.Value{true, false, false, false, nil, false}},
		{"%", nil, false, false, []types.Value{true, true, true, true, nil, true}},
		{"^a.c$", nil, false, true, []types.Value{true, false, true, false, nil, false}},
		{"b", nil, true, true, []types.Value{true, true, false, false, nil, false}},
	}
	for _, c := range cases {
		e, err := NewLike(s, lit(c.pat), c.esc, c.ci, false, c.regex)
		if err != nil {
			t.Fatal(err)
		}
		expectValues(t, e, b, c.want...)
	}
	e, _ := NewLike(s, lit(`a\`), nil, false, false, false)
	_, err := evalValues(t, e, b)
	expectErr(t, err, pgerr.InvalidEscapeSequence, "LIKE pattern must not end with escape character")
	e, _ = NewLike(s, lit(`(`), nil, false, false, true)
	_, err = evalValues(t, e, b)
	expectErr(t, err, pgerr.InvalidRegularExpression, "invalid regular expression: parentheses () not balanced")
}

// fakePlan returns fixed rows, or the outer row's value plus each row for
// correlated use.
type fakePlan struct {
	t        types.T
	rows     []types.Value
	runs     atomic.Int32
	addOuter bool
}

func (p *fakePlan) Run(ctx *Context, limit int) ([]arrow.Array, error) {
	p.runs.Add(1)
	rows := p.rows
	if p.addOuter {
		o := ctx.Outer[len(ctx.Outer)-1]
		v := valueAt(o.Batch.Column(0), o.Row, types.TInt4)
		rows = nil
		for _, r := range p.rows {
			if v == nil {
				rows = append(rows, nil)
			} else {
				rows = append(rows, r.(int64)+v.(int64))
			}
		}
	}
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	a, err := buildValues(ctx.Allocator(), rows, p.t)
	return []arrow.Array{a}, err
}

func (p *fakePlan) Explain() string { return "fake" }

func TestSubqueries(t *testing.T) {
	b := batch(t, col{types.TInt4, []types.Value{int64(1), int64(2), nil}})
	x := ref(0, types.TInt4)
	one := &fakePlan{t: types.TInt4, rows: []types.Value{int64(7)}}
	ctx := testCtx()
	s := &Subquery{Kind: ScalarSubquery, Plan: one, T: types.TInt4}
	for i := 0; i < 2; i++ {
		a, err := s.Eval(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if got := rowsOf(a, types.TInt4); got[0] != int64(7) || got[2] != int64(7) {
			t.Fatalf("scalar: %v", got)
		}
	}
	if n := one.runs.Load(); n != 1 {
		t.Fatalf("uncorrelated subquery ran %d times", n)
	}
	two := &fakePlan{t: types.TInt4, rows: []types.Value{int64(1), int64(2)}}
	_, err := evalValues(t, &Subquery{Kind: ScalarSubquery, Plan: two, T: types.TInt4}, b)
	expectErr(t, err, pgerr.CardinalityViolation, "more than one row returned by a subquery used as an expression")
	expectValues(t, &Subquery{Kind: ExistsSubquery, Plan: two, T: types.TBool}, b, true, true, true)
	expectValues(t, &Subquery{Kind: ExistsSubquery, Plan: &fakePlan{t: types.TInt4}, T: types.TBool}, b, false, false, false)

	withNull := &fakePlan{t: types.TInt4, rows: []types.Value{int64(1), nil}}
	in, err := NewQuantified(AnySubquery, x, "=", types.TInt4, withNull, false)
	if err != nil {
		t.Fatal(err)
	}
	expectValues(t, in, b, true, nil, nil)
	all, _ := NewQuantified(AllSubquery, x, "<", types.TInt4, two, false)
	expectValues(t, all, b, false, false, nil)
	allEmpty, _ := NewQuantified(AllSubquery, x, "<", types.TInt4, &fakePlan{t: types.TInt4}, false)
	expectValues(t, allEmpty, b, true, true, true)

	// correlated: (SELECT outer.x + 10)
	corr := &Subquery{Kind: ScalarSubquery, Plan: &fakePlan{t: types.TInt4, rows: []types.Value{int64(10)}, addOuter: true}, Correlated: true, T: types.TInt4}
	expectValues(t, corr, b, int64(11), int64(12), nil)
	arr := &Subquery{Kind: ArraySubquery, Plan: two, T: types.ArrayOf(types.TInt4)}
	expectValues(t, arr, b, []types.Value{int64(1), int64(2)}, []types.Value{int64(1), int64(2)}, []types.Value{int64(1), int64(2)})
}

func TestArrayAndSubscript(t *testing.T) {
	b := batch(t, col{types.TInt4, []types.Value{int64(1), nil}})
	x := ref(0, types.TInt4)
	a, err := NewArrayExpr([]Expr{x, i4(5), &Const{V: int64(9), T: types.TInt8}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Type().String() != "bigint[]" {
		t.Fatalf("type %s", a.Type())
	}
	expectValues(t, a, b, []types.Value{int64(1), int64(5), int64(9)}, []types.Value{nil, int64(5), int64(9)})
	s, err := NewSubscript(a, i4(2))
	if err != nil {
		t.Fatal(err)
	}
	expectValues(t, s, b, int64(5), int64(5))
	s4, _ := NewSubscript(a, i4(4))
	expectValues(t, s4, b, nil, nil)
	s1, _ := NewSubscript(a, x)
	expectValues(t, s1, b, int64(1), nil)
}
