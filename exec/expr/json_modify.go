package expr

import (
	"sort"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// jsonb operators and functions that build modified documents: || - #-
// jsonb_set, jsonb_insert, jsonb_strip_nulls.

func jsonConcat(a, b any) any {
	ao, aIsObj := a.(map[string]any)
	bo, bIsObj := b.(map[string]any)
	if aIsObj && bIsObj {
		out := make(map[string]any, len(ao)+len(bo))
		for k, v := range ao {
			out[k] = v
		}
		for k, v := range bo {
			out[k] = v
		}
		return out
	}
	asArr := func(v any) []any {
		if x, ok := v.([]any); ok {
			return x
		}
		return []any{v}
	}
	return append(append([]any{}, asArr(a)...), asArr(b)...)
}

func jsonDeleteKey(v any, k string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for kk, vv := range x {
			if kk != k {
				out[kk] = vv
			}
		}
		return out
	case []any:
		out := []any{}
		for _, e := range x {
			if s, ok := e.(string); !ok || s != k {
				out = append(out, e)
			}
		}
		return out
	}
	return v
}

func jsonDeleteIndex(v any, i int) (any, error) {
	switch x := v.(type) {
	case []any:
		if i < 0 {
			i += len(x)
		}
		if i < 0 || i >= len(x) {
			return x, nil
		}
		return append(append([]any{}, x[:i]...), x[i+1:]...), nil
	case map[string]any:
		return nil, pgerr.New(pgerr.InvalidParameterValue, "cannot delete from object using integer index")
	}
	return nil, pgerr.New(pgerr.InvalidParameterValue, "cannot delete from scalar")
}

// jsonSetPath replaces (or creates, or inserts) the value at path.
// mode: 's' set (create when missing if create), 'i' insert before, 'a' insert after.
func jsonSetPath(v any, path []string, nv any, create bool, mode byte) (any, error) {
	if len(path) == 0 {
		return nv, nil
	}
	k := path[0]
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x)+1)
		for kk, vv := range x {
			out[kk] = vv
		}
		cur, ok := x[k]
		if len(path) == 1 {
			if ok && mode != 's' {
				return nil, pgerr.New(pgerr.InvalidParameterValue, "cannot replace existing key").
					WithHint("Try using the function jsonb_set to replace key value.")
			}
			if ok || create || mode != 's' {
				out[k] = nv
			}
			return out, nil
		}
		if !ok {
			return out, nil
		}
		r, err := jsonSetPath(cur, path[1:], nv, create, mode)
		if err != nil {
			return nil, err
		}
		out[k] = r
		return out, nil
	case []any:
		i, err := strconv.Atoi(k)
		if err != nil {
			return nil, pgerr.New(pgerr.InvalidTextRepresentation, "path element at position 1 is not an integer: \"%s\"", k)
		}
		if i < 0 {
			i += len(x)
		}
		out := append([]any{}, x...)
		if len(path) == 1 {
			switch {
			case mode == 's' && i >= 0 && i < len(out):
				out[i] = nv
			case mode == 's' && !create:
			case i < 0 || mode != 'a' && i >= len(out) || mode == 'a' && i >= len(out):
				if i < 0 {
					out = append([]any{nv}, out...)
				} else {
					out = append(out, nv)
				}
			default:
				if mode == 'a' {
					i++
				}
				out = append(out[:i], append([]any{nv}, out[i:]...)...)
			}
			return out, nil
		}
		if i < 0 || i >= len(out) {
			return out, nil
		}
		r, err := jsonSetPath(out[i], path[1:], nv, create, mode)
		if err != nil {
			return nil, err
		}
		out[i] = r
		return out, nil
	}
	return nil, pgerr.New(pgerr.InvalidParameterValue, "cannot set path in scalar")
}

func jsonStripNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e != nil {
				out[k] = jsonStripNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonStripNulls(e)
		}
		return out
	}
	return v
}

func pathStrings(a types.Value) []string {
	var out []string
	for _, p := range a.([]types.Value) {
		if p == nil {
			out = append(out, "")
		} else {
			out = append(out, p.(string))
		}
	}
	return out
}

