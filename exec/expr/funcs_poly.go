package expr

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Polymorphic and variadic functions, built per call by builders:
// greatest/least, concat/concat_ws/format (any arguments, shown as text),
// array_length/cardinality/array_to_string/array_upper/array_lower (any
// array), and the regex functions.

// polyCall builds a Call to a function made for these argument types.
func polyCall(name string, args []Expr, ret types.T, strict bool, fn func(ctx *Context, a []types.Value) (types.Value, error)) Expr {
	ts := typesOf(args)
	f := &Func{Name: name, Args: ts, Return: ret, Strict: strict, Kernel: RowKernel(ret, ts, fn)}
	return &Call{Fn: f, Args: args}
}

// unknownToText types unknown literals as text (as PostgreSQL does for
// "any" arguments).
func unknownToText(args []Expr) ([]Expr, error) {
	out := make([]Expr, len(args))
	for i, a := range args {
		if a.Type().Kind == types.Unknown {
			c, err := coerceImplicit(a, types.TText)
			if err != nil {
				return nil, err
			}
			out[i] = c
		} else {
			out[i] = a
		}
	}
	return out, nil
}

func minMaxBuilder(name string, greatest bool) func(args []Expr) (Expr, error) {
	return func(args []Expr) (Expr, error) {
		if len(args) == 0 {
			return nil, noFunction(name, nil)
		}
		t, err := CommonType(typesOf(args), strings.ToUpper(name))
		if err != nil {
			return nil, err
		}
		cargs := make([]Expr, len(args))
		for i, a := range args {
			if cargs[i], err = coerceImplicit(a, t); err != nil {
				return nil, err
			}
		}
		if _, err := resolveEq(&ColRef{T: t}, &ColRef{T: t}); err != nil {
			return nil, pgerr.New(pgerr.UndefinedFunction, "could not identify a comparison function for type %s", t)
		}
		return polyCall(name, cargs, t, false, func(_ *Context, a []types.Value) (types.Value, error) {
			var best types.Value
			for _, v := range a {
				if v == nil {
					continue
				}
				if best == nil {
					best = v
					continue
				}
				c := compareValues(v, best, t)
				if (greatest && c > 0) || (!greatest && c < 0) {
					best = v
				}
			}
			return best, nil
		}), nil
	}
}

