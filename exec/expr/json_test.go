package expr

import (
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

func jb(s string) Expr { return &Const{V: s, T: types.TJSONB} }

func textArr(ss ...string) Expr {
	vs := make([]types.Value, len(ss))
	for i, s := range ss {
		vs[i] = s
	}
	return &Const{V: vs, T: types.ArrayOf(types.TText)}
}

func TestJSON(t *testing.T) {
	doc := jb(`{"a": {"b": [1, 2, {"c": "x"}]}, "aa": 1}`)
	runSQL(t, []sqlCase{
		{"->", op("->", doc, lit("a")), `{"b": [1, 2, {"c": "x"}]}`},
		{"#>", op("#>", doc, textArr("a", "b", "2")), `{"c": "x"}`},
		{"#>>", op("#>>", doc, textArr("a", "b", "2", "c")), "x"},
		{"-> negative index", op("->", jb("[1, 2, 3]"), i4(-1)), "3"},
		{"->>", op("->>", jb(`{"a": 1}`), lit("a")), "1"},
		{"->> null", op("->>", jb(`{"a": null}`), lit("a")), "NULL"},
		{"@>", op("@>", jb(`{"a": 1, "b": [1, 2]}`), jb(`{"b": [2]}`)), "t"},
		{"<@", op("<@", jb("[1, 2]"), jb("[1, 2, 3]")), "t"},
		{"?", op("?", jb(`{"a": 1}`), lit("a")), "t"},
		{"?|", op("?|", jb(`["a", "b"]`), textArr("x", "b")), "t"},
		{"?&", op("?&", jb(`["a", "b"]`), textArr("x", "b")), "f"},
		{"jsonb_typeof", fx("jsonb_typeof", jb("[1]")), "array"},
		{"jsonb_array_length", fx("jsonb_array_length", jb("[1, 2, 3]")), "3"},
		{"jsonb_build_object", fx("jsonb_build_object", lit("b"), i4(1), lit("a"), lit("x"), lit("c"), &Const{T: types.TUnknown}), `{"a": "x", "b": 1, "c": null}`},
		{"json_build_object", fx("json_build_object", lit("b"), i4(1), lit("a"), &Const{V: true, T: types.TBool}), `{"b" : 1, "a" : true}`},
		{"jsonb_build_array", fx("jsonb_build_array", i4(1), lit("a"), &Const{T: types.TUnknown}, num("2.5")), `[1, "a", null, 2.5]`},
		{"to_jsonb text", fx("to_jsonb", &Const{V: "hi", T: types.TText}), `"hi"`},
		{"to_jsonb array", fx("to_jsonb", &Const{V: []types.Value{int64(1), int64(2)}, T: types.ArrayOf(types.TInt4)}), "[1, 2]"},
		{"jsonb_extract_path", fx("jsonb_extract_path", lit(`{"a":{"b":3}}`), lit("a"), lit("b")), "3"},
		{"jsonb_extract_path_text", fx("jsonb_extract_path_text", lit(`{"a":{"b":"q"}}`), lit("a"), lit("b")), "q"},
	})
	e := call(t, "jsonb_array_length", jb(`{"a": 1}`))
	_, err := evalValues(t, e, batch(t, col{types.TInt4, []types.Value{int64(1)}}))
	expectErr(t, err, pgerr.InvalidParameterValue, "cannot get array length of a non-array")
}
