package expr

import (
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

func TestToChar(t *testing.T) {
	ts := func(s string) Expr { return &Const{V: mustParse(t, s, types.TTimestamp), T: types.TTimestamp} }
	runSQL(t, []sqlCase{
		{"iso", fx("to_char", ts("2024-05-07 13:45:12.345"), lit("YYYY-MM-DD HH24:MI:SS.MS")), "2024-05-07 13:45:12.345"},
		{"12h", fx("to_char", ts("2024-05-07 13:45:12"), lit("DD/MM/YY HH12:MI AM")), "07/05/24 01:45 PM"},
		{"padded names", fx("to_char", ts("2024-05-07"), lit("Day, Month DD, YYYY")), "Tuesday  , May       07, 2024"},
		{"FM", fx("to_char", ts("2024-05-07"), lit("FMDay FMMonth FMDD")), "Tuesday May 7"},
		{"short names", fx("to_char", ts("2024-05-07"), lit("Dy Mon YYYY Q WW DDD")), "Tue May 2024 2 19 128"},
		{"pm lower", fx("to_char", ts("2024-05-07 01:02:03"), lit("HH:MI:SS pm")), "01:02:03 am"},
		{"iso week", fx("to_char", ts("2024-05-07"), lit("IYYY-IW-ID")), "2024-19-2"},
		{"ordinal", fx("to_char", ts("2024-03-21"), lit("FMDDth Mon")), "21st Mar"},
		{"interval", fx("to_char", typed(t, "3 days 04:05:06", types.TInterval), lit("DD HH24:MI:SS")), "03 04:05:06"},
		{"tz", fx("to_char", typed(t, "2024-05-07 13:45:12+00", types.TTimestampTZ), lit("YYYY-MM-DD HH24:MI:SS TZ")), "2024-05-07 13:45:12 UTC"},
		{"group", fx("to_char", num("1234.5"), lit("9,999.99")), " 1,234.50"},
		{"zeros", fx("to_char", num("-12.3"), lit("000.00")), "-012.30"},
		{"FM999", fx("to_char", i4(42), lit("FM999")), "42"},
		{"0.9", fx("to_char", num("0.5"), lit("0.9")), " 0.5"},
		{"G", fx("to_char", i4(1234567), lit("9G999G999")), " 1,234,567"},
		{"th", fx("to_char", i4(12), lit("99th")), " 12th"},
		{"float", fx("to_char", f8(3.14159), lit("9.99")), " 3.14"},
		{"negative", fx("to_char", i4(-5), lit("999")), "  -5"},
		{"zero", fx("to_char", i4(0), lit("999")), "   0"},
		{"overflow", fx("to_char", i4(12345), lit("999")), " ###"},
		{"FM00", fx("to_char", i4(5), lit("FM00")), "05"},
		{"FM9.99", fx("to_char", num("1.5"), lit("FM9.99")), "1.5"},
	})
}

func mustParse(t *testing.T, s string, ty types.T) types.Value {
	t.Helper()
	v, err := types.ParseText(s, ty, &types.DefaultFormat)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestToDate(t *testing.T) {
	runSQL(t, []sqlCase{
		{"iso", fx("to_date", lit("2024-05-07"), lit("YYYY-MM-DD")), "2024-05-07"},
		{"dmy", fx("to_date", lit("07/05/2024"), lit("DD/MM/YYYY")), "2024-05-07"},
		{"month name", fx("to_date", lit("May 7, 2024"), lit("Mon DD, YYYY")), "2024-05-07"},
		{"pm", fx("to_timestamp", lit("2024-05-07 01:45:12 PM"), lit("YYYY-MM-DD HH12:MI:SS AM")), "2024-05-07 13:45:12+00"},
		{"compact", fx("to_timestamp", lit("20240507 134512.5"), lit("YYYYMMDD HH24MISS.MS")), "2024-05-07 13:45:12.5+00"},
		{"doy", fx("to_date", lit("2024 128"), lit("YYYY DDD")), "2024-05-07"},
	})
	e := call(t, "to_date", lit("2024-13-01"), lit("YYYY-MM-DD"))
	_, err := evalValues(t, e, batch(t, col{types.TInt4, []types.Value{int64(1)}}))
	expectErr(t, err, pgerr.DatetimeFieldOverflow, `date/time field value out of range: "2024-13-01"`)
	e = call(t, "to_date", lit("xx-01-01"), lit("YYYY-MM-DD"))
	_, err = evalValues(t, e, batch(t, col{types.TInt4, []types.Value{int64(1)}}))
	expectErr(t, err, pgerr.InvalidDatetimeFormat, `invalid value "xx-0" for "YYYY"`)
}