func init() {
	registerBuilder("greatest", minMaxBuilder("greatest", true))
	registerBuilder("least", minMaxBuilder("least", false))
	registerBuilder("concat", func(args []Expr) (Expr, error) {
		args, err := unknownToText(args)
		if err != nil {
			return nil, err
		}
		ts := typesOf(args)
		return polyCall("concat", args, types.TText, false, func(ctx *Context, a []types.Value) (types.Value, error) {
			var sb strings.Builder
			for i, v := range a {
				if v != nil {
					t := outputText(ctx, v, ts[i])
					if err := membudget.StringBuffer(int64(sb.Len()), int64(len(t))); err != nil {
						return nil, err
					}
					sb.WriteString(t)
				}
			}
			return sb.String(), nil
		}), nil
	})
	registerBuilder("concat_ws", func(args []Expr) (Expr, error) {
		if len(args) == 0 {
			return nil, noFunction("concat_ws", nil)
		}
		args, err := unknownToText(args)
		if err != nil {
			return nil, err
		}
		ts := typesOf(args)
		return polyCall("concat_ws", args, types.TText, false, func(ctx *Context, a []types.Value) (types.Value, error) {
			if a[0] == nil {
				return nil, nil
			}
			sep := textOf(ctx, a[0], ts[0])
			var parts []string
			var have int64
			for i, v := range a[1:] {
				if v != nil {
					t := outputText(ctx, v, ts[i+1])
					if len(parts) > 0 {
						have += int64(len(sep))
					}
					if err := membudget.StringBuffer(have, int64(len(t))); err != nil {
						return nil, err
					}
					have += int64(len(t))
					parts = append(parts, t)
				}
			}
			return strings.Join(parts, sep), nil
		}), nil
	})
	registerBuilder("format", func(args []Expr) (Expr, error) {
		if len(args) == 0 {
			return nil, noFunction("format", nil)
		}
		args, err := unknownToText(args)
		if err != nil {
			return nil, err
		}
		ts := typesOf(args)
		return polyCall("format", args, types.TText, false, func(ctx *Context, a []types.Value) (types.Value, error) {
			if a[0] == nil {
				return nil, nil
			}
			return formatSQL(ctx, textOf(ctx, a[0], ts[0]), a[1:], ts[1:])
		}), nil
	})
	arrayFn := func(name string, extra []types.T, ret types.T, fn func(ctx *Context, elem types.T, a []types.Value) (types.Value, error)) {
		registerBuilder(name, func(args []Expr) (Expr, error) {
			if len(args) != len(extra)+1 || args[0].Type().Kind != types.Array {
				return nil, noFunction(name, typesOf(args))
			}
			out := []Expr{args[0]}
			for i, t := range extra {
				c, err := Coerce(args[i+1], t, false)
				if err != nil {
					return nil, noFunction(name, typesOf(args))
				}
				out = append(out, c)
			}
			elem := *args[0].Type().Elem
			return polyCall(name, out, ret, true, func(ctx *Context, a []types.Value) (types.Value, error) { return fn(ctx, elem, a) }), nil
		})
	}
	arrayLen := func(_ *Context, _ types.T, a []types.Value) (types.Value, error) {
		l := len(a[0].([]types.Value))
		if l == 0 || a[1].(int64) != 1 {
			return nil, nil
		}
		return int64(l), nil
	}
	arrayFn("array_length", []types.T{types.TInt4}, types.TInt4, arrayLen)
	arrayFn("array_upper", []types.T{types.TInt4}, types.TInt4, arrayLen)
	arrayFn("array_lower", []types.T{types.TInt4}, types.TInt4, func(_ *Context, _ types.T, a []types.Value) (types.Value, error) {
		if len(a[0].([]types.Value)) == 0 || a[1].(int64) != 1 {
			return nil, nil
		}
		return int64(1), nil
	})
	arrayFn("array_ndims", nil, types.TInt4, func(_ *Context, _ types.T, a []types.Value) (types.Value, error) {
		if len(a[0].([]types.Value)) == 0 {
			return nil, nil
		}
		return int64(1), nil
	})
	arrayFn("cardinality", nil, types.TInt4, func(_ *Context, _ types.T, a []types.Value) (types.Value, error) {
		return int64(len(a[0].([]types.Value))), nil
	})
	joinArr := func(ctx *Context, elem types.T, a []types.Value) (types.Value, error) {
		var parts []string
		for _, v := range a[0].([]types.Value) {
			switch {
			case v != nil:
				parts = append(parts, outputText(ctx, v, elem))
			case len(a) > 2:
				parts = append(parts, a[2].(string))
			}
		}
		return strings.Join(parts, a[1].(string)), nil
	}
	registerBuilder("array_to_string", func(args []Expr) (Expr, error) {
		if (len(args) != 2 && len(args) != 3) || args[0].Type().Kind != types.Array {
			return nil, noFunction("array_to_string", typesOf(args))
		}
		out := []Expr{args[0]}
		for _, x := range args[1:] {
			c, err := Coerce(x, types.TText, false)
			if err != nil {
				return nil, noFunction("array_to_string", typesOf(args))
			}
			out = append(out, c)
		}
		elem := *args[0].Type().Elem
		// NULL null_string means "skip NULL elements", so not strict on it.
		return polyCall("array_to_string", out, types.TText, false, func(ctx *Context, a []types.Value) (types.Value, error) {
			if a[0] == nil || a[1] == nil {
				return nil, nil
			}
			if len(a) > 2 && a[2] == nil {
				a = a[:2]
			}
			return joinArr(ctx, elem, a)
		}), nil
	})

	TX := types.TText
	s := func(a []types.Value, i int) string { return a[i].(string) }
	define(
		rowFn("regexp_replace", TX, []types.T{TX, TX, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			return regexpReplace(s(a, 0), s(a, 1), s(a, 2), "")
		}),
		rowFn("regexp_replace", TX, []types.T{TX, TX, TX, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			if err := numericFlagsHint(s(a, 3)); err != nil {
				return nil, err
			}
			return regexpReplace(s(a, 0), s(a, 1), s(a, 2), s(a, 3))
		}),
		// regex_kernel.go: over whole arrays.
		&Func{Name: "regexp_match", Args: []types.T{TX, TX}, Return: types.ArrayOf(TX), Strict: true, Kernel: regexpMatchKernel, Element: regexpGroupKernel, nullSafe: true},
		&Func{Name: "regexp_match", Args: []types.T{TX, TX, TX}, Return: types.ArrayOf(TX), Strict: true, Kernel: regexpMatchKernel, Element: regexpGroupKernel, nullSafe: true},
	)
	// string_to_array's delimiter and null string may be NULL: not strict.
	for _, args := range [][]types.T{{TX, TX}, {TX, TX, TX}} {
		define(&Func{Name: "string_to_array", Args: args, Return: types.ArrayOf(TX),
			Kernel: RowKernel(types.ArrayOf(TX), args, func(_ *Context, a []types.Value) (types.Value, error) {
				if a[0] == nil {
					return nil, nil
				}
				var ns types.Value
				if len(a) > 2 {
					ns = a[2]
				}
				return stringToArray(s(a, 0), a[1], ns), nil
			})})
	}
}

