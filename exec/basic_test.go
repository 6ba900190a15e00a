package exec

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

func TestValues(t *testing.T) {
	v := &Values{Cols: cols(types.TInt8, types.TText), Rows: [][]expr.Expr{
		{konst(types.TInt8, 1), konst(types.TText, "a")},
		{konst(types.TInt8, nil), konst(types.TText, "b")},
		{konst(types.TInt8, 3), konst(types.TText, nil)},
		{konst(types.TInt8, 4), konst(types.TText, "d")},
	}}
	wantRows(t, run(t, v), [][]any{{int64(1), "a"}, {nil, "b"}, {int64(3), nil}, {int64(4), "d"}})
	// SELECT without FROM: one row, no columns.
	one := &Values{Rows: [][]expr.Expr{{}}}
	if got := run(t, one); len(got) != 1 || len(got[0]) != 0 {
		t.Fatalf("empty SELECT: %v", got)
	}
}

func TestFilterProject(t *testing.T) {
	s := src(cols(types.TInt8, types.TInt8), 2,
		[]any{1, 2, 3, nil, 5, 6, 7},
		[]any{1, 5, 3, 4, nil, 1, 7})
	f := &Filter{Input: s, Cond: cmpCols(0, 1, "=")}
	wantRows(t, run(t, f), [][]any{{int64(1), int64(1)}, {int64(3), int64(3)}, {int64(7), int64(7)}})
	p := &Project{Input: f, Exprs: []expr.Expr{col(1, types.TInt8), konst(types.TText, "x")}, Cols: cols(types.TInt8, types.TText)}
	wantRows(t, run(t, p), [][]any{{int64(1), "x"}, {int64(3), "x"}, {int64(7), "x"}})
	none := &Filter{Input: s, Cond: konst(types.TBool, nil)}
	wantRows(t, run(t, none), nil)
	if !strings.Contains(Explain(p), "\n  Filter: c0 = c1\n    Source\n") {
		t.Fatalf("explain:\n%s", Explain(p))
	}
}

func TestLimit(t *testing.T) {
	s := src(cols(types.TInt4), 3, []any{1, 2, 3, 4, 5, 6, 7, 8})
	cases := []struct {
		lim, off any
		want     []any
	}{
		{int64(3), nil, []any{1, 2, 3}},
		{int64(2), int64(3), []any{4, 5}},
		{nil, int64(6), []any{7, 8}},
		{int64(0), nil, nil},
		{int64(100), int64(7), []any{8}},
		{int64(1), int64(10), nil},
	}
	for _, c := range cases {
		l := &Limit{Input: s}
		if c.lim != nil {
			l.Limit = konst(types.TInt8, c.lim)
		}
		if c.off != nil {
			l.Offset = konst(types.TInt8, c.off)
		}
		var want [][]any
		for _, v := range c.want {
			want = append(want, []any{int64(v.(int))})
		}
		wantRows(t, run(t, l), want)
	}
	// NULL means no limit.
	wantRows(t, run(t, &Limit{Input: s, Limit: konst(types.TInt8, nil), Offset: konst(types.TInt8, int64(7))}), [][]any{{int64(8)}})
	_, err := runErr(&Limit{Input: s, Limit: konst(types.TInt8, int64(-1))})
	if e := pgerr.As(err); e == nil || e.Code != pgerr.InvalidRowCountInLimit || e.Message != "LIMIT must not be negative" {
		t.Fatalf("negative limit: %v", err)
	}
	_, err = runErr(&Limit{Input: s, Offset: konst(types.TInt8, int64(-1))})
	if e := pgerr.As(err); e == nil || e.Code != pgerr.InvalidRowCountInOffset || e.Message != "OFFSET must not be negative" {
		t.Fatalf("negative offset: %v", err)
	}
}

func TestAppendFuncScan(t *testing.T) {
	a := src(cols(types.TInt8), 2, []any{1, 2, 3})
	b := src(cols(types.TInt8), 2, []any{})
	fs := &FuncScan{Name: "f", Cols: cols(types.TInt8), Produce: func(*Context) ([]arrow.RecordBatch, error) {
		return []arrow.RecordBatch{newBatch(cols(types.TInt8), []arrow.Array{arr(types.TInt8, 9, nil)}, 2)}, nil
	}}
	ap := &Append{Inputs: []Node{a, b, fs}, Cols: cols(types.TInt8)}
	wantRows(t, run(t, ap), [][]any{{int64(1)}, {int64(2)}, {int64(3)}, {int64(9)}, {nil}})
}

func TestSort(t *testing.T) {
	s := src(cols(types.TInt4, types.TText, types.TFloat8), 2,
		[]any{3, 1, nil, 2, 1, 3, nil},
		[]any{"a", "b", "c", "d", "a", nil, "e"},
		[]any{1.5, 2.0, 3.0, -1.0, 0.0, 5.0, 6.0})
	// ORDER BY c0 (NULLS LAST), c1 DESC (NULLS FIRST): as PostgreSQL orders them.
	srt := &Sort{Input: s, Keys: []SortKey{{E: col(0, types.TInt4)}, {E: col(1, types.TText), Desc: true, NullsFirst: true}}}
	wantRows(t, run(t, srt), [][]any{
		{int64(1), "b", 2.0}, {int64(1), "a", 0.0}, {int64(2), "d", -1.0},
		{int64(3), nil, 5.0}, {int64(3), "a", 1.5}, {nil, "e", 6.0}, {nil, "c", 3.0},
	})
	// Stable: equal keys keep input order; DESC NULLS FIRST on the int fast path's sibling.
	srt2 := &Sort{Input: s, Keys: []SortKey{{E: col(0, types.TInt4), Desc: true, NullsFirst: true}}}
	wantRows(t, run(t, srt2), [][]any{
		{nil, "c", 3.0}, {nil, "e", 6.0}, {int64(3), "a", 1.5}, {int64(3), nil, 5.0},
		{int64(2), "d", -1.0}, {int64(1), "b", 2.0}, {int64(1), "a", 0.0},
	})
	// Single int key without NULLs (fast path), descending, stable.
	s3 := src(cols(types.TInt8, types.TInt8), 3, []any{5, -9223372036854775808, 5, 9223372036854775807, 0}, []any{1, 2, 3, 4, 5})
	wantRows(t, run(t, &Sort{Input: s3, Keys: []SortKey{{E: col(0, types.TInt8), Desc: true}}}), [][]any{
		{int64(9223372036854775807), int64(4)}, {int64(5), int64(1)}, {int64(5), int64(3)}, {int64(0), int64(5)}, {int64(-9223372036854775808), int64(2)},
	})
	wantRows(t, run(t, &Sort{Input: src(cols(types.TInt8), 3), Keys: []SortKey{{E: col(0, types.TInt8)}}}), nil)
}

