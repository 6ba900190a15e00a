package expr

import (
	"github.com/streamsql/streamsql/types"
)

// Operators and functions on arrays of any element type (PostgreSQL's
// anyarray operators): comparisons, ||, @>, <@, &&, and array_append,
// array_prepend, array_cat, array_position, array_remove.

func isCmpOp(op string) bool {
	switch op {
	case "=", "<>", "<", "<=", ">", ">=":
		return true
	}
	return false
}

// arrayBinary binds op when an operand is an array; nil, nil when it does
// not apply.
func arrayBinary(op string, l, r Expr) (Expr, error) {
	lt, rt := l.Type(), r.Type()
	la, ra := lt.Kind == types.Array, rt.Kind == types.Array
	if !la && !ra {
		return nil, nil
	}
	switch {
	case isCmpOp(op) || op == "@>" || op == "<@" || op == "&&":
		if !(la || lt.Kind == types.Unknown) || !(ra || rt.Kind == types.Unknown) {
			return nil, nil
		}
		t, err := CommonType([]types.T{lt, rt}, "ARRAY")
		if err != nil {
			return nil, nil
		}
		args, err := coerceAll([]Expr{l, r}, t)
		if err != nil {
			return nil, err
		}
		elem := *t.Elem
		var fn func(a, b []types.Value) bool
		switch op {
		case "@>":
			fn = func(a, b []types.Value) bool { return arrayContains(a, b, elem) }
		case "<@":
			fn = func(a, b []types.Value) bool { return arrayContains(b, a, elem) }
		case "&&":
			fn = func(a, b []types.Value) bool { return arrayOverlaps(a, b, elem) }
		default:
			fn = func(a, b []types.Value) bool { return cmpTest(op, compareValues(a, b, t)) }
		}
		f := &Func{Name: op, Args: []types.T{t, t}, Return: types.TBool, Strict: true,
			Kernel: RowKernel(types.TBool, []types.T{t, t}, func(_ *Context, a []types.Value) (types.Value, error) {
				return fn(a[0].([]types.Value), a[1].([]types.Value)), nil
			})}
		return &Call{Fn: f, Args: args}, nil
	case op == "||":
		var t types.T
		switch {
		case la && ra, la && rt.Kind == types.Unknown, ra && lt.Kind == types.Unknown:
			var err error
			if t, err = CommonType([]types.T{lt, rt}, "ARRAY"); err != nil {
				return nil, nil
			}
		case la:
			t = lt
			if !canCoerce(rt, *t.Elem, ctxImplicit) {
				return nil, nil
			}
		default:
			t = rt
			if !canCoerce(lt, *t.Elem, ctxImplicit) {
				return nil, nil
			}
		}
		lc, err := coerceImplicit(l, pick(la || lt.Kind == types.Unknown && ra, t, *t.Elem))
		if err != nil {
			return nil, err
		}
		rc, err := coerceImplicit(r, pick(ra || rt.Kind == types.Unknown && la, t, *t.Elem))
		if err != nil {
			return nil, err
		}
		return arrayCat("||", lc, rc, t), nil
	}
	return nil, nil
}

func pick(c bool, a, b types.T) types.T {
	if c {
		return a
	}
	return b
}

