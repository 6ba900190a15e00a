package expr

import (
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

func TestDatetimeArithmetic(t *testing.T) {
	D, TS, IV := types.TDate, types.TTimestamp, types.TInterval
	bin := func(op string, l, r func(t *testing.T) Expr) func(t *testing.T) Expr {
		return func(t *testing.T) Expr { return mustBinary(t, op, l(t), r(t)) }
	}
	v := func(s string, ty types.T) func(t *testing.T) Expr {
		return func(t *testing.T) Expr { return typed(t, s, ty) }
	}
	n := func(x int64) func(t *testing.T) Expr { return func(*testing.T) Expr { return i4(x) } }
	f := func(x float64) func(t *testing.T) Expr {
		return func(*testing.T) Expr { return &Const{V: x, T: types.TNumeric} }
	}
	_ = f
	runSQL(t, []sqlCase{
		{"date+int", bin("+", v("2024-01-31", D), n(1)), "2024-02-01"},
		{"date-date", bin("-", v("2024-03-01", D), v("2024-01-01", D)), "60"},
		{"date+interval", bin("+", v("2024-01-31", D), v("1 month", IV)), "2024-02-29 00:00:00"},
		{"ts+interval", bin("+", v("2024-01-31 10:00", TS), v("1 month 1 day 1 hour", IV)), "2024-03-01 11:00:00"},
		{"ts-ts", bin("-", v("2024-03-05 14:07:09", TS), v("2024-01-01 00:00", TS)), "64 days 14:07:09"},
		{"interval*float", bin("*", v("1 day 2 hours", IV), func(t *testing.T) Expr { return typed(t, "2.5", types.TFloat8) }), "2 days 17:00:00"},
		{"interval/int", bin("/", v("1 month", IV), n(3)), "10 days"},
		{"-interval", func(t *testing.T) Expr {
			e, err := NewUnary("-", typed(t, "1 day", IV))
			if err != nil {
				t.Fatal(err)
			}
			return e
		}, "-1 days"},
	})
}

func TestDatetimeFunctions(t *testing.T) {
	TS, IV, TZ, D := types.TTimestamp, types.TInterval, types.TTimestampTZ, types.TDate
	c := func(name string, args ...func(t *testing.T) Expr) func(t *testing.T) Expr {
		return func(t *testing.T) Expr {
			es := make([]Expr, len(args))
			for i, a := range args {
				es[i] = a(t)
			}
			return call(t, name, es...)
		}
	}
	v := func(s string, ty types.T) func(t *testing.T) Expr {
		return func(t *testing.T) Expr { return typed(t, s, ty) }
	}
	l := func(s string) func(t *testing.T) Expr { return func(*testing.T) Expr { return lit(s) } }
	n := func(x int64) func(t *testing.T) Expr { return func(*testing.T) Expr { return i4(x) } }
	runSQL(t, []sqlCase{
		{"trunc month", c("date_trunc", l("month"), v("2024-03-05 14:07:09", TS)), "2024-03-01 00:00:00"},
		{"trunc week", c("date_trunc", l("week"), v("2024-03-05 14:07:09", TS)), "2024-03-04 00:00:00"},
		{"trunc quarter", c("date_trunc", l("quarter"), v("2024-05-05 14:07:09", TS)), "2024-04-01 00:00:00"},
		{"trunc interval", c("date_trunc", l("hour"), v("1 day 02:34:56", IV)), "1 day 02:00:00"},
		{"extract year date", c("extract", l("year"), v("2024-03-05", D)), "2024"},
		{"extract second", c("extract", l("second"), v("2024-03-05 14:07:09.5", TS)), "9.500000"},
		{"date_part second", c("date_part", l("second"), v("2024-03-05 14:07:09.5", TS)), "9.5"},
		{"epoch interval", c("extract", l("epoch"), v("1 year 2 months 3 days 04:05:06", IV)), "37015506.000000"},
		{"doy", c("extract", l("doy"), v("2024-03-05", TS)), "65"},
		{"julian", c("extract", l("julian"), v("2024-03-05 12:00", TS)), "2460375.50000000000000000000"},
		{"date_bin", c("date_bin", v("15 minutes", IV), v("2024-03-05 14:07:09", TS), v("2001-01-01", TS)), "2024-03-05 14:00:00"},
		{"age", c("age", v("2024-03-05", TS), v("2023-01-31 10:00", TS)), "1 year 1 mon 4 days 14:00:00"},
		{"age borrows from the earlier month", c("age", v("2024-05-17", TS), v("2020-02-29", TS)), "4 years 2 mons 17 days"},
		{"age negative", c("age", v("2024-01-01", TS), v("2024-03-05", TS)), "-2 mons -4 days"},
		{"justify_interval", c("justify_interval", v("1 mon -1 hour", IV)), "29 days 23:00:00"},
		{"make_date", c("make_date", n(2024), n(2), n(29)), "2024-02-29"},
		{"make_interval", c("make_interval", n(1), n(2), n(0), n(3)), "1 year 2 mons 3 days"},
		{"at time zone", c("timezone", l("America/New_York"), v("2024-03-05 12:00+00", TZ)), "2024-03-05 07:00:00"},
		{"at time zone ts", c("timezone", l("Europe/Paris"), v("2024-03-05 12:00", TS)), "2024-03-05 11:00:00+00"},
		{"posix offset", c("timezone", l("+05"), v("2024-01-01 00:00+00", TZ)), "2023-12-31 19:00:00"},
		{"now", c("now"), "2024-03-05 10:30:00+00"},
		{"current_date", c("current_date"), "2024-03-05"},
	})
	_, err := NewCall("date_trunc", []Expr{lit("fortnight"), typed(t, "2024-03-05", TS)})
	if err != nil {
		t.Fatal(err)
	}
	e := call(t, "date_trunc", lit("fortnight"), typed(t, "2024-03-05", TS))
	_, err = evalValues(t, e, batch(t, col{types.TInt4, []types.Value{int64(1)}}))
	expectErr(t, err, pgerr.InvalidParameterValue, `unit "fortnight" not recognized for type timestamp without time zone`)
}

func TestTimestampIntervalColumns(t *testing.T) {
	ts := func(s string) types.Value { return mustParse(t, s, types.TTimestamp) }
	iv := func(s string) types.Value { return mustParse(t, s, types.TInterval) }
	b := batch(t,
		col{types.TTimestamp, []types.Value{ts("2024-01-31 10:00"), nil, ts("2024-03-05 00:00")}},
		col{types.TInterval, []types.Value{iv("1 month 1 day 1 hour"), iv("1 hour"), iv("-90 minutes")}})
	e := mustBinary(t, "+", ref(0, types.TTimestamp), ref(1, types.TInterval))
	expectValues(t, e, b, ts("2024-03-01 11:00"), nil, ts("2024-03-04 22:30"))
	e = mustBinary(t, "-", ref(0, types.TTimestamp), ref(1, types.TInterval))
	expectValues(t, e, b, ts("2023-12-30 09:00"), nil, ts("2024-03-05 01:30"))
	e = mustBinary(t, "+", ref(1, types.TInterval), ref(0, types.TTimestamp))
	expectValues(t, e, b, ts("2024-03-01 11:00"), nil, ts("2024-03-04 22:30"))
}
