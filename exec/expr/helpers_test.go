package expr

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// col is a test column: a type and its values (nil = NULL).
type col struct {
	t    types.T
	vals []types.Value
}

func batch(t *testing.T, cols ...col) arrow.RecordBatch {
	t.Helper()
	n := 1
	if len(cols) > 0 {
		n = len(cols[0].vals)
	}
	arrs := make([]arrow.Array, len(cols))
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		a, err := buildValues(memory.DefaultAllocator, c.vals, c.t)
		if err != nil {
			t.Fatal(err)
		}
		arrs[i] = a
		fields[i] = arrow.Field{Name: "c", Type: c.t.ArrowType(), Nullable: true}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(n))
}

func testCtx() *Context {
	return &Context{Ctx: context.Background(), Location: time.UTC, Now: time.Date(2024, 3, 5, 10, 30, 0, 0, time.UTC)}
}

// evalRowsOf evaluates e over b and returns the rows as Values.
func evalValues(t *testing.T, e Expr, b arrow.RecordBatch) ([]types.Value, error) {
	t.Helper()
	a, err := e.Eval(testCtx(), b)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	if a.Len() != int(b.NumRows()) {
		t.Fatalf("%s: got %d rows, want %d", e, a.Len(), b.NumRows())
	}
	if !arrow.TypeEqual(a.DataType(), e.Type().ArrowType()) {
		t.Fatalf("%s: arrow type %s, want %s", e, a.DataType(), e.Type().ArrowType())
	}
	return rowsOf(a, e.Type()), nil
}

func expectValues(t *testing.T, e Expr, b arrow.RecordBatch, want ...types.Value) {
	t.Helper()
	got, err := evalValues(t, e, b)
	if err != nil {
		t.Fatalf("%s: %v", e, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: got %#v, want %#v", e, got, want)
	}
}

func expectErr(t *testing.T, err error, code pgerr.Code, msg string) {
	t.Helper()
	pe := pgerr.As(err)
	if pe == nil {
		t.Fatalf("got error %v, want %s %q", err, code, msg)
	}
	if pe.Code != code || pe.Message != msg {
		t.Fatalf("got %s %q, want %s %q", pe.Code, pe.Message, code, msg)
	}
}

func mustBinary(t *testing.T, op string, l, r Expr) Expr {
	t.Helper()
	e, err := NewBinary(op, l, r)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return e
}

func i4(v int64) *Const         { return &Const{V: v, T: types.TInt4} }
func lit(s string) *Const       { return &Const{V: s, T: types.TUnknown} }
func ref(i int, t types.T) Expr { return &ColRef{Idx: i, T: t, Name: "c" + string(rune('0'+i))} }
