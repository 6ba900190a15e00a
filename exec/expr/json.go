package expr

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// jsonb values are stored as their normalized text; these helpers decode
// them with encoding/json (numbers kept as json.Number).

func decodeJSON(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type json")
	}
	return v, nil
}

// jsonTypeName is jsonb_typeof's name for a decoded value.
func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

// jsonbToScalar is the jsonb -> boolean/numeric/integer/float cast.
func jsonbToScalar(s string, to types.T) (types.Value, error) {
	v, err := decodeJSON(s)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case bool:
		if to.Kind == types.Bool {
			return x, nil
		}
	case json.Number:
		if to.Kind != types.Bool {
			d, err := parseNumeric(string(x))
			if err != nil {
				return nil, err
			}
			return castFromNumeric(d, to)
		}
	}
	return nil, pgerr.New(pgerr.InvalidParameterValue, "cannot cast jsonb %s to type %s", jsonTypeName(v), to)
}

// compareJSONB orders jsonb values: by PostgreSQL's type rank first
// (object > array > boolean > number > string > null), then by value.
func compareJSONB(a, b string) int {
	x, err1 := decodeJSON(a)
	y, err2 := decodeJSON(b)
	if err1 != nil || err2 != nil {
		return strings.Compare(a, b)
	}
	return compareJSONValues(x, y)
}

func jsonRank(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case string:
		return 1
	case json.Number:
		return 2
	case bool:
		return 3
	case []any:
		return 4
	}
	return 5
}

func compareJSONValues(x, y any) int {
	if rx, ry := jsonRank(x), jsonRank(y); rx != ry {
		if rx < ry {
			return -1
		}
		return 1
	}
	switch a := x.(type) {
	case string:
		return strings.Compare(a, y.(string))
	case json.Number:
		da, _ := parseNumeric(string(a))
		db, _ := parseNumeric(string(y.(json.Number)))
		if da == nil || db == nil {
			return strings.Compare(string(a), string(y.(json.Number)))
		}
		return compareNumeric(da, db)
	case bool:
		return compareValues(a, y.(bool), types.TBool)
	case []any:
		b := y.([]any)
		if len(a) != len(b) {
			return compareValues(int64(len(a)), int64(len(b)), types.TInt8)
		}
		for i := range a {
			if c := compareJSONValues(a[i], b[i]); c != 0 {
				return c
			}
		}
		return 0
	case map[string]any:
		b := y.(map[string]any)
		if len(a) != len(b) {
			return compareValues(int64(len(a)), int64(len(b)), types.TInt8)
		}
		return strings.Compare(strconv.Quote(mustJSON(a)), strconv.Quote(mustJSON(b)))
	}
	return 0
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
