package exprfuzz

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// typ is a result type of a generated expression.
type typ int

const (
	tInt4 typ = iota
	tInt8
	tNumeric
	tFloat8
	tText
	tBool
	tDate
	tTimestamp
	tInterval
	nTypes
)

var typName = [nTypes]string{"int4", "int8", "numeric", "float8", "text", "bool", "date", "timestamp", "interval"}

// table is the fixture both servers hold: one column per type, named
// after it, and rows of edge values (NULLs included), so that generated
// expressions read columns and PostgreSQL cannot fold them at plan time.
var table = struct {
	cols []string
	rows [][]string
}{
	cols: []string{"id int4", "i4 int4", "i8 int8", "n numeric", "f float8", "s text", "b bool", "d date", "ts timestamp", "iv interval"},
	rows: [][]string{
		{"1", "0", "0", "0", "0", "''", "true", "'2024-01-31'", "'2024-02-29 12:00:00'", "'0'"},
		{"2", "-1", "-7", "-2.5", "-0.5", "'abc'", "false", "'1999-12-31'", "'2000-01-01 00:00:00.5'", "'1 day 02:03:04'"},
		{"3", "2147483647", "9223372036854775807", "123456789.123456789", "1e300", "'Hello World'", "NULL", "'0044-03-15 BC'", "'1970-01-01'", "'-3 mons -2 days'"},
		{"4", "-2147483648", "-9223372036854775808", "1e-20", "'NaN'", "' a,b;c '", "true", "'2000-02-29'", "'2024-12-31 23:59:59.999999'", "'1 year 2 months'"},
		{"5", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"},
		{"6", "7", "3", "0.5", "2.5", "'12'", "false", "'2024-03-10'", "'2024-03-10 02:30:00'", "'36:00:00'"},
	},
}

var colOf = [nTypes]string{"fz.i4", "fz.i8", "fz.n", "fz.f", "fz.s", "fz.b", "fz.d", "fz.ts", "fz.iv"}

// gen builds random expressions over the table's columns.
type gen struct {
	r *rand.Rand
}

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

// lit is a small literal of type t.
func (g *gen) lit(t typ) string {
	switch t {
	case tInt4:
		return g.pick("0", "1", "2", "-3", "10", "100", "2147483647", "-1")
	case tInt8:
		return g.pick("0::int8", "5::int8", "-9::int8", "4294967296", "9223372036854775807")
	case tNumeric:
		return g.pick("0.0", "1.5", "-2.25", "3", "0.001", "1e10", "'NaN'::numeric", "10.5")
	case tFloat8:
		return g.pick("0.0::float8", "1.5::float8", "-2::float8", "1e-3::float8", "'Infinity'::float8", "3.14159::float8")
	case tText:
		return g.pick("''", "'x'", "'abc'", "'A b C'", "','", "' '", "'12'", "'ß'", "'héllo'")
	case tBool:
		return g.pick("true", "false", "NULL::bool")
	case tDate:
		return g.pick("DATE '2024-02-29'", "DATE '2000-01-01'", "DATE '1900-03-01'")
	case tTimestamp:
		return g.pick("TIMESTAMP '2024-02-29 23:00:00'", "TIMESTAMP '2000-01-01 00:00:00'", "TIMESTAMP '2024-01-31 10:20:30.456'")
	default:
		return g.pick("INTERVAL '1 day'", "INTERVAL '1 month'", "INTERVAL '-2 hours'", "INTERVAL '90 minutes'", "INTERVAL '1 year 1 second'")
	}
}

// leaf is a column (mostly), a literal of type t or a typed NULL.
func (g *gen) leaf(t typ) string {
	switch g.r.IntN(12) {
	case 0:
		return "NULL::" + typName[t]
	case 1, 2, 3:
		return g.lit(t)
	}
	return colOf[t]
}

// expr returns an expression of type t of at most depth levels. Every
// operator or function reads a column: PostgreSQL evaluates a call of
// constants when it plans the query (eval_const_expressions), so one that
// fails fails the query even where it would never be evaluated, and
// streamsql does not; that difference is not what this test looks for.
func (g *gen) expr(t typ, depth int) string {
	if depth <= 0 || g.r.IntN(4) == 0 {
		return g.leaf(t)
	}
	if e := g.node(t, depth); strings.Contains(e, "fz.") {
		return e
	}
	return colOf[t]
}

// node is an operator or function call of type t.
func (g *gen) node(t typ, depth int) string {
	d := depth - 1
	switch g.r.IntN(10) {
	case 0:
		return fmt.Sprintf("CASE WHEN %s THEN %s ELSE %s END", g.expr(tBool, d), g.expr(t, d), g.expr(t, d))
	case 1:
		return fmt.Sprintf("COALESCE(%s, %s)", g.expr(t, d), g.expr(t, d))
	case 2:
		if t != tBool {
			return fmt.Sprintf("%s(%s, %s)", g.pick("GREATEST", "LEAST", "NULLIF"), g.expr(t, d), g.expr(t, d))
		}
	case 3:
		if c := g.cast(t, d); c != "" {
			return c
		}
	case 4:
		if t != tBool {
			return fmt.Sprintf("CASE %s WHEN %s THEN %s WHEN %s THEN %s END", g.expr(t, d), g.expr(t, d), g.expr(t, d), g.lit(t), g.expr(t, d))
		}
	}
	switch t {
	case tInt4, tInt8:
		return g.intExpr(t, d)
	case tNumeric:
		return g.numExpr(d)
	case tFloat8:
		return g.floatExpr(d)
	case tText:
		return g.textExpr(d)
	case tBool:
		return g.boolExpr(d)
	case tDate:
		return g.dateExpr(d)
	case tTimestamp:
		return g.tsExpr(d)
	default:
		return g.ivExpr(d)
	}
}

// cast converts another type's expression to t, where PostgreSQL has a cast.
func (g *gen) cast(t typ, d int) string {
	var from []typ
	switch t {
	case tInt4, tInt8, tNumeric, tFloat8:
		from = []typ{tInt4, tInt8, tNumeric, tFloat8, tText, tBool}
	case tText:
		from = []typ{tInt4, tInt8, tNumeric, tFloat8, tBool, tDate, tTimestamp, tInterval}
	case tBool:
		from = []typ{tInt4, tText}
	case tDate:
		from = []typ{tTimestamp, tText}
	case tTimestamp:
		from = []typ{tDate, tText}
	case tInterval:
		from = []typ{tText}
	}
	f := from[g.r.IntN(len(from))]
	if f == tBool && t != tInt4 && t != tText {
		return ""
	}
	if f == tText && t != tText {
		// a text that may parse as t
		return fmt.Sprintf("CAST(%s AS %s)", g.pick("fz.s", "'12'", "' 7 '", "'1e3'", "'true'", "'2024-01-02'", "'x'"), typName[t])
	}
	return fmt.Sprintf("CAST(%s AS %s)", g.expr(f, d), typName[t])
}

func (g *gen) intExpr(t typ, d int) string {
	a, b := g.expr(t, d), g.expr(t, d)
	switch g.r.IntN(13) {
	case 0, 1:
		return fmt.Sprintf("(%s %s %s)", a, g.pick("+", "-", "*", "/", "%"), b)
	case 2:
		return fmt.Sprintf("(-%s)", a)
	case 3:
		return fmt.Sprintf("abs(%s)", a)
	case 4:
		if t == tInt4 {
			return fmt.Sprintf("length(%s)", g.expr(tText, d))
		}
		return fmt.Sprintf("(%s %s %s)", a, g.pick("&", "|", "#"), b)
	case 5:
		if t == tInt4 {
			return fmt.Sprintf("position(%s in %s)", g.expr(tText, d), g.expr(tText, d))
		}
		return fmt.Sprintf("(%s << %s)", a, g.pick("1", "3", "63", "64"))
	case 6:
		return fmt.Sprintf("mod(%s, %s)", a, b)
	case 7:
		if t == tInt4 {
			return fmt.Sprintf("(%s - %s)", g.expr(tDate, d), g.expr(tDate, d))
		}
		return fmt.Sprintf("gcd(%s, %s)", a, b)
	case 8:
		if t == tInt4 {
			return fmt.Sprintf("%s(%s)", g.pick("char_length", "octet_length", "ascii", "bit_length"), g.expr(tText, d))
		}
		return fmt.Sprintf("lcm(%s, %s)", a, b)
	case 9:
		if t == tInt4 {
			return fmt.Sprintf("strpos(%s, %s)", g.expr(tText, d), g.pick("'a'", "''", "'l'", "fz.s"))
		}
		return fmt.Sprintf("(%s %s %s)", a, g.pick("+", "-", "*", "/"), g.expr(tInt4, d))
	case 10:
		if t == tInt4 {
			return fmt.Sprintf("width_bucket(%s, 0, 10, %s)", g.expr(tFloat8, d), g.pick("1", "5", "0"))
		}
		return fmt.Sprintf("(~%s)", a)
	case 11:
		return fmt.Sprintf("(ARRAY[%s, %s])[%s]", a, b, g.pick("1", "2", "3", "0"))
	default:
		if t == tInt4 {
			return fmt.Sprintf("%s(ARRAY[%s, %s, NULL]%s)", g.pick("array_length", "cardinality", "array_position"), a, b, g.pick(", 1", ", 1", ", 0"))
		}
		return fmt.Sprintf("(jsonb_build_array(%s, %s) ->> %s)::int8", a, b, g.pick("0", "1", "2"))
	}
}

func (g *gen) numExpr(d int) string {
	a, b := g.expr(tNumeric, d), g.expr(tNumeric, d)
	switch g.r.IntN(14) {
	case 0, 1:
		return fmt.Sprintf("(%s %s %s)", a, g.pick("+", "-", "*", "/", "%"), b)
	case 2:
		return fmt.Sprintf("round(%s, %s)", a, g.pick("0", "1", "2", "-1", "5"))
	case 3:
		return fmt.Sprintf("trunc(%s, %s)", a, g.pick("0", "1", "-2", "3"))
	case 4:
		return fmt.Sprintf("%s(%s)", g.pick("abs", "ceil", "floor", "sign", "round", "trunc", "scale"), a)
	case 5:
		return fmt.Sprintf("(%s %s %s)", a, g.pick("+", "*", "-"), g.expr(tInt4, d))
	case 6:
		return fmt.Sprintf("extract(%s from %s)", g.pick("year", "month", "day", "hour", "minute", "second", "epoch", "dow", "doy", "quarter", "week", "isoyear", "millisecond", "microsecond", "century", "decade"), g.expr(tTimestamp, d))
	case 7:
		return fmt.Sprintf("sqrt(abs(%s))", a)
	case 8:
		return fmt.Sprintf("div(%s, %s)", a, b)
	case 9:
		return fmt.Sprintf("CAST(%s AS numeric(%s))", a, g.pick("5,2", "3", "10,4", "2,1"))
	case 10:
		return fmt.Sprintf("%s(%s)", g.pick("exp", "ln", "log10", "log"), g.pick(a, "abs("+a+")"))
	case 11:
		return fmt.Sprintf("power(%s, %s)", a, g.pick("2", "0.5", "-1", "0", "3"))
	case 12:
		return fmt.Sprintf("extract(%s from %s)", g.pick("epoch", "day", "hour", "month", "year", "second", "minute"), g.expr(tInterval, d))
	default:
		return fmt.Sprintf("%s(%s, %s)", g.pick("mod", "log", "gcd", "lcm"), g.pick(a, "trunc("+a+")"), g.pick(b, "trunc("+b+")"))
	}
}

func (g *gen) floatExpr(d int) string {
	a, b := g.expr(tFloat8, d), g.expr(tFloat8, d)
	switch g.r.IntN(9) {
	case 0, 1:
		return fmt.Sprintf("(%s %s %s)", a, g.pick("+", "-", "*", "/"), b)
	case 2:
		return fmt.Sprintf("%s(%s)", g.pick("abs", "ceil", "floor", "sign", "round", "trunc", "cbrt"), a)
	case 3:
		return fmt.Sprintf("(%s %s %s)", a, g.pick("+", "*", "-"), g.expr(tInt4, d))
	case 4:
		return fmt.Sprintf("date_part('%s', %s)", g.pick("year", "month", "epoch", "second", "dow"), g.expr(tTimestamp, d))
	case 5:
		return fmt.Sprintf("(%s %s %s)", a, g.pick("+", "*"), g.expr(tNumeric, d))
	case 6:
		return fmt.Sprintf("%s(%s)", g.pick("sqrt", "exp", "ln", "log10", "sin", "cos", "atan", "degrees", "radians", "tanh", "asin"), a)
	case 7:
		return fmt.Sprintf("%s(%s, %s)", g.pick("power", "atan2"), a, b)
	default:
		return fmt.Sprintf("extract(epoch from %s)::float8", g.expr(tInterval, d))
	}
}

func (g *gen) textExpr(d int) string {
	a := g.expr(tText, d)
	switch g.r.IntN(24) {
	case 0, 1:
		return fmt.Sprintf("(%s || %s)", a, g.expr(typ(g.r.IntN(int(nTypes))), d))
	case 2:
		return fmt.Sprintf("%s(%s)", g.pick("upper", "lower", "initcap", "reverse", "btrim", "ltrim", "rtrim", "md5", "quote_literal", "quote_ident"), a)
	case 3:
		return fmt.Sprintf("substr(%s, %s, %s)", a, g.pick("0", "1", "2", "-1", "5"), g.pick("0", "1", "3", "10"))
	case 4:
		return fmt.Sprintf("%s(%s, %s)", g.pick("left", "right", "repeat"), a, g.pick("0", "1", "2", "-1", "3"))
	case 5:
		return fmt.Sprintf("%s(%s, %s, %s)", g.pick("lpad", "rpad"), a, g.pick("0", "3", "8"), g.pick("'*'", "''", "'ab'"))
	case 6:
		return fmt.Sprintf("replace(%s, %s, %s)", a, g.pick("'a'", "' '", "''", "'l'"), g.pick("'X'", "''", "'--'"))
	case 7:
		return fmt.Sprintf("split_part(%s, %s, %s)", a, g.pick("','", "' '", "';'", "''"), g.pick("1", "2", "-1", "3"))
	case 8:
		return fmt.Sprintf("concat_ws(%s, %s, %s)", g.pick("','", "'-'", "NULL"), a, g.expr(typ(g.r.IntN(int(nTypes))), d))
	case 9:
		return fmt.Sprintf("to_char(%s, %s)", g.expr(tTimestamp, d), g.pick("'YYYY-MM-DD'", "'HH24:MI:SS.MS'", "'Day Mon DD'", "'IYYY-IW'", "'Q'", "'FMMonth'"))
	case 10:
		return fmt.Sprintf("trim(%s %s from %s)", g.pick("both", "leading", "trailing"), g.pick("' '", "'a'", "'ab'"), a)
	case 11:
		return fmt.Sprintf("translate(%s, %s, %s)", a, g.pick("'abc'", "'l'", "' '"), g.pick("'xy'", "''", "'_'"))
	case 12:
		return fmt.Sprintf("regexp_replace(%s, %s, %s%s)", a, g.pick("'[aeiou]'", "'(l+)'", "'^'", "'\\s+'", "'.'"), g.pick("'X'", "'<\\1>'", "''"), g.pick("", ", 'g'", ", 'i'", ", 'gi'"))
	case 13:
		return fmt.Sprintf("%s(%s)", g.pick("chr", "to_hex"), g.expr(tInt4, d))
	case 14:
		return fmt.Sprintf("format(%s, %s, %s)", g.pick("'%s-%s'", "'%I.%L'", "'[%5s|%-3s]'"), a, g.expr(typ(g.r.IntN(int(nTypes))), d))
	case 15:
		return fmt.Sprintf("overlay(%s placing %s from %s for %s)", a, g.pick("'XY'", "''"), g.pick("1", "2", "5"), g.pick("0", "1", "3"))
	case 16:
		return fmt.Sprintf("to_char(%s, %s)", g.expr(tNumeric, d), g.pick("'999.99'", "'FM9990.00'", "'S9999'", "'9.99EEEE'", "'999,999'", "'PL99'"))
	case 17:
		return fmt.Sprintf("to_char(%s, %s)", g.expr(tInterval, d), g.pick("'HH24:MI:SS'", "'DD \"days\" HH'", "'MM-DD'"))
	case 18:
		return fmt.Sprintf("CAST((%s AT TIME ZONE %s) AS text)", g.expr(tTimestamp, d), g.pick("'America/New_York'", "'Asia/Kolkata'", "'UTC'", "'+05'"))
	case 19:
		return fmt.Sprintf("CAST(%s AS %s)", a, g.pick("varchar(3)", "char(4)", "name", "text"))
	case 20:
		t := typ(g.r.IntN(int(nTypes)))
		return fmt.Sprintf("%s(%s)::text", g.pick("to_jsonb", "to_json", "jsonb_build_array"), g.expr(t, d))
	case 21:
		return fmt.Sprintf("jsonb_build_object('a', %s, 'b', %s) %s", g.expr(typ(g.r.IntN(int(nTypes))), d), a, g.pick("->> 'a'", "->> 'b'", "::text", "#>> '{a}'"))
	case 22:
		t := g.pick("fz.i4", "fz.s", "fz.n", "fz.d")
		return fmt.Sprintf("array_to_string(ARRAY[%s, %s, NULL], %s%s)", t, t, g.pick("','", "''"), g.pick("", ", '*'"))
	default:
		return fmt.Sprintf("jsonb_typeof(to_jsonb(%s))", g.expr(typ(g.r.IntN(int(nTypes))), d))
	}
}

func (g *gen) boolExpr(d int) string {
	switch g.r.IntN(11) {
	case 0:
		return fmt.Sprintf("(%s %s %s)", g.expr(tBool, d), g.pick("AND", "OR"), g.expr(tBool, d))
	case 1:
		return fmt.Sprintf("(NOT %s)", g.expr(tBool, d))
	case 2:
		t := typ(g.r.IntN(int(nTypes)))
		return fmt.Sprintf("(%s IS %s)", g.expr(t, d), g.pick("NULL", "NOT NULL"))
	case 3:
		t := typ(g.r.IntN(int(nTypes)))
		return fmt.Sprintf("(%s IS %s %s)", g.expr(t, d), g.pick("DISTINCT FROM", "NOT DISTINCT FROM"), g.expr(t, d))
	case 4:
		return fmt.Sprintf("(%s %s %s)", g.expr(tText, d), g.pick("LIKE", "ILIKE", "NOT LIKE", "~", "~*"), g.pick("'a%'", "'%b%'", "'_'", "'%'", "'^[A-Z]'", "'o\\s'"))
	case 5:
		t := typ(g.r.IntN(int(tBool)))
		return fmt.Sprintf("(%s BETWEEN %s AND %s)", g.expr(t, d), g.expr(t, d), g.expr(t, d))
	case 6:
		t := typ(g.r.IntN(int(nTypes)))
		return fmt.Sprintf("(%s IN (%s, %s))", g.expr(t, d), g.expr(t, d), g.expr(t, d))
	case 7:
		return fmt.Sprintf("(%s IS %s)", g.expr(tBool, d), g.pick("TRUE", "NOT TRUE", "FALSE", "NOT FALSE", "UNKNOWN", "NOT UNKNOWN"))
	case 8:
		return fmt.Sprintf("starts_with(%s, %s)", g.expr(tText, d), g.pick("'a'", "''", "'H'"))
	case 9:
		return fmt.Sprintf("(%s SIMILAR TO %s)", g.expr(tText, d), g.pick("'%(b|c)%'", "'a*'", "'[0-9]+'"))
	default:
		t := typ(g.r.IntN(int(nTypes)))
		return fmt.Sprintf("(%s %s %s)", g.expr(t, d), g.pick("=", "<>", "<", "<=", ">", ">="), g.expr(t, d))
	}
}

func (g *gen) dateExpr(d int) string {
	switch g.r.IntN(4) {
	case 0:
		return fmt.Sprintf("(%s %s %s)", g.expr(tDate, d), g.pick("+", "-"), g.expr(tInt4, d))
	case 1:
		return fmt.Sprintf("CAST(%s AS date)", g.expr(tTimestamp, d))
	case 2:
		return fmt.Sprintf("make_date(%s, %s, %s)", g.pick("2024", "1", "-44", "0"), g.pick("1", "2", "13"), g.pick("1", "29", "31"))
	default:
		return fmt.Sprintf("(%s + %s)", g.expr(tInt4, d), g.expr(tDate, d))
	}
}

func (g *gen) tsExpr(d int) string {
	switch g.r.IntN(5) {
	case 0, 1:
		return fmt.Sprintf("(%s %s %s)", g.expr(tTimestamp, d), g.pick("+", "-"), g.expr(tInterval, d))
	case 2:
		return fmt.Sprintf("date_trunc('%s', %s)", g.pick("year", "quarter", "month", "week", "day", "hour", "minute", "second", "millennium", "decade"), g.expr(tTimestamp, d))
	case 3:
		return fmt.Sprintf("(%s + %s)", g.expr(tDate, d), g.expr(tInterval, d))
	default:
		return fmt.Sprintf("date_bin(%s, %s, TIMESTAMP '2001-01-01')", g.pick("INTERVAL '15 minutes'", "INTERVAL '1 day'", "INTERVAL '7 seconds'"), g.expr(tTimestamp, d))
	}
}

func (g *gen) ivExpr(d int) string {
	switch g.r.IntN(8) {
	case 0, 1:
		return fmt.Sprintf("(%s %s %s)", g.expr(tInterval, d), g.pick("+", "-"), g.expr(tInterval, d))
	case 2:
		return fmt.Sprintf("(%s %s %s)", g.expr(tInterval, d), g.pick("*", "/"), g.expr(tFloat8, d))
	case 3:
		return fmt.Sprintf("(%s - %s)", g.expr(tTimestamp, d), g.expr(tTimestamp, d))
	case 4:
		return fmt.Sprintf("%s(%s)", g.pick("justify_days", "justify_hours", "justify_interval"), g.expr(tInterval, d))
	case 5:
		return fmt.Sprintf("age(%s, %s)", g.expr(tTimestamp, d), g.expr(tTimestamp, d))
	case 6:
		return fmt.Sprintf("make_interval(%s => %s)", g.pick("days", "hours", "mins", "months", "years", "weeks"), g.expr(tInt4, d))
	default:
		return fmt.Sprintf("(%s %s)", g.pick("-", "+"), g.expr(tInterval, d))
	}
}

// createSQL is the fixture's DDL and rows.
func createSQL() []string {
	var vals []string
	for _, r := range table.rows {
		vals = append(vals, "("+strings.Join(r, ", ")+")")
	}
	return []string{
		"CREATE TABLE fz (" + strings.Join(table.cols, ", ") + ")",
		"INSERT INTO fz VALUES " + strings.Join(vals, ", "),
	}
}
