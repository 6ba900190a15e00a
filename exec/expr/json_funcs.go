package expr

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// JSON operators (-> ->> #> #>> @> <@ ? ?| ?&) and functions for jsonb and
// json. Values are decoded with encoding/json; jsonb results are written
// back through types.NormalizeJSONB so they print exactly as PostgreSQL's.

// writeJSON appends v as compact JSON text (no HTML escaping); sep is the
// key/value separator (": " for jsonb, " : " for json_build_object).
func writeJSON(sb *strings.Builder, v any, sep string) {
	switch x := v.(type) {
	case nil:
		sb.WriteString("null")
	case bool:
		sb.WriteString(strconv.FormatBool(x))
	case json.Number:
		sb.WriteString(string(x))
	case string:
		writeJSONString(sb, x)
	case []any:
		sb.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeJSON(sb, e, sep)
		}
		sb.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		sb.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeJSONString(sb, k)
			sb.WriteString(sep)
			writeJSON(sb, x[k], sep)
		}
		sb.WriteByte('}')
	case rawJSON:
		sb.WriteString(string(x))
	}
}

// rawJSON is already-encoded JSON text embedded as is.
type rawJSON string

func writeJSONString(sb *strings.Builder, s string) {
	sb.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		case '\b':
			sb.WriteString(`\b`)
		case '\f':
			sb.WriteString(`\f`)
		default:
			if r < 0x20 {
				sb.WriteString(`\u00`)
				sb.WriteByte("0123456789abcdef"[r>>4])
				sb.WriteByte("0123456789abcdef"[r&15])
			} else {
				sb.WriteRune(r)
			}
		}
	}
	sb.WriteByte('"')
}

// encodeJSON renders a decoded value for result type t (json or jsonb).
func encodeJSON(v any, t types.T) (string, error) {
	var sb strings.Builder
	writeJSON(&sb, v, ": ")
	if t.Kind == types.JSONB {
		return types.NormalizeJSONB(sb.String())
	}
	return sb.String(), nil
}

// jsonOf converts a SQL value to a JSON value (to_jsonb's rules).
func jsonOf(ctx *Context, v types.Value, t types.T) any {
	if v == nil {
		return nil
	}
	switch t.Kind {
	case types.Bool:
		return v
	case types.Int2, types.Int4, types.Int8, types.Float4, types.Float8, types.Numeric, types.Oid:
		s := textOf(ctx, v, t)
		switch s {
		case "NaN", "Infinity", "-Infinity":
			return s
		}
		return json.Number(s)
	case types.JSON, types.JSONB:
		return rawJSON(v.(string))
	case types.Array:
		return arrayJSON(ctx, v.([]types.Value), *t.Elem, ",")
	case types.Date: // " BC" is the only space
		return textOf(ctx, v, t)
	case types.Timestamp:
		return strings.Replace(textOf(ctx, v, t), " ", "T", 1)
	case types.TimestampTZ:
		return xsdOffset(strings.Replace(textOf(ctx, v, t), " ", "T", 1))
	case types.Record:
		// an object of the fields, in order (composite_to_json)
		r, _ := v.(types.RowValue)
		var sb strings.Builder
		sb.WriteByte('{')
		for i, f := range r {
			if i > 0 {
				sb.WriteByte(',')
			}
			writeJSONString(&sb, t.Rec.Names[i])
			sb.WriteByte(':')
			writeJSON(&sb, jsonOf(ctx, f, t.Rec.Types[i]), ":")
		}
		sb.WriteByte('}')
		return rawJSON(sb.String())
	}
	return textOf(ctx, v, t)
}

// arrayJSON is a SQL array as JSON text, its elements separated by sep
// (array_to_json: "," as PostgreSQL's json prints them, ",\n " pretty;
// jsonb output is normalized after).
func arrayJSON(ctx *Context, arr []types.Value, elem types.T, sep string) rawJSON {
	var sb strings.Builder
	sb.WriteByte('[')
	for i, e := range arr {
		if i > 0 {
			sb.WriteString(sep)
		}
		writeJSON(&sb, jsonOf(ctx, e, elem), ":")
	}
	sb.WriteByte(']')
	return rawJSON(sb.String())
}

