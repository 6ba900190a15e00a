package expr

import (
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/types"
)

func num(s string) Expr {
	d, _, err := apd.NewFromString(s)
	if err != nil {
		panic(err)
	}
	return &Const{V: d, T: types.TNumeric}
}

func f8(x float64) Expr { return &Const{V: x, T: types.TFloat8} }

// fx builds a sqlCase expression from a function name and argument makers.
func fx(name string, args ...Expr) func(t *testing.T) Expr {
	return func(t *testing.T) Expr { return call(t, name, args...) }
}

func op(o string, l, r Expr) func(t *testing.T) Expr {
	return func(t *testing.T) Expr { return mustBinary(t, o, l, r) }
}

func TestStringFunctions(t *testing.T) {
	bp4 := &Const{V: "ab  ", T: types.TBpchar.WithTypmod(8)}
	arr := &ArrayExpr{T: types.ArrayOf(types.TInt4), Elems: []Expr{i4(1), &Const{T: types.TInt4}, i4(3)}}
	runSQL(t, []sqlCase{
		{"length", fx("length", lit("héllo")), "5"},
		{"length bpchar", fx("length", bp4), "2"},
		{"octet_length", fx("octet_length", lit("héllo")), "6"},
		{"lower", fx("lower", lit("ABC")), "abc"},
		{"initcap", fx("initcap", lit("hello wORLD-foo bar_baz")), "Hello World-Foo Bar_Baz"},
		{"substr", fx("substr", lit("hello"), i4(2), i4(3)), "ell"},
		{"substr negative start", fx("substr", lit("hello"), i4(-1), i4(3)), "h"},
		{"substring from", fx("substring", lit("hello"), i4(3)), "llo"},
		{"position", fx("position", lit("hello"), lit("ll")), "3"},
		{"btrim", fx("btrim", lit("xxhixx"), lit("x")), "hi"},
		{"ltrim", fx("ltrim", lit("  a ")), "a "},
		{"replace", fx("replace", lit("abcabc"), lit("b"), lit("X")), "aXcaXc"},
		{"split_part", fx("split_part", lit("a,b,c"), lit(","), i4(2)), "b"},
		{"split_part negative", fx("split_part", lit("a,b,c"), lit(","), i4(-1)), "c"},
		{"concat", fx("concat", lit("a"), i4(1), &Const{T: types.TUnknown}, &Const{V: true, T: types.TBool}), "a1t"},
		{"concat_ws", fx("concat_ws", lit(","), lit("a"), &Const{T: types.TUnknown}, i4(2)), "a,2"},
		{"left negative", fx("left", lit("hello"), i4(-2)), "hel"},
		{"right", fx("right", lit("hello"), i4(2)), "lo"},
		{"lpad", fx("lpad", lit("hi"), i4(5), lit("xy")), "xyxhi"},
		{"rpad truncates", fx("rpad", lit("hello"), i4(3)), "hel"},
		{"repeat", fx("repeat", lit("ab"), i4(3)), "ababab"},
		{"reverse", fx("reverse", lit("abc")), "cba"},
		{"md5", fx("md5", lit("abc")), "900150983cd24fb0d6963f7d28e17f72"},
		{"starts_with", fx("starts_with", lit("hello"), lit("he")), "t"},
		{"ascii", fx("ascii", lit("A")), "65"},
		{"chr", fx("chr", i4(65)), "A"},
		{"to_hex negative", fx("to_hex", i4(-1)), "ffffffff"},
		{"to_hex bigint", fx("to_hex", &Const{V: int64(255), T: types.TInt8}), "ff"},
		{"regexp_replace g", fx("regexp_replace", lit("hello world"), lit("o"), lit("0"), lit("g")), "hell0 w0rld"},
		{"regexp_replace backref", fx("regexp_replace", lit("abc"), lit("(b)"), lit(`[\1]`)), "a[b]c"},
		{"regexp_match", fx("regexp_match", lit("foo123bar"), lit(`(\d+)`)), "{123}"},
		{"string_to_array", fx("string_to_array", lit("a,b,,c"), lit(","), lit("")), "{a,b,NULL,c}"},
		{"array_to_string", fx("array_to_string", arr, lit("-"), lit("*")), "1-*-3"},
		{"quote_ident", fx("quote_ident", lit("Foo")), `"Foo"`},
		{"quote_ident keyword", fx("quote_ident", lit("select")), `"select"`},
		{"quote_literal", fx("quote_literal", lit("it's")), "'it''s'"},
		{"format", fx("format", lit("%s-%I-%L-%L"), lit("a"), lit("B c"), lit("x'y"), &Const{T: types.TUnknown}), `a-"B c"-'x''y'-NULL`},
		{"array_length", fx("array_length", arr, i4(1)), "3"},
		{"cardinality", fx("cardinality", arr), "3"},
		{"text || int", op("||", lit("a"), i4(1)), "a1"},
		{"int || text", op("||", i4(1), lit("x")), "1x"},
		{"text || numeric", op("||", lit("x"), num("1.5")), "x1.5"},
		{"translate", fx("translate", lit("hello"), lit("el"), lit("ip")), "hippo"},
		{"greatest", fx("greatest", i4(1), num("2.5"), &Const{T: types.TUnknown}), "2.5"},
		{"least", fx("least", lit("b"), lit("a")), "a"},
	})
}