func TestSortTypes(t *testing.T) {
	// NaN sorts above every float; numeric compares by value; bpchar
	// ignores trailing spaces; intervals compare by total span.
	f := src(cols(types.TFloat8), 10, []any{2.0, nan(), -1.0, 0.0})
	got := run(t, &Sort{Input: f, Keys: []SortKey{{E: col(0, types.TFloat8)}}})
	if got[0][0] != -1.0 || got[1][0] != 0.0 || got[2][0] != 2.0 || got[3][0].(float64) == got[3][0].(float64) {
		t.Fatalf("float order %v", got)
	}
	n := src(cols(types.TNumeric), 10, []any{"10.5", "9.75", "-1", "NaN", "10.50"})
	wantRows(t, run(t, &Sort{Input: n, Keys: []SortKey{{E: col(0, types.TNumeric)}}}), [][]any{{"-1"}, {"9.75"}, {"10.5"}, {"10.50"}, {"NaN"}})
	iv := func(m, d int32, us int64) arrow.MonthDayNanoInterval {
		return types.IntervalToArrow(types.IntervalValue{Months: m, Days: d, Micros: us})
	}
	in := src(cols(types.TInterval), 10, []any{iv(1, 0, 0), iv(0, 29, 86400e6+1), iv(0, 31, 0), iv(0, 1, 0)})
	wantRows(t, run(t, &Sort{Input: in, Keys: []SortKey{{E: col(0, types.TInterval)}}}), [][]any{{iv(0, 1, 0)}, {iv(1, 0, 0)}, {iv(0, 29, 86400e6+1)}, {iv(0, 31, 0)}})
}

func TestScanRead(t *testing.T) {
	tcols := cols(types.TInt8, types.TText)
	rec := newBatch(tcols, []arrow.Array{arr(types.TInt8, 1, 2, 3, 4, 5), arr(types.TText, "a", "b", "c", "d", "e")}, 5)
	del := []byte{0b00001010} // rows 1 and 3 deleted
	sc := &Scan{Name: "t", Cols: []types.Column{tcols[1], tcols[0]}, Proj: []int{1, 0}, WithRowID: true}
	it := &scanIter{ctx: &Context{BatchSize: 2}, s: sc, size: 2, schema: types.ArrowSchema(sc.Columns()),
		chunks: []storage.Chunk{{Rec: rec, FirstRowID: 100, Deleted: del}, {Rec: rec, FirstRowID: 200}}}
	bs, err := Drain(it)
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, rows(bs), [][]any{
		{"a", int64(1), int64(100)}, {"c", int64(3), int64(102)}, {"e", int64(5), int64(104)},
		{"a", int64(1), int64(200)}, {"b", int64(2), int64(201)}, {"c", int64(3), int64(202)}, {"d", int64(4), int64(203)}, {"e", int64(5), int64(204)},
	})
	for _, b := range bs {
		if b.NumRows() > 2 {
			t.Fatalf("batch of %d rows, size 2", b.NumRows())
		}
	}
	// Pushed-down filter over the projected columns.
	sc2 := &Scan{Name: "t", Cols: tcols, Proj: []int{0, 1}, Filter: &fnExpr{t: types.TBool, f: func(r []any) any { return r[0].(int64)%2 == 1 }}}
	it2 := &scanIter{ctx: &Context{}, s: sc2, size: 4096, schema: types.ArrowSchema(sc2.Columns()), chunks: []storage.Chunk{{Rec: rec, Deleted: del}}}
	bs, err = Drain(it2)
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, rows(bs), [][]any{{int64(1), "a"}, {int64(3), "c"}, {int64(5), "e"}})
	if got := run(t, &Scan{Name: "t", Cols: tcols, Proj: []int{0, 1}}); len(got) != 0 {
		t.Fatalf("nil table: %v", got)
	}
}

func TestCancel(t *testing.T) {
	c, cancel := context.WithCancel(context.Background())
	cancel()
	s := src(cols(types.TInt8), 2, []any{1, 2, 3})
	it, err := (&Filter{Input: s, Cond: konst(types.TBool, true)}).Open(&Context{Eval: &expr.Context{Ctx: c}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := it.Next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

var _ = array.NewInt64Builder

// An untyped NULL evaluated as text storage becomes NULL of the column type.
func TestValuesNullOfOtherType(t *testing.T) {
	v := &Values{Cols: cols(types.TInt4), Rows: [][]expr.Expr{{konst(types.TInt4, 1)}, {konst(types.TUnknown, nil)}}}
	wantRows(t, run(t, v), [][]any{{int64(1)}, {nil}})
}