// StringToArray is string_to_array(s, delim, nullStr) for a non-NULL s,
// and so string_to_table's rows (planner/srf.go).
func StringToArray(s string, delim, nullStr types.Value) []types.Value {
	return stringToArray(s, delim, nullStr)
}

// stringToArray splits s on delim (NULL delim: every character; empty
// delim: the whole string); elements equal to nullStr become NULL.
func stringToArray(s string, delim, nullStr types.Value) []types.Value {
	out := []types.Value{}
	if s == "" {
		return out
	}
	var parts []string
	switch d := delim.(type) {
	case nil:
		for _, r := range s {
			parts = append(parts, string(r))
		}
	case string:
		if d == "" {
			parts = []string{s}
		} else {
			parts = strings.Split(s, d)
		}
	}
	ns, hasNull := nullStr.(string)
	for _, p := range parts {
		if hasNull && p == ns {
			out = append(out, nil)
		} else {
			out = append(out, p)
		}
	}
	return out
}

func regexpReplace(s, pat, repl, flags string) (types.Value, error) {
	opts, global, err := regexOptions(flags)
	if err != nil {
		return nil, err
	}
	re, err := compilePG(pat, opts)
	if err != nil {
		return nil, err
	}
	n := 1
	if global {
		n = -1
	}
	ms, err := re.findAll(s, 0, n)
	if err != nil || ms == nil {
		return s, err
	}
	// Built piece by piece, each checked against the largest value
	// before it is appended (a short pattern and replacement can ask for
	// far more than the input).
	var rep []byte
	var have int64
	last := 0
	for _, m := range ms { // measure first
		if err := membudget.StringBuffer(have, int64(m[0]-last)); err != nil {
			return nil, err
		}
		have += int64(m[0] - last)
		rep = appendReplacement(rep[:0], repl, s, m)
		if err := membudget.StringBuffer(have, int64(len(rep))); err != nil {
			return nil, err
		}
		have += int64(len(rep))
		last = m[1]
	}
	if err := membudget.StringBuffer(have, int64(len(s)-last)); err != nil {
		return nil, err
	}
	dst := make([]byte, 0, have+int64(len(s)-last))
	last = 0
	for _, m := range ms {
		dst = append(dst, s[last:m[0]]...)
		dst = appendReplacement(dst, repl, s, m)
		last = m[1]
	}
	return string(append(dst, s[last:]...)), nil
}

