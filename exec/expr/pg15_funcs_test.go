package expr

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// evalErr evaluates e on a one-row batch and returns its error.
func evalErr(t *testing.T, e Expr) error {
	t.Helper()
	one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	_, err := e.Eval(testCtx(), one)
	return err
}

// Results taken from PostgreSQL 15 (psql -At).
func TestPG15IntervalFunctions(t *testing.T) {
	iv := func(s string) Expr { return typed(t, s, types.TInterval) }
	for _, c := range []struct{ fn, in, want string }{
		{"justify_interval", "2147483647 days 24 hrs", "5965232 years 4 mons 8 days"},
		{"justify_interval", "-2147483648 days -24 hrs", "-5965232 years -4 mons -9 days"},
		{"justify_interval", "1 mon -1 hour", "29 days 23:00:00"},
		{"justify_hours", "-1 days 25:00:00", "01:00:00"},
		{"justify_days", "1 mon -31 days", "-1 days"},
	} {
		if got := text(t, call(t, c.fn, iv(c.in))); got != c.want {
			t.Errorf("%s(%q) = %q, want %q", c.fn, c.in, got, c.want)
		}
	}
	for _, c := range []struct{ fn, in string }{
		{"justify_hours", "2147483647 days 24 hrs"},
		{"justify_days", "2147483647 months 30 days"},
		{"justify_interval", "2147483647 months 30 days"},
		{"justify_interval", "-2147483648 months -30 days"},
		{"justify_interval", "2147483647 months -30 days 1440 hrs"},
		{"justify_interval", "-2147483648 months 30 days -1440 hrs"},
	} {
		expectErr(t, evalErr(t, call(t, c.fn, iv(c.in))), pgerr.DatetimeFieldOverflow, "interval out of range")
	}
	for _, s := range []string{"inf", "NaN"} {
		e := call(t, "make_interval", i4(0), i4(0), i4(0), i4(0), i4(0), i4(0), typed(t, s, types.TFloat8))
		expectErr(t, evalErr(t, e), pgerr.DatetimeFieldOverflow, "interval out of range")
	}
}

func TestPG15Encode(t *testing.T) {
	by := func(s string) Expr { return typed(t, s, types.TBytea) }
	for _, c := range []struct{ in, enc, want string }{
		{`\x1234567890abcdef00`, "escape", "\x124Vx\\220\\253\\315\\357\\000"},
		{`a\\b`, "escape", `a\\b`},
		{`\x` + "616161616161616161616161616161616161616161616161616161616161616161616161616161616161616161616161616161616161616161", "base64",
			"YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFh\n"},
		{`\x` + "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", "base64",
			"ABEiM0RVZneImaq7zN3u/wARIjNEVWZ3iJmqu8zd7v8AESIzRFVmd4iZqrvM3e7/ABEiM0RVZneI\nmaq7zN3u/w=="},
	} {
		if got := text(t, call(t, "encode", by(c.in), lit(c.enc))); got != c.want {
			t.Errorf("encode(%q, %s) = %q, want %q", c.in, c.enc, got, c.want)
		}
	}
}

