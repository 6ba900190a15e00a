package planner

import (
	"encoding/json"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// The json and jsonb set-returning functions: json[b]_array_elements[_text],
// json[b]_object_keys and json[b]_each[_text]. A jsonb value's Go form is
// its normalized text, which keeps PostgreSQL's key order; a json value's
// is its text as written, and the json functions give each element's text
// as written (duplicate keys included), with PostgreSQL's json messages.

func (b *binder) jsonSRF(fc *pg.FuncCall, name string, args []expr.Expr) (*srfCall, error) {
	if len(args) != 1 {
		return nil, b.newErr(pgerr.UndefinedFunction, fc.Location, "function %s(%s) does not exist", name, typeList(args))
	}
	plain := strings.HasPrefix(name, "json_") // json, not jsonb
	want := types.TJSONB
	if plain {
		want = types.TJSON
	}
	a, err := expr.Coerce(args[0], want, false)
	if err != nil || a.Type().Kind != want.Kind {
		return nil, b.newErr(pgerr.UndefinedFunction, fc.Location, "function %s(%s) does not exist", name, typeList(args)).(*pgerr.Error).
			WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
	}
	c := &srfCall{name: name, args: []expr.Expr{a}}
	asText := strings.HasSuffix(name, "_text")
	switch name {
	case "jsonb_array_elements", "jsonb_array_elements_text", "json_array_elements", "json_array_elements_text":
		c.name, c.t = "value", want
		if asText {
			c.t = types.TText
		}
		c.expand = func(vs []types.Value) ([]types.Value, error) {
			elems, err := jsonElements(vs[0], name)
			if err != nil {
				return nil, err
			}
			out := make([]types.Value, len(elems))
			for i, e := range elems {
				if out[i], err = jsonValue(e, asText, plain); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
	case "jsonb_object_keys", "json_object_keys":
		c.t = types.TText
		c.expand = func(vs []types.Value) ([]types.Value, error) {
			keys, _, err := jsonMembers(vs[0], name)
			if err != nil {
				return nil, err
			}
			out := make([]types.Value, len(keys))
			for i, k := range keys {
				out[i] = k
			}
			return out, nil
		}
	default: // json[b]_each, json[b]_each_text
		vt := want
		if asText {
			vt = types.TText
		}
		c.cols = []types.Column{{Name: "key", Type: types.TText}, {Name: "value", Type: vt}}
		c.rows = func(vs []types.Value) ([][]types.Value, error) {
			keys, vals, err := jsonMembers(vs[0], name)
			if err != nil {
				return nil, err
			}
			out := make([][]types.Value, len(keys))
			for i := range keys {
				v, err := jsonValue(vals[i], asText, plain)
				if err != nil {
					return nil, err
				}
				out[i] = []types.Value{keys[i], v}
			}
			return out, nil
		}
	}
	return c, nil
}

// jsonKind names the kind of a JSON text for error messages.
func jsonKind(s string) string {
	switch strings.TrimSpace(s)[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "a scalar"
}

// jsonElements splits a JSON array, for function fn.
func jsonElements(v types.Value, fn string) ([]json.RawMessage, error) {
	s, _ := v.(string)
	if s == "" {
		return nil, nil
	}
	if k := jsonKind(s); k != "an array" {
		if strings.HasPrefix(fn, "json_") {
			if k == "a scalar" {
				return nil, pgerr.New(pgerr.InvalidParameterValue, "cannot call %s on a scalar", fn)
			}
			return nil, pgerr.New(pgerr.InvalidParameterValue, "cannot call %s on a non-array", fn)
		}
		return nil, pgerr.New(pgerr.InvalidParameterValue, "cannot extract elements from %s", k)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal([]byte(s), &elems); err != nil {
		return nil, pgerr.Wrap(err, pgerr.InvalidJSONText, "invalid input syntax for type json")
	}
	return elems, nil
}

// jsonMembers splits a JSON object into keys and values, in order.
func jsonMembers(v types.Value, fn string) ([]string, []json.RawMessage, error) {
	s, _ := v.(string)
	if s == "" {
		return nil, nil, nil
	}
	if k := jsonKind(s); k != "an object" {
		switch {
		case strings.HasSuffix(fn, "_object_keys"):
			return nil, nil, pgerr.New(pgerr.InvalidParameterValue, "cannot call %s on %s", fn, k)
		case strings.HasPrefix(fn, "json_") && k == "an array":
			return nil, nil, pgerr.New(pgerr.InvalidParameterValue, "cannot deconstruct an array as an object")
		case strings.HasPrefix(fn, "json_"):
			return nil, nil, pgerr.New(pgerr.InvalidParameterValue, "cannot deconstruct a scalar")
		}
		return nil, nil, pgerr.New(pgerr.InvalidParameterValue, "cannot call %s on a non-object", fn)
	}
	dec := json.NewDecoder(strings.NewReader(s))
	if _, err := dec.Token(); err != nil { // {
		return nil, nil, pgerr.Wrap(err, pgerr.InvalidJSONText, "invalid input syntax for type json")
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, pgerr.Wrap(err, pgerr.InvalidJSONText, "invalid input syntax for type json")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, pgerr.Wrap(err, pgerr.InvalidJSONText, "invalid input syntax for type json")
		}
		keys = append(keys, t.(string))
		vals = append(vals, raw)
	}
	return keys, vals, nil
}

// jsonValue renders one element as jsonb (as written when plain: json),
// or as text for the _text variants (strings unquoted, JSON null as SQL
// NULL; other values as jsonb renders them, or as written when plain).
func jsonValue(raw json.RawMessage, asText, plain bool) (types.Value, error) {
	if asText {
		switch jsonKind(string(raw)) {
		case "a scalar":
			var x any
			if err := json.Unmarshal(raw, &x); err != nil {
				return nil, pgerr.Wrap(err, pgerr.InvalidJSONText, "invalid input syntax for type json")
			}
			switch y := x.(type) {
			case nil:
				return nil, nil
			case string:
				return y, nil
			}
		}
	}
	if plain {
		return string(raw), nil
	}
	return types.NormalizeJSONB(string(raw))
}