func regexpMatch(s, pat, flags string) (types.Value, error) {
	re, err := compileMatch(pat, flags) // regex_kernel.go
	if err != nil {
		return nil, err
	}
	return matchGroups(re, s)
}

func matchGroups(re *Regex, s string) (types.Value, error) {
	m, err := submatchIndex(re, nil, s, nil, nil) // regex_kernel.go
	if m == nil || err != nil {
		return nil, err
	}
	if len(m) == 2 {
		return []types.Value{s[m[0]:m[1]]}, nil
	}
	out := make([]types.Value, 0, len(m)/2-1)
	for i := 2; i < len(m); i += 2 {
		if m[i] < 0 {
			out = append(out, nil)
		} else {
			out = append(out, s[m[i]:m[i+1]])
		}
	}
	return out, nil
}

// formatSQL implements format(): %s (text, NULL as empty), %I (identifier),
// %L (literal, NULL unquoted), %% and positional %n$ references.
func formatSQL(ctx *Context, f string, args []types.Value, ts []types.T) (types.Value, error) {
	var sb strings.Builder
	next := 0
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' {
			sb.WriteByte(c)
			continue
		}
		i++
		if i >= len(f) {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "unterminated format() type specifier").
				WithHint("For a single \"%%\" use \"%%%%\".")
		}
		if f[i] == '%' {
			sb.WriteByte('%')
			continue
		}
		// optional position n$
		j := i
		for j < len(f) && f[j] >= '0' && f[j] <= '9' {
			j++
		}
		argi := next
		if j < len(f) && j > i && f[j] == '$' {
			p, _ := strconv.Atoi(f[i:j])
			if p == 0 {
				return nil, pgerr.New(pgerr.InvalidParameterValue, "format specifies argument 0, but arguments are numbered from 1")
			}
			argi = p - 1
			i = j + 1
		}
		// optional width (flags '-' and digits)
		left := false
		if i < len(f) && f[i] == '-' {
			left = true
			i++
		}
		w := 0
		for i < len(f) && f[i] >= '0' && f[i] <= '9' {
			w = min(w*10+int(f[i]-'0'), 1<<31)
			i++
		}
		if i >= len(f) {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "unterminated format() type specifier").
				WithHint("For a single \"%%\" use \"%%%%\".")
		}
		if argi >= len(args) {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "too few arguments for format()")
		}
		v, t := args[argi], ts[argi]
		next = argi + 1
		var out string
		switch f[i] {
		case 's':
			if v != nil {
				out = outputText(ctx, v, t)
			}
		case 'I':
			if v == nil {
				return nil, pgerr.New(pgerr.NullValueNotAllowed, "null values cannot be formatted as an SQL identifier")
			}
			out = quoteIdent(outputText(ctx, v, t))
		case 'L':
			if v == nil {
				out = "NULL"
			} else {
				out = quoteLiteral(outputText(ctx, v, t))
			}
		default:
			return nil, pgerr.New(pgerr.InvalidParameterValue, "unrecognized format() type specifier \"%c\"", f[i]).
				WithHint("For a single \"%%\" use \"%%%%\".")
		}
		if n := utf8.RuneCountInString(out); n < w {
			if err := membudget.StringBuffer(int64(sb.Len()), int64(w-n)); err != nil {
				return nil, err
			}
			if left {
				out += strings.Repeat(" ", w-n)
			} else {
				out = strings.Repeat(" ", w-n) + out
			}
		}
		if err := membudget.StringBuffer(int64(sb.Len()), int64(len(out))); err != nil {
			return nil, err
		}
		sb.WriteString(out)
	}
	return sb.String(), nil
}