func TestPG15Unistr(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`\0064at\+0000610`, "data0"},
		{`d\u0061t\U000000610`, "data0"},
		{`a\\b`, `a\b`},
		{`\D83D\DE00x`, "😀x"},
	} {
		if got := text(t, call(t, "unistr", lit(c.in))); got != c.want {
			t.Errorf("unistr(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ in, msg string }{
		{`wrong: \db99`, "invalid Unicode surrogate pair"},
		{`wrong: \db99\0061`, "invalid Unicode surrogate pair"},
		{`wrong: \+00db99\+000061`, "invalid Unicode surrogate pair"},
		{`wrong: \+2FFFFF`, "invalid Unicode code point: 2FFFFF"},
		{`wrong: \udb99\u0061`, "invalid Unicode surrogate pair"},
		{`wrong: \U0000db99\U00000061`, "invalid Unicode surrogate pair"},
		{`wrong: \U002FFFFF`, "invalid Unicode code point: 2FFFFF"},
		{`wrong: \xyz`, "invalid Unicode escape"},
	} {
		expectErr(t, evalErr(t, call(t, "unistr", lit(c.in))), pgerr.SyntaxError, c.msg)
	}
}

// numeric(p,s) with a negative scale or a scale above the precision, cast
// from a numeric value (PostgreSQL 15's num_typemod_test).
func TestPG15NumericTypmodCast(t *testing.T) {
	cast := func(in, typ string) (string, error) {
		ty, err := types.ParseTypeString(typ)
		if err != nil {
			t.Fatal(err)
		}
		e, err := NewCast(typed(t, in, types.TNumeric), ty, true)
		if err != nil {
			return "", err
		}
		if err := evalErr(t, e); err != nil {
			return "", err
		}
		return text(t, e), nil
	}
	for _, c := range []struct{ in, typ, want string }{
		{"123456", "numeric(3,-6)", "0"},
		{"987654321", "numeric(3,-6)", "988000000"},
		{"0.000987654", "numeric(3,6)", "0.000988"},
		{"7654.5", "numeric(3,-3)", "8000"},
	} {
		if got, err := cast(c.in, c.typ); err != nil || got != c.want {
			t.Errorf("%s::%s = %q, %v; want %q", c.in, c.typ, got, err, c.want)
		}
	}
	_, err := cast("999500000", "numeric(3,-6)")
	expectErr(t, err, pgerr.NumericValueOutOfRange, "numeric field overflow")
	if pe := pgerr.As(err); pe == nil || pe.Detail != "A field with precision 3, scale -6 must round to an absolute value less than 10^9." {
		t.Errorf("detail: %v", err)
	}
	_, err = cast("0.0009995", "numeric(3,6)")
	if pe := pgerr.As(err); pe == nil || pe.Detail != "A field with precision 3, scale 6 must round to an absolute value less than 10^-3." {
		t.Errorf("detail: %v", err)
	}
	_, err = cast("Infinity", "numeric(3,0)")
	expectErr(t, err, pgerr.NumericValueOutOfRange, "numeric field overflow")
}

func TestPG15WidthBucket(t *testing.T) {
	nu := func(s string) Expr { return typed(t, s, types.TNumeric) }
	f8 := func(s string) Expr { return typed(t, s, types.TFloat8) }
	for _, c := range []struct {
		x, lo, hi string
		n         int64
		want      string
	}{
		{"5.35", "0.024", "10.06", 5, "3"},
		{"3.0000000000000001", "1", "5", 2, "2"},
		{"-5.2", "10", "0", 5, "6"},
		{"inf", "0", "10", 5, "6"},
		{"9.99999999999999", "10", "0", 10, "1"},
		{"1.99999999999999", "0", "10", 5, "1"},
	} {
		if got := text(t, call(t, "width_bucket", nu(c.x), nu(c.lo), nu(c.hi), i4(c.n))); got != c.want {
			t.Errorf("width_bucket(%s, %s, %s, %d) = %s, want %s", c.x, c.lo, c.hi, c.n, got, c.want)
		}
	}
	for _, e := range []Expr{
		call(t, "width_bucket", nu("2.0"), nu("3.0"), nu("-inf"), i4(888)),
		call(t, "width_bucket", nu("0.0"), nu("Infinity"), nu("5"), i4(10)),
		call(t, "width_bucket", f8("0"), f8("-inf"), f8("4.0"), i4(888)),
		call(t, "width_bucket", f8("0"), f8("5"), f8("-Infinity"), i4(20)),
	} {
		expectErr(t, evalErr(t, e), pgerr.InvalidArgumentForWidthBucket, "lower and upper bounds must be finite")
	}
	expectErr(t, evalErr(t, call(t, "width_bucket", f8("NaN"), f8("3"), f8("3"), i4(1))), pgerr.InvalidArgumentForWidthBucket,
		"operand, lower bound, and upper bound cannot be NaN")
}

func TestPG15ExtractAliasesAndMakeTime(t *testing.T) {
	ts := func(s string) Expr { return typed(t, s, types.TTimestamp) }
	for _, c := range []struct {
		e    Expr
		want string
	}{
		{call(t, "date_part", lit("msec"), ts("1997-02-10 17:32:01.4")), "1400"},
		{call(t, "date_part", lit("usec"), ts("1997-02-10 17:32:01.4")), "1400000"},
		{call(t, "date_part", lit("qtr"), ts("1997-02-10")), "1"},
		{call(t, "make_time", i4(24), i4(0), typed(t, "0", types.TFloat8)), "24:00:00"},
		{call(t, "make_time", i4(23), i4(59), typed(t, "60", types.TFloat8)), "24:00:00"},
	} {
		if got := text(t, c.e); got != c.want {
			t.Errorf("%s = %q, want %q", c.e, got, c.want)
		}
	}
	e := call(t, "date_part", lit("timezone_m"), typed(t, "2020-08-11", types.TDate))
	expectErr(t, evalErr(t, e), pgerr.FeatureNotSupported, `unit "timezone_m" not supported for type date`)
	e = call(t, "make_time", i4(24), i4(0), typed(t, "2.1", types.TFloat8))
	expectErr(t, evalErr(t, e), pgerr.DatetimeFieldOverflow, "time field value out of range: 24:00:2.1")
}

func TestPG15NumericSpecials(t *testing.T) {
	nu := func(s string) Expr { return typed(t, s, types.TNumeric) }
	pow := func(x, y string) Expr {
		e, err := NewBinary("^", nu(x), nu(y))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, c := range []struct {
		e    Expr
		want string
	}{
		{pow("NaN", "0"), "1"},
		{pow("1", "NaN"), "1"},
		{pow("NaN", "2"), "NaN"},
		{call(t, "exp", nu("inf")), "Infinity"},
		{call(t, "exp", nu("-inf")), "0"},
		{call(t, "exp", nu("NaN")), "NaN"},
		{call(t, "scale", nu("NaN")), "NULL"},
		{call(t, "scale", nu("-inf")), "NULL"},
		{call(t, "min_scale", nu("inf")), "NULL"},
		{call(t, "scale", nu("1.230")), "3"},
	} {
		if got := text(t, c.e); got != c.want {
			t.Errorf("%s = %q, want %q", c.e, got, c.want)
		}
	}
}

// Casting an interval to an interval with a range or precision truncates
// the fields below the range and rounds the seconds (interval.sql, bug
// #14479); results from PostgreSQL 15.
func TestPG15IntervalTypmodCast(t *testing.T) {
	for _, c := range []struct{ in, typ, want string }{
		{"-00:00:14", "interval day to minute", "00:00:00"},
		{"1 day 02:03:04", "interval day to minute", "1 day 02:03:00"},
		{"1 year 2 mons 3 days", "interval year", "1 year"},
		{"5 mons 12:00:00", "interval month", "5 mons"},
		{"00:00:01.234567", "interval second(2)", "00:00:01.23"},
		{"-00:00:01.235", "interval second(2)", "-00:00:01.24"},
	} {
		ty, err := types.ParseTypeString(c.typ)
		if err != nil {
			t.Fatal(err)
		}
		e, err := NewCast(typed(t, c.in, types.TInterval), ty, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, e); got != c.want {
			t.Errorf("%s::%s = %q, want %q", c.in, c.typ, got, c.want)
		}
	}
}
