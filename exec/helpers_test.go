package exec

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Test fixtures: a source node over in-memory batches, array builders from
// Go values (nil is NULL), and expressions evaluated by Go functions.

var mem = memory.DefaultAllocator

type srcNode struct {
	cols    []types.Column
	batches []arrow.RecordBatch
	opened  *int
}

func (s *srcNode) Columns() []types.Column { return s.cols }
func (s *srcNode) Children() []Node        { return nil }
func (s *srcNode) Explain() string         { return "Source" }
func (s *srcNode) Open(*Context) (Iterator, error) {
	if s.opened != nil {
		*s.opened++
	}
	return &sliceIter{bs: append([]arrow.RecordBatch(nil), s.batches...)}, nil
}

// src builds a source whose rows are split into batches of at most per rows.
func src(cols []types.Column, per int, colVals ...[]any) *srcNode {
	n := 0
	if len(colVals) > 0 {
		n = len(colVals[0])
	}
	s := &srcNode{cols: cols}
	for start := 0; start < n; start += per {
		end := min(start+per, n)
		arrs := make([]arrow.Array, len(cols))
		for c, col := range cols {
			arrs[c] = arr(col.Type, colVals[c][start:end]...)
		}
		s.batches = append(s.batches, newBatch(cols, arrs, end-start))
	}
	return s
}

// arr builds an array of t from Go values: int, int64, float64, string,
// bool, []any (arrays), arrow.MonthDayNanoInterval; nil is NULL.
func arr(t types.T, vals ...any) arrow.Array {
	b := types.NewBuilder(mem, t)
	for _, v := range vals {
		appendGo(b, v)
	}
	return b.NewArray()
}

func appendGo(b array.Builder, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch x := b.(type) {
	case *array.Int64Builder:
		x.Append(toI64(v))
	case *array.Int32Builder:
		x.Append(int32(toI64(v)))
	case *array.Int16Builder:
		x.Append(int16(toI64(v)))
	case *array.Float64Builder:
		x.Append(toF64(v))
	case *array.Float32Builder:
		x.Append(float32(toF64(v)))
	case *array.StringBuilder:
		x.Append(v.(string))
	case *array.BinaryBuilder:
		x.Append([]byte(v.(string)))
	case *array.BooleanBuilder:
		x.Append(v.(bool))
	case *array.Date32Builder:
		x.Append(arrow.Date32(toI64(v)))
	case *array.TimestampBuilder:
		x.Append(arrow.Timestamp(toI64(v)))
	case *array.MonthDayNanoIntervalBuilder:
		x.Append(v.(arrow.MonthDayNanoInterval))
	case *array.ListBuilder:
		x.Append(true)
		for _, e := range v.([]any) {
			appendGo(x.ValueBuilder(), e)
		}
	default:
		panic(fmt.Sprintf("appendGo: %T", b))
	}
}

func toI64(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int64:
		return x
	}
	panic(fmt.Sprintf("toI64 %T", v))
}

func toF64(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	panic(fmt.Sprintf("toF64 %T", v))
}

// goVal reads row i of a as a comparable Go value: int64, float64, string,
// bool, []any, arrow.MonthDayNanoInterval or nil.
func goVal(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch x := a.(type) {
	case *array.Int64:
		return x.Value(i)
	case *array.Int32:
		return int64(x.Value(i))
	case *array.Int16:
		return int64(x.Value(i))
	case *array.Float64:
		return x.Value(i)
	case *array.Float32:
		return float64(x.Value(i))
	case *array.String:
		return x.Value(i)
	case *array.Binary:
		return string(x.Value(i))
	case *array.Boolean:
		return x.Value(i)
	case *array.Date32:
		return int64(x.Value(i))
	case *array.Timestamp:
		return int64(x.Value(i))
	case *array.MonthDayNanoInterval:
		return x.Value(i)
	case *array.List:
		s, e := x.ValueOffsets(i)
		out := []any{}
		for j := s; j < e; j++ {
			out = append(out, goVal(x.ListValues(), int(j)))
		}
		return out
	}
	panic(fmt.Sprintf("goVal %T", a))
}