func init() {
	J, TX, I4, B := types.TJSONB, types.TText, types.TInt4, types.TBool
	TA := types.ArrayOf(TX)
	dec2 := func(a []types.Value) (any, any, error) {
		x, err := decodeJSON(a[0].(string))
		if err != nil {
			return nil, nil, err
		}
		if len(a) < 2 {
			return x, nil, nil
		}
		if s, ok := a[1].(string); ok {
			y, err := decodeJSON(s)
			return x, y, err
		}
		return x, nil, nil
	}
	out := func(v any, err error) (types.Value, error) {
		if err != nil {
			return nil, err
		}
		return encodeJSON(v, J)
	}
	set := func(mode byte) func(*Context, []types.Value) (types.Value, error) {
		return func(_ *Context, a []types.Value) (types.Value, error) {
			x, err := decodeJSON(a[0].(string))
			if err != nil {
				return nil, err
			}
			nv, err := decodeJSON(a[2].(string))
			if err != nil {
				return nil, err
			}
			create := true
			if len(a) > 3 {
				create = a[3].(bool)
				if mode != 's' && create {
					mode = 'a'
				}
			}
			return out(jsonSetPath(x, pathStrings(a[1]), nv, create, mode))
		}
	}
	define(
		rowFn("||", J, []types.T{J, J}, func(_ *Context, a []types.Value) (types.Value, error) {
			x, y, err := dec2(a)
			if err != nil {
				return nil, err
			}
			return out(jsonConcat(x, y), nil)
		}),
		rowFn("-", J, []types.T{J, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			x, err := decodeJSON(a[0].(string))
			if err != nil {
				return nil, err
			}
			if _, ok := x.(map[string]any); !ok {
				if _, ok := x.([]any); !ok {
					return nil, pgerr.New(pgerr.InvalidParameterValue, "cannot delete from scalar")
				}
			}
			return out(jsonDeleteKey(x, a[1].(string)), nil)
		}),
		rowFn("-", J, []types.T{J, I4}, func(_ *Context, a []types.Value) (types.Value, error) {
			x, err := decodeJSON(a[0].(string))
			if err != nil {
				return nil, err
			}
			return out(jsonDeleteIndex(x, int(a[1].(int64))))
		}),
		rowFn("#-", J, []types.T{J, TA}, func(_ *Context, a []types.Value) (types.Value, error) {
			x, err := decodeJSON(a[0].(string))
			if err != nil {
				return nil, err
			}
			p := pathStrings(a[1])
			if len(p) == 0 {
				return a[0], nil
			}
			parent, ok := jsonPath(x, a[1].([]types.Value)[:len(p)-1])
			if !ok {
				return a[0], nil
			}
			var np any
			switch parent.(type) {
			case map[string]any:
				np = jsonDeleteKey(parent, p[len(p)-1])
			case []any:
				i, err := strconv.Atoi(p[len(p)-1])
				if err != nil {
					return a[0], nil
				}
				if np, err = jsonDeleteIndex(parent, i); err != nil {
					return nil, err
				}
			default:
				return a[0], nil
			}
			return out(jsonSetPath(x, p[:len(p)-1], np, false, 's'))
		}),
		rowFn("jsonb_set", J, []types.T{J, TA, J}, set('s')),
		rowFn("jsonb_set", J, []types.T{J, TA, J, B}, set('s')),
		rowFn("jsonb_insert", J, []types.T{J, TA, J}, set('i')),
		rowFn("jsonb_insert", J, []types.T{J, TA, J, B}, set('i')),
		rowFn("jsonb_strip_nulls", J, []types.T{J}, func(_ *Context, a []types.Value) (types.Value, error) {
			x, err := decodeJSON(a[0].(string))
			if err != nil {
				return nil, err
			}
			return out(jsonStripNulls(x), nil)
		}),
		rowFn("jsonb_pretty", TX, []types.T{J}, func(_ *Context, a []types.Value) (types.Value, error) {
			x, err := decodeJSON(a[0].(string))
			if err != nil {
				return nil, err
			}
			return prettyJSON(x, ""), nil
		}),
	)
}

// prettyJSON is jsonb_pretty's layout (four-space indents).
func prettyJSON(v any, indent string) string {
	in := indent + "    "
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return "{\n" + indent + "}"
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// jsonb's key order: shorter keys first, then bytewise
		sort.Slice(keys, func(i, j int) bool {
			if len(keys[i]) != len(keys[j]) {
				return len(keys[i]) < len(keys[j])
			}
			return keys[i] < keys[j]
		})
		out := "{\n"
		for i, k := range keys {
			if i > 0 {
				out += ",\n"
			}
			var sb strings.Builder
			writeJSONString(&sb, k)
			out += in + sb.String() + ": " + prettyJSON(x[k], in)
		}
		return out + "\n" + indent + "}"
	case []any:
		if len(x) == 0 {
			return "[\n" + indent + "]"
		}
		out := "[\n"
		for i, e := range x {
			if i > 0 {
				out += ",\n"
			}
			out += in + prettyJSON(e, in)
		}
		return out + "\n" + indent + "]"
	}
	s, _ := encodeJSON(v, types.TJSONB)
	return s
}
