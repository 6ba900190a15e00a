package expr

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// Helpers for tests written as small SQL-like expressions whose expected
// text output was taken from PostgreSQL 15 (psql -At).

func typed(t *testing.T, s string, ty types.T) Expr {
	t.Helper()
	e, err := NewCast(lit(s), ty, true)
	if err != nil {
		t.Fatalf("%q::%s: %v", s, ty, err)
	}
	return e
}

func call(t *testing.T, name string, args ...Expr) Expr {
	t.Helper()
	e, err := NewCall(name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return e
}

// text evaluates e on a one-row batch and renders it as PostgreSQL text.
func text(t *testing.T, e Expr) string {
	t.Helper()
	one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	a, err := e.Eval(testCtx(), one)
	if err != nil {
		t.Fatalf("%s: %v", e, err)
	}
	v := valueAt(a, 0, e.Type())
	if v == nil {
		return "NULL"
	}
	return types.FormatText(v, e.Type(), &types.DefaultFormat)
}

type sqlCase struct {
	name string
	e    func(t *testing.T) Expr
	want string
}

func runSQL(t *testing.T, cases []sqlCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := text(t, c.e(t)); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}
