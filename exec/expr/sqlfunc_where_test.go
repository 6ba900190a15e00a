package expr

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/pgerr"
)

// TestSQLFunctionContext: the built-ins that are SQL functions in
// PostgreSQL 15's catalog give its CONTEXT line with their errors; the
// others give none.
func TestSQLFunctionContext(t *testing.T) {
	one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	for _, c := range []struct {
		e     Expr
		where string
	}{
		{call(t, "log", num("-12.34")), `SQL function "log" statement 1`},
		{call(t, "log10", num("0")), `SQL function "log10" statement 1`},
		{call(t, "ln", num("-1")), ""},
		{call(t, "substring", lit("abcdefg"), lit(`a*#"%#"g*#"x`), lit("#")), `SQL function "substring" statement 1`},
		{call(t, "substring", lit("abc"), lit("a"), lit("##")), `SQL function "substring" statement 1`},
	} {
		_, err := c.e.Eval(testCtx(), one)
		e := pgerr.As(err)
		if e == nil {
			t.Errorf("%s: no error (%v)", c.e, err)
		} else if e.Where != c.where {
			t.Errorf("%s: %v, CONTEXT %q; want CONTEXT %q", c.e, err, e.Where, c.where)
		}
	}
}
