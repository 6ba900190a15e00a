package expr

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Enums (types/enum.go) in expressions: comparisons of two values of one
// enum (an untyped literal on one side is read as a label of it) compare
// their float64 sort positions, so the float kernels serve; the functions
// enum_first, enum_last and enum_range read the enum's labels from their
// argument's type (the argument's value matters only to enum_range's
// bounds), as PostgreSQL's anyenum functions do.

// userTypeBinary binds a comparison whose side is an enum; nil, nil when
// neither is.
func userTypeBinary(op string, l, r Expr) (Expr, error) {
	if !isCmpOp(op) {
		return nil, nil
	}
	lt, rt := l.Type(), r.Type()
	t := lt
	if lt.Kind == types.Unknown {
		t = rt
	}
	switch {
	case t.Kind == types.Enum:
	case t.Kind == types.Record && (lt.Kind == types.Unknown || rt.Kind == types.Unknown):
		// PostgreSQL reads the literal as an anonymous record, which has
		// no input function.
		return nil, pgerr.New(pgerr.FeatureNotSupported, "input of anonymous composite types is not implemented")
	default:
		if lt.Kind == types.Enum || rt.Kind == types.Enum {
			return nil, noOperator(op, []types.T{lt, rt})
		}
		return nil, nil
	}
	for _, x := range []types.T{lt, rt} {
		if x.Kind != types.Unknown && !x.SameKind(t) {
			return nil, noOperator(op, []types.T{lt, rt})
		}
	}
	args, err := coerceAll([]Expr{l, r}, t)
	if err != nil {
		return nil, err
	}
	f := &Func{Name: op, Args: []types.T{t, t}, Return: types.TBool, Strict: true, Kernel: floatCompare[float64](op)}
	return &Call{Fn: f, Args: args}, nil
}

func init() {
	registerBuilder("enum_first", func(args []Expr) (Expr, error) { return enumFunc("enum_first", args, 1) })
	registerBuilder("enum_last", func(args []Expr) (Expr, error) { return enumFunc("enum_last", args, 1) })
	registerBuilder("enum_range", func(args []Expr) (Expr, error) {
		if len(args) == 2 {
			return enumFunc("enum_range", args, 2)
		}
		return enumFunc("enum_range", args, 1)
	})
}

// enumFunc binds enum_first(e), enum_last(e), enum_range(e) and
// enum_range(lo, hi).
func enumFunc(name string, args []Expr, nargs int) (Expr, error) {
	if len(args) != nargs {
		return nil, noFunction(name, typesOf(args))
	}
	t := args[0].Type()
	if t.Kind != types.Enum && nargs == 2 {
		t = args[1].Type()
	}
	if t.Kind != types.Enum || t.Enum == nil {
		return nil, noFunction(name, typesOf(args))
	}
	args, err := coerceAll(args, t)
	if err != nil {
		return nil, err
	}
	ret := t
	if name == "enum_range" {
		ret = types.ArrayOf(t)
	}
	argTs := make([]types.T, nargs)
	for i := range argTs {
		argTs[i] = t
	}
	e := t.Enum
	kernel := func(ctx *Context, in []arrow.Array, n int) (arrow.Array, error) {
		l := e.Labels()
		out := make([]types.Value, n)
		for i := range out {
			switch {
			case len(l.Sorts) == 0:
			case name == "enum_first":
				out[i] = l.Sorts[0]
			case name == "enum_last":
				out[i] = l.Sorts[len(l.Sorts)-1]
			default:
				var lo, hi types.Value
				if nargs == 2 {
					lo, hi = valueAt(in[0], i, t), valueAt(in[1], i, t)
				}
				r := make([]types.Value, 0, len(l.Sorts))
				for _, s := range l.Sorts {
					if (lo == nil || s >= lo.(float64)) && (hi == nil || s <= hi.(float64)) {
						r = append(r, s)
					}
				}
				out[i] = r
			}
		}
		return buildValues(ctx.Allocator(), out, ret)
	}
	return &Call{Fn: &Func{Name: name, Args: argTs, Return: ret, Kernel: kernel, nullSafe: true}, Args: args}, nil
}