func coerceAll(es []Expr, t types.T) ([]Expr, error) {
	out := make([]Expr, len(es))
	for i, e := range es {
		c, err := coerceImplicit(e, t)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// arrayCat concatenates arrays and elements (NULL arrays are empty, a NULL
// element is appended as NULL).
func arrayCat(name string, l, r Expr, t types.T) Expr {
	lt, rt := l.Type(), r.Type()
	f := &Func{Name: name, Args: []types.T{lt, rt}, Return: t,
		Kernel: RowKernel(t, []types.T{lt, rt}, func(_ *Context, a []types.Value) (types.Value, error) {
			var out []types.Value
			for i, v := range a {
				isArr := []types.T{lt, rt}[i].Kind == types.Array
				switch {
				case isArr && v != nil:
					out = append(out, v.([]types.Value)...)
				case !isArr:
					out = append(out, v)
				}
			}
			if out == nil {
				if a[0] == nil && a[1] == nil {
					return nil, nil
				}
				out = []types.Value{}
			}
			return out, nil
		})}
	return &Call{Fn: f, Args: []Expr{l, r}}
}

func arrayContains(a, b []types.Value, elem types.T) bool {
	for _, y := range b {
		if y == nil {
			return false
		}
		found := false
		for _, x := range a {
			if x != nil && compareValues(x, y, elem) == 0 {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func arrayOverlaps(a, b []types.Value, elem types.T) bool {
	for _, y := range b {
		for _, x := range a {
			if x != nil && y != nil && compareValues(x, y, elem) == 0 {
				return true
			}
		}
	}
	return false
}

func init() {
	elemFn := func(name string, arrFirst bool) func(args []Expr) (Expr, error) {
		return func(args []Expr) (Expr, error) {
			if len(args) != 2 {
				return nil, noFunction(name, typesOf(args))
			}
			ai, ei := 0, 1
			if !arrFirst {
				ai, ei = 1, 0
			}
			at := args[ai].Type()
			if at.Kind != types.Array {
				return nil, noFunction(name, typesOf(args))
			}
			e, err := coerceImplicit(args[ei], *at.Elem)
			if err != nil {
				return nil, err
			}
			out := []Expr{args[0], args[1]}
			out[ei] = e
			return arrayCat(name, out[0], out[1], at), nil
		}
	}
	registerBuilder("array_append", elemFn("array_append", true))
	registerBuilder("array_prepend", elemFn("array_prepend", false))
	registerBuilder("array_cat", func(args []Expr) (Expr, error) {
		if len(args) != 2 {
			return nil, noFunction("array_cat", typesOf(args))
		}
		e, err := arrayBinary("||", args[0], args[1])
		if err != nil || e == nil {
			if err == nil {
				err = noFunction("array_cat", typesOf(args))
			}
			return nil, err
		}
		e.(*Call).Fn.Name = "array_cat"
		return e, nil
	})
	registerBuilder("array_position", func(args []Expr) (Expr, error) {
		if len(args) != 2 || args[0].Type().Kind != types.Array {
			return nil, noFunction("array_position", typesOf(args))
		}
		elem := *args[0].Type().Elem
		x, err := coerceImplicit(args[1], elem)
		if err != nil {
			return nil, err
		}
		return polyCall("array_position", []Expr{args[0], x}, types.TInt4, false, func(_ *Context, a []types.Value) (types.Value, error) {
			if a[0] == nil {
				return nil, nil
			}
			for i, v := range a[0].([]types.Value) {
				if (v == nil && a[1] == nil) || (v != nil && a[1] != nil && compareValues(v, a[1], elem) == 0) {
					return int64(i + 1), nil
				}
			}
			return nil, nil
		}), nil
	})
	registerBuilder("array_replace", func(args []Expr) (Expr, error) {
		if len(args) != 3 || args[0].Type().Kind != types.Array {
			return nil, noFunction("array_replace", typesOf(args))
		}
		at := args[0].Type()
		from, err := coerceImplicit(args[1], *at.Elem)
		if err != nil {
			return nil, err
		}
		to, err := coerceImplicit(args[2], *at.Elem)
		if err != nil {
			return nil, err
		}
		// not strict: NULL elements are replaced (and by) as any other
		return polyCall("array_replace", []Expr{args[0], from, to}, at, false, func(_ *Context, a []types.Value) (types.Value, error) {
			if a[0] == nil {
				return nil, nil
			}
			in := a[0].([]types.Value)
			out := make([]types.Value, len(in))
			for i, v := range in {
				if (v == nil && a[1] == nil) || (v != nil && a[1] != nil && compareValues(v, a[1], *at.Elem) == 0) {
					v = a[2]
				}
				out[i] = v
			}
			return out, nil
		}), nil
	})
	registerBuilder("array_remove", func(args []Expr) (Expr, error) {
		if len(args) != 2 || args[0].Type().Kind != types.Array {
			return nil, noFunction("array_remove", typesOf(args))
		}
		at := args[0].Type()
		x, err := coerceImplicit(args[1], *at.Elem)
		if err != nil {
			return nil, err
		}
		return polyCall("array_remove", []Expr{args[0], x}, at, false, func(_ *Context, a []types.Value) (types.Value, error) {
			if a[0] == nil {
				return nil, nil
			}
			out := []types.Value{}
			for _, v := range a[0].([]types.Value) {
				if (v == nil && a[1] == nil) || (v != nil && a[1] != nil && compareValues(v, a[1], *at.Elem) == 0) {
					continue
				}
				out = append(out, v)
			}
			return out, nil
		}), nil
	})
}