// jsonPath follows keys/indexes through a decoded value.
func jsonPath(v any, path []types.Value) (any, bool) {
	for _, p := range path {
		if p == nil {
			return nil, false
		}
		k := p.(string)
		switch x := v.(type) {
		case map[string]any:
			e, ok := x[k]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			i, err := strconv.Atoi(strings.TrimSpace(k))
			if err != nil {
				return nil, false
			}
			if i < 0 {
				i += len(x)
			}
			if i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// jsonText is ->>'s rendering: strings unquoted, null as SQL NULL.
func jsonText(v any, t types.T) (types.Value, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return x, nil
	}
	return encodeJSON(v, t)
}

// jsonContains is jsonb @>: objects contain sub-objects, arrays contain
// the elements of the other array (in any order), scalars are equal.
func jsonContains(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return false
		}
		for k, bv := range y {
			av, ok := x[k]
			if !ok || !jsonContains(av, bv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok {
			// an array contains a primitive it has as an element
			if _, isObj := b.(map[string]any); isObj {
				return false
			}
			for _, e := range x {
				if compareJSONValues(e, b) == 0 {
					return true
				}
			}
			return false
		}
		for _, bv := range y {
			found := false
			for _, av := range x {
				if jsonContains(av, bv) {
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
	if _, ok := b.([]any); ok {
		return false
	}
	if _, ok := b.(map[string]any); ok {
		return false
	}
	return compareJSONValues(a, b) == 0
}

func jsonHasKey(v any, k string) bool {
	switch x := v.(type) {
	case map[string]any:
		_, ok := x[k]
		return ok
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok && s == k {
				return true
			}
		}
	case string:
		return x == k
	}
	return false
}

func init() {
	TX, I4, B := types.TText, types.TInt4, types.TBool
	for _, jt := range []types.T{types.TJSONB, types.TJSON} {
		jt := jt
		pre := "jsonb"
		if jt.Kind == types.JSON {
			pre = "json"
		}
		dec := func(a []types.Value) (any, error) { return decodeJSON(a[0].(string)) }
		get := func(text bool) func(*Context, []types.Value) (types.Value, error) {
			return func(_ *Context, a []types.Value) (types.Value, error) {
				v, err := dec(a)
				if err != nil {
					return nil, err
				}
				var key types.Value = a[1]
				if i, ok := a[1].(int64); ok {
					switch v.(type) {
					case []any:
					case map[string]any:
						return nil, nil
					default:
						// a jsonb scalar acts as a one-element array
						if jt.Kind == types.JSONB && (i == 0 || i == -1) {
							if text {
								return jsonText(v, jt)
							}
							return encodeJSON(v, jt)
						}
						return nil, nil
					}
					key = strconv.FormatInt(i, 10)
				} else if _, isObj := v.(map[string]any); !isObj {
					return nil, nil
				}
				r, ok := jsonPath(v, []types.Value{key})
				if !ok {
					return nil, nil
				}
				if text {
					return jsonText(r, jt)
				}
				return encodeJSON(r, jt)
			}
		}
		path := func(text bool) func(*Context, []types.Value) (types.Value, error) {
			return func(_ *Context, a []types.Value) (types.Value, error) {
				v, err := dec(a)
				if err != nil {
					return nil, err
				}
				r, ok := jsonPath(v, a[1].([]types.Value))
				if !ok {
					return nil, nil
				}
				if text {
					return jsonText(r, jt)
				}
				return encodeJSON(r, jt)
			}
		}
		define(
			rowFn("->", jt, []types.T{jt, TX}, get(false)),
			rowFn("->", jt, []types.T{jt, I4}, get(false)),
			rowFn("->>", TX, []types.T{jt, TX}, get(true)),
			rowFn("->>", TX, []types.T{jt, I4}, get(true)),
			rowFn("#>", jt, []types.T{jt, types.ArrayOf(TX)}, path(false)),
			rowFn("#>>", TX, []types.T{jt, types.ArrayOf(TX)}, path(true)),
			rowFn(pre+"_typeof", TX, []types.T{jt}, func(_ *Context, a []types.Value) (types.Value, error) {
				v, err := dec(a)
				if err != nil {
					return nil, err
				}
				return jsonTypeName(v), nil
			}),
			rowFn(pre+"_array_length", I4, []types.T{jt}, func(_ *Context, a []types.Value) (types.Value, error) {
				v, err := dec(a)
				if err != nil {
					return nil, err
				}
				switch x := v.(type) {
				case []any:
					return int64(len(x)), nil
				case map[string]any:
					return nil, pgerr.New(pgerr.InvalidParameterValue, "cannot get array length of a non-array")
				}
				return nil, pgerr.New(pgerr.InvalidParameterValue, "cannot get array length of a scalar")
			}),
		)
		registerBuilder(pre+"_extract_path", extractPathBuilder(pre+"_extract_path", jt, path(false), jt))
		registerBuilder(pre+"_extract_path_text", extractPathBuilder(pre+"_extract_path_text", jt, path(true), TX))
		registerBuilder(pre+"_build_object", buildObjectBuilder(pre+"_build_object", jt))
		registerBuilder(pre+"_build_array", func(args []Expr) (Expr, error) {
			args, err := unknownToText(args)
			if err != nil {
				return nil, err
			}
			ts := typesOf(args)
			return polyCall(pre+"_build_array", args, jt, false, func(ctx *Context, a []types.Value) (types.Value, error) {
				out := make([]any, len(a))
				for i, v := range a {
					out[i] = jsonOf(ctx, v, ts[i])
				}
				return encodeJSON(out, jt)
			}), nil
		})
	}
	for name, jt := range map[string]types.T{"to_jsonb": types.TJSONB, "to_json": types.TJSON} {
		name, jt := name, jt
		registerBuilder(name, func(args []Expr) (Expr, error) {
			if len(args) != 1 {
				return nil, noFunction(name, typesOf(args))
			}
			if args[0].Type().Kind == types.Unknown {
				return nil, pgerr.New(pgerr.IndeterminateDatatype, "could not determine polymorphic type because input has type unknown")
			}
			t := args[0].Type()
			return polyCall(name, args, jt, true, func(ctx *Context, a []types.Value) (types.Value, error) {
				return encodeJSON(jsonOf(ctx, a[0], t), jt)
			}), nil
		})
	}
	// array_to_json(anyarray [, pretty]): to_json of an array, pretty
	// putting a line break between its elements.
	registerBuilder("array_to_json", func(args []Expr) (Expr, error) {
		if len(args) == 2 && args[1].Type().Kind == types.Unknown {
			b, err := coerceImplicit(args[1], types.TBool)
			if err != nil {
				return nil, err
			}
			args = []Expr{args[0], b}
		}
		if len(args) < 1 || len(args) > 2 || args[0].Type().Kind != types.Array || len(args) == 2 && args[1].Type().Kind != types.Bool {
			return nil, noFunction("array_to_json", typesOf(args))
		}
		elem := *args[0].Type().Elem
		return polyCall("array_to_json", args, types.TJSON, true, func(ctx *Context, a []types.Value) (types.Value, error) {
			sep := ","
			if len(a) == 2 && a[1] == true {
				sep = ",\n "
			}
			return string(arrayJSON(ctx, a[0].([]types.Value), elem, sep)), nil
		}), nil
	})
	// row_to_json(record): the record as an object (pretty printing is
	// not implemented: refused rather than ignored)
	registerBuilder("row_to_json", func(args []Expr) (Expr, error) {
		if len(args) < 1 || len(args) > 2 || args[0].Type().Kind != types.Record {
			return nil, noFunction("row_to_json", typesOf(args))
		}
		if len(args) == 2 {
			if k, ok := args[1].(*Const); !ok || k.V != false {
				return nil, pgerr.Unsupported("row_to_json with pretty printing is not supported")
			}
		}
		t := args[0].Type()
		return polyCall("row_to_json", args[:1], types.TJSON, true, func(ctx *Context, a []types.Value) (types.Value, error) {
			return encodeJSON(jsonOf(ctx, a[0], t), types.TJSON)
		}), nil
	})
	J := types.TJSONB
	contains := func(swap bool) func(*Context, []types.Value) (types.Value, error) {
		return func(_ *Context, a []types.Value) (types.Value, error) {
			x, err := decodeJSON(a[0].(string))
			if err != nil {
				return nil, err
			}
			y, err := decodeJSON(a[1].(string))
			if err != nil {
				return nil, err
			}
			if swap {
				x, y = y, x
			}
			return jsonContains(x, y), nil
		}
	}
	hasAny := func(all bool) func(*Context, []types.Value) (types.Value, error) {
		return func(_ *Context, a []types.Value) (types.Value, error) {
			v, err := decodeJSON(a[0].(string))
			if err != nil {
				return nil, err
			}
			for _, k := range a[1].([]types.Value) {
				if k == nil {
					continue
				}
				if jsonHasKey(v, k.(string)) != all {
					return !all, nil
				}
			}
			return all, nil
		}
	}
	define(
		rowFn("@>", B, []types.T{J, J}, contains(false)),
		rowFn("<@", B, []types.T{J, J}, contains(true)),
		rowFn("?", B, []types.T{J, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			v, err := decodeJSON(a[0].(string))
			if err != nil {
				return nil, err
			}
			return jsonHasKey(v, a[1].(string)), nil
		}),
		rowFn("?|", B, []types.T{J, types.ArrayOf(TX)}, hasAny(false)),
		rowFn("?&", B, []types.T{J, types.ArrayOf(TX)}, hasAny(true)),
	)
}

func extractPathBuilder(name string, jt types.T, fn func(*Context, []types.Value) (types.Value, error), ret types.T) func(args []Expr) (Expr, error) {
	return func(args []Expr) (Expr, error) {
		if len(args) < 1 || !args[0].Type().SameKind(jt) && args[0].Type().Kind != types.Unknown {
			return nil, noFunction(name, typesOf(args))
		}
		out := make([]Expr, len(args))
		var err error
		if out[0], err = coerceImplicit(args[0], jt); err != nil {
			return nil, err
		}
		for i, a := range args[1:] {
			if out[i+1], err = Coerce(a, types.TText, false); err != nil {
				return nil, noFunction(name, typesOf(args))
			}
		}
		return polyCall(name, out, ret, true, func(ctx *Context, a []types.Value) (types.Value, error) {
			return fn(ctx, []types.Value{a[0], a[1:]})
		}), nil
	}
}

func buildObjectBuilder(name string, jt types.T) func(args []Expr) (Expr, error) {
	return func(args []Expr) (Expr, error) {
		if len(args)%2 != 0 {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "argument list must have even number of elements").
				WithHint("The arguments of %s() must consist of alternating keys and values.", name)
		}
		args, err := unknownToText(args)
		if err != nil {
			return nil, err
		}
		ts := typesOf(args)
		return polyCall(name, args, jt, false, func(ctx *Context, a []types.Value) (types.Value, error) {
			var sb strings.Builder
			sb.WriteByte('{')
			for i := 0; i < len(a); i += 2 {
				if a[i] == nil {
					return nil, pgerr.New(pgerr.InvalidParameterValue, "argument %d: key must not be null", i+1)
				}
				if i > 0 {
					sb.WriteString(", ")
				}
				writeJSONString(&sb, textOf(ctx, a[i], ts[i]))
				sb.WriteString(" : ")
				writeJSON(&sb, jsonOf(ctx, a[i+1], ts[i+1]), " : ")
			}
			sb.WriteByte('}')
			if jt.Kind == types.JSONB {
				return types.NormalizeJSONB(sb.String())
			}
			return sb.String(), nil
		}), nil
	}
}

// xsdOffset writes a timestamptz's UTC offset with its minutes, as
// PostgreSQL's JSON does (XSD dates): +00 becomes +00:00, before any BC.
func xsdOffset(s string) string {
	base, bc := strings.CutSuffix(s, " BC")
	t := strings.IndexByte(base, 'T')
	i := strings.LastIndexAny(base, "+-")
	if t < 0 || i < t || strings.ContainsRune(base[i:], ':') {
		return s
	}
	base += ":00"
	if bc {
		base += " BC"
	}
	return base
}