// rows converts batches to rows of Go values.
func rows(bs []arrow.RecordBatch) [][]any {
	var out [][]any
	for _, b := range bs {
		for i := 0; i < int(b.NumRows()); i++ {
			r := make([]any, b.NumCols())
			for c := range r {
				r[c] = goVal(b.Column(c), i)
			}
			out = append(out, r)
		}
	}
	return out
}

// run opens n and returns its rows.
func run(t *testing.T, n Node) [][]any {
	t.Helper()
	r, err := runErr(n)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return r
}

func runErr(n Node) ([][]any, error) {
	ctx := &Context{Eval: &expr.Context{Ctx: context.Background()}, BatchSize: 3}
	it, err := n.Open(ctx)
	if err != nil {
		return nil, err
	}
	bs, err := Drain(it)
	if err != nil {
		return nil, err
	}
	for _, b := range bs {
		if b.NumRows() == 0 {
			return nil, fmt.Errorf("empty batch returned")
		}
		if !b.Schema().Equal(types.ArrowSchema(n.Columns())) {
			return nil, fmt.Errorf("batch schema %s, want %s", b.Schema(), types.ArrowSchema(n.Columns()))
		}
	}
	return rows(bs), nil
}

func rowKey(r []any) string { return fmt.Sprintf("%v", r) }

// sortRows orders rows by their printed form (for order-insensitive checks).
func sortRows(rs [][]any) [][]any {
	out := append([][]any(nil), rs...)
	sort.SliceStable(out, func(i, j int) bool { return rowKey(out[i]) < rowKey(out[j]) })
	return out
}

func wantRows(t *testing.T, got, want [][]any) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}

func wantSameRows(t *testing.T, got, want [][]any) {
	t.Helper()
	wantRows(t, sortRows(got), sortRows(want))
}

func col(i int, t types.T) *expr.ColRef {
	return &expr.ColRef{Idx: i, T: t, Name: fmt.Sprintf("c%d", i)}
}

func cols(ts ...types.T) []types.Column {
	out := make([]types.Column, len(ts))
	for i, t := range ts {
		out[i] = types.Column{Name: fmt.Sprintf("c%d", i), Type: t}
	}
	return out
}

// fnExpr is a test expression computed row by row from Go values.
type fnExpr struct {
	t    types.T
	name string
	f    func(row []any) any
}

func (e *fnExpr) Type() types.T  { return e.t }
func (e *fnExpr) String() string { return e.name }
func (e *fnExpr) Eval(_ *expr.Context, b arrow.RecordBatch) (arrow.Array, error) {
	bld := types.NewBuilder(mem, e.t)
	for i := 0; i < int(b.NumRows()); i++ {
		r := make([]any, b.NumCols())
		for c := range r {
			r[c] = goVal(b.Column(c), i)
		}
		appendGo(bld, e.f(r))
	}
	return bld.NewArray(), nil
}

func konst(t types.T, v any) *fnExpr {
	return &fnExpr{t: t, name: fmt.Sprint(v), f: func([]any) any { return v }}
}

// cmpInts is "col a OP col b" over int64 columns (NULL if either is NULL).
func cmpCols(a, b int, op string) *fnExpr {
	return &fnExpr{t: types.TBool, name: fmt.Sprintf("c%d %s c%d", a, op, b), f: func(r []any) any {
		if r[a] == nil || r[b] == nil {
			return nil
		}
		x, y := r[a].(int64), r[b].(int64)
		switch op {
		case "=":
			return x == y
		case "<":
			return x < y
		case ">":
			return x > y
		}
		return x != y
	}}
}

func approx(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

var _ = strings.Join

func nan() float64 { return math.NaN() }

func negZero() float64 { return math.Copysign(0, -1) }

func signbit(f float64) bool { return math.Signbit(f) }

func sliceArr(a arrow.Array, i, j int) arrow.Array { return array.NewSlice(a, int64(i), int64(j)) }