func TestMathFunctions(t *testing.T) {
	runSQL(t, []sqlCase{
		{"abs", fx("abs", i4(-5)), "5"},
		{"ceil", fx("ceil", num("4.2")), "5"},
		{"floor", fx("floor", num("-4.2")), "-5"},
		{"round numeric half away", fx("round", num("2.5")), "3"},
		{"round float half even", fx("round", f8(2.5)), "2"},
		{"round scale", fx("round", num("3.14159"), i4(2)), "3.14"},
		{"round negative scale", fx("round", num("1234.5"), i4(-2)), "1200"},
		{"trunc", fx("trunc", num("-4.7")), "-4"},
		{"sqrt numeric", fx("sqrt", &Cast{E: i4(2), To: types.TNumeric}), "1.414213562373095"},
		{"sqrt float", fx("sqrt", i4(2)), "1.4142135623730951"},
		{"power", fx("power", i4(2), i4(10)), "1024"},
		{"mod", fx("mod", i4(-7), i4(3)), "-1"},
		{"sign", fx("sign", num("-3.5")), "-1"},
		{"gcd", fx("gcd", i4(12), i4(18)), "6"},
		{"lcm", fx("lcm", i4(4), i4(6)), "12"},
		{"div", fx("div", i4(7), i4(2)), "3"},
		{"numeric 1/3", op("/", &Cast{E: i4(1), To: types.TNumeric}, i4(3)), "0.33333333333333333333"},
		{"numeric 10/4", op("/", &Cast{E: i4(10), To: types.TNumeric}, i4(4)), "2.5000000000000000"},
		// PostgreSQL 15: equal leading digits count as a quotient below 1.
		{"numeric 3/3", op("/", &Cast{E: i4(3), To: types.TNumeric}, i4(3)), "1.00000000000000000000"},
		{"numeric 2.50/2", op("/", num("2.50"), &Cast{E: i4(2), To: types.TNumeric}), "1.25000000000000000000"},
		{"numeric ^", op("^", &Cast{E: i4(2), To: types.TNumeric}, num("0.5")), "1.4142135623730950"},
		{"numeric ^ integer keeps 16 decimals", op("^", &Cast{E: i4(2), To: types.TNumeric}, i4(100)), "1267650600228229401496703205376.0000000000000000"},
		{"numeric ^ big", op("^", &Cast{E: i4(2), To: types.TNumeric}, i4(200)), "1606938044258990275541962092341162602522202993782792835301376.0000000000000000"},
		{"numeric ^ fraction", op("^", &Cast{E: i4(1000000), To: types.TNumeric}, num("1.5")), "1000000000.0000000"},
		{"numeric ^ negative", op("^", &Cast{E: i4(2), To: types.TNumeric}, i4(-2)), "0.2500000000000000"},
		{"ln numeric", fx("ln", &Cast{E: i4(2), To: types.TNumeric}), "0.6931471805599453"},
		{"log numeric", fx("log", &Cast{E: i4(100), To: types.TNumeric}), "2.0000000000000000"},
		{"exp numeric", fx("exp", num("1.0")), "2.7182818284590452"},
		{"log base", fx("log", num("2.0"), i4(1024)), "10.0000000000000000"},
		{"factorial", fx("factorial", i4(5)), "120"},
		{"scale", fx("scale", num("1.2300")), "4"},
		{"min_scale", fx("min_scale", num("1.2300")), "2"},
		{"trim_scale", fx("trim_scale", num("1.2300")), "1.23"},
		{"bitwise", op("#", i4(5), i4(3)), "6"},
		{"shift", op("<<", i4(1), i4(4)), "16"},
		{"width_bucket", fx("width_bucket", num("5.5"), i4(0), i4(10), i4(4)), "3"},
		{"7.0/2", op("/", num("7.0"), i4(2)), "3.5000000000000000"},
		{"add scale", op("+", num("1.5"), num("2.25")), "3.75"},
		{"mul scale", op("*", num("1.5"), num("2.25")), "3.375"},
	})
}

