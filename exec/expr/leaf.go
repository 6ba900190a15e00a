package expr

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Leaves: column references, constants, parameters and outer references.

// Type returns the column's type.
func (e *ColRef) Type() types.T { return e.T }

// Eval returns the column itself (retained for the caller).
func (e *ColRef) Eval(_ *Context, b arrow.RecordBatch) (arrow.Array, error) {
	if e.Idx < 0 || e.Idx >= int(b.NumCols()) {
		return nil, pgerr.Internal("column reference %d out of range (batch has %d columns)", e.Idx, b.NumCols())
	}
	c := b.Column(e.Idx)
	c.Retain()
	return c, nil
}

func (e *ColRef) String() string {
	if e.Name == "" {
		return fmt.Sprintf("$col%d", e.Idx)
	}
	return e.Name
}

// Type returns the constant's type.
func (e *Const) Type() types.T { return e.T }

// Eval repeats the constant for every row of b.
func (e *Const) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	if sz := valueBytes(e.V); sz > 0 {
		if err := checkBuild(ctx, sz*b.NumRows()); err != nil {
			return nil, err
		}
	}
	return constArray(ctx.Allocator(), e.V, e.T, int(b.NumRows()))
}

func (e *Const) String() string { return constString(e.V, e.T) }

// constString renders a constant as PostgreSQL's deparse does: numbers bare
// (negative ones parenthesized), everything else quoted with a cast.
func constString(v types.Value, t types.T) string {
	if v == nil {
		if t.Kind == types.Unknown {
			return "NULL"
		}
		return "NULL::" + t.String()
	}
	switch x := v.(type) {
	case int64:
		if t.Kind == types.Int4 {
			if x < 0 {
				return "'" + strconv.FormatInt(x, 10) + "'::integer"
			}
			return strconv.FormatInt(x, 10)
		}
	case *apd.Decimal:
		if t.Kind == types.Numeric && t.Typmod < 0 && !x.Negative {
			return x.Text('f')
		}
	case bool:
		if t.Kind == types.Bool {
			if x {
				return "true"
			}
			return "false"
		}
	}
	s := formatValue(v, t, nil)
	q := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	if t.Kind == types.Unknown {
		return q
	}
	return q + "::" + t.String()
}

// formatValue renders v as PostgreSQL text output (session options opts).
func formatValue(v types.Value, t types.T, opts *types.FormatOptions) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		if t.IsInteger() || t.Kind == types.Oid {
			return strconv.FormatInt(x, 10)
		}
	case bool:
		if x {
			return "t"
		}
		return "f"
	case *apd.Decimal:
		return x.Text('f')
	}
	if opts == nil {
		opts = &types.DefaultFormat
	}
	return types.FormatText(v, t, opts)
}

// Type returns the parameter's type (unknown until the binder settles it).
func (e *Param) Type() types.T { return e.T }

// Eval repeats the parameter's value for every row.
func (e *Param) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	if e.Idx < 0 || e.Idx >= len(ctx.Params) {
		return nil, pgerr.New(pgerr.UndefinedParameter, "there is no parameter $%d", e.Idx+1)
	}
	v, err := paramValue(ctx.Params[e.Idx], e.T)
	if err != nil {
		return nil, err
	}
	return constArray(ctx.Allocator(), v, e.T, int(b.NumRows()))
}

// paramValue converts a parameter's value to the Go form of t: untyped
// parameters arrive as text, and a driver may send a number for a slot the
// binder typed differently (an integer for a numeric parameter).
func paramValue(v types.Value, t types.T) (types.Value, error) {
	if v == nil {
		return nil, nil
	}
	switch x := v.(type) {
	case string:
		if t.IsString() || t.Kind == types.JSON || t.Kind == types.JSONB {
			return applyTypmod(x, t, false)
		}
		return parseText(x, t)
	case int64:
		switch t.Kind {
		case types.Numeric, types.Float4, types.Float8, types.Int2, types.Int4:
			return castFromInt(x, types.TInt8, t)
		}
	case float64:
		switch t.Kind {
		case types.Numeric, types.Int2, types.Int4, types.Int8, types.Float4:
			return castFromFloat(x, types.TFloat8, t)
		}
	case *apd.Decimal:
		switch t.Kind {
		case types.Int2, types.Int4, types.Int8, types.Float4, types.Float8:
			return castFromNumeric(x, t)
		}
	}
	if t.IsString() {
		if _, ok := v.(string); !ok {
			return formatValue(v, storageType(t.ArrowType()), nil), nil
		}
	}
	return v, nil
}

func (e *Param) String() string { return "$" + strconv.Itoa(e.Idx+1) }

// Type returns the outer column's type.
func (e *OuterRef) Type() types.T { return e.T }

// Eval repeats the current outer row's value for every row of b.
func (e *OuterRef) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	k := len(ctx.Outer) - e.Depth
	if e.Depth < 1 || k < 0 {
		return nil, pgerr.Internal("outer reference at depth %d outside a correlated subquery", e.Depth)
	}
	row := ctx.Outer[k]
	if e.Idx < 0 || e.Idx >= int(row.Batch.NumCols()) {
		return nil, pgerr.Internal("outer column %d out of range", e.Idx)
	}
	v := valueAt(row.Batch.Column(e.Idx), row.Row, e.T)
	return constArray(ctx.Allocator(), v, e.T, int(b.NumRows()))
}

func (e *OuterRef) String() string {
	if e.Name == "" {
		return fmt.Sprintf("$outer%d.%d", e.Depth, e.Idx)
	}
	return e.Name
}
