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

// paramValue accepts a parameter given as text (as the wire sends untyped
// parameters) for a typed slot.
func paramValue(v types.Value, t types.T) (types.Value, error) {
	s, ok := v.(string)
	if !ok || t.IsString() || t.Kind == types.JSON || t.Kind == types.JSONB || t.Kind == types.Numeric {
		if ok && t.Kind == types.Numeric {
			return parseText(s, t)
		}
		return v, nil
	}
	return parseText(s, t)
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