func TestArrayOperators(t *testing.T) {
	ia := func(vs ...int64) Expr {
		out := make([]types.Value, len(vs))
		for i, v := range vs {
			out[i] = v
		}
		return &Const{V: out, T: types.ArrayOf(types.TInt4)}
	}
	runSQL(t, []sqlCase{
		{"=", op("=", ia(1, 2), ia(1, 2)), "t"},
		{"<", op("<", ia(1, 2), ia(1, 3)), "t"},
		{"prefix shorter", op("<", ia(1, 2), ia(1, 2, 0)), "t"},
		{"literal", op("=", ia(1, 2), lit("{1,2}")), "t"},
		{"||", op("||", ia(1, 2), ia(3)), "{1,2,3}"},
		{"|| elem", op("||", ia(1), i4(2)), "{1,2}"},
		{"elem ||", op("||", i4(0), ia(1)), "{0,1}"},
		{"@>", op("@>", ia(1, 2, 3), ia(3, 1)), "t"},
		{"<@", op("<@", ia(1, 4), ia(1, 2, 3)), "f"},
		{"&&", op("&&", ia(1, 4), ia(4, 5)), "t"},
		{"array_append", fx("array_append", ia(1), i4(2)), "{1,2}"},
		{"array_cat", fx("array_cat", ia(1), ia(2)), "{1,2}"},
		{"array_position", fx("array_position", ia(5, 6), i4(6)), "2"},
		{"array_remove", fx("array_remove", ia(5, 6, 5), i4(5)), "{6}"},
	})
}

func TestMoreFunctions(t *testing.T) {
	by := func(s string) Expr { return &Const{V: []byte(s), T: types.TBytea} }
	runSQL(t, []sqlCase{
		{"regexp_split_to_array", fx("regexp_split_to_array", lit("a1b22c"), lit(`\d+`)), "{a,b,c}"},
		{"encode hex", fx("encode", by("abc"), lit("hex")), "616263"},
		{"encode base64", fx("encode", by("abc"), lit("base64")), "YWJj"},
		{"decode hex", fx("decode", lit("616263"), lit("hex")), `\x616263`},
		{"decode base64", fx("decode", lit("YWJj"), lit("base64")), `\x616263`},
		{"overlay", fx("overlay", lit("Txxxxas"), lit("hom"), i4(2), i4(4)), "Thomas"},
		{"to_number", fx("to_number", lit("12,454.8-"), lit("99G999D9S")), "-12454.8"},
		{"num_nulls", fx("num_nulls", i4(1), &Const{T: types.TUnknown}, &Const{T: types.TUnknown}), "2"},
		{"num_nonnulls", fx("num_nonnulls", i4(1), &Const{T: types.TUnknown}), "1"},
		{"sha256", fx("sha256", by("abc")), `\xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad`},
		{"regexp_count", fx("regexp_count", lit("abcabc"), lit("b")), "2"},
		{"regexp_substr", fx("regexp_substr", lit("abc123def"), lit(`\d+`)), "123"},
		{"regexp_instr", fx("regexp_instr", lit("abc123"), lit(`\d`)), "4"},
	})
}

func TestStringKernelsOnColumns(t *testing.T) {
	b := batch(t, col{types.TText, []types.Value{"Héllo", nil, ""}}, col{types.TBpchar.WithTypmod(9), []types.Value{"ab   ", nil, "     "}})
	expectValues(t, call(t, "upper", ref(0, types.TText)), b, "HÉLLO", nil, "")
	expectValues(t, call(t, "lower", ref(0, types.TText)), b, "héllo", nil, "")
	expectValues(t, call(t, "length", ref(0, types.TText)), b, int64(5), nil, int64(0))
	expectValues(t, call(t, "octet_length", ref(0, types.TText)), b, int64(6), nil, int64(0))
	expectValues(t, call(t, "char_length", ref(1, types.TBpchar.WithTypmod(9))), b, int64(2), nil, int64(0))
}
