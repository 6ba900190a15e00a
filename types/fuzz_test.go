package types

import (
	"testing"
	"time"

	"github.com/streamsql/streamsql/pgerr"
)

var fuzzTypes = []T{TInt4, TInt8, TFloat8, TFloat4, TNumeric, TNumeric.WithTypmod(((6 << 16) | 2) + 4), TBool, TDate, TTime,
	TTimestamp, TTimestampTZ, TInterval, TJSONB, TJSON, TBytea, ArrayOf(TInt4), ArrayOf(TText), TVarchar.WithTypmod(7), TOid}

// FuzzParseText checks, for several types, that any input either fails with a
// *pgerr.Error or parses to a value whose text output reads back to itself,
// and that binary send/receive round-trips it.
func FuzzParseText(f *testing.F) {
	for _, s := range []string{"1", " -7 ", "1.5e3", "NaN", "2024-01-02 03:04:05.6+02", "1 day 02:00", "@ 1 hour ago",
		"P1Y2M", `{"a": [1, {"b": null}]}`, `\x0102`, "{1,NULL,3}", `{"a b",c}`, "04:05:06", "0044-03-15 BC", "1e-7", "t"} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, k uint8) {
		typ := fuzzTypes[int(k)%len(fuzzTypes)]
		v, err := ParseText(s, typ, nil)
		if err != nil {
			if pgerr.As(err) == nil {
				t.Fatalf("%s %q: non-pgerr error %v", typ, s, err)
			}
			return
		}
		text := FormatText(v, typ, nil)
		back, err := ParseText(text, typ, nil)
		if err != nil {
			t.Fatalf("%s %q: output %q does not read back: %v", typ, s, text, err)
		}
		if Compare(back, v, typ) != 0 || FormatText(back, typ, nil) != text {
			t.Fatalf("%s %q: %q reads back as %q", typ, s, text, FormatText(back, typ, nil))
		}
		bin, err := AppendBinary(nil, v, typ)
		if err != nil {
			t.Fatalf("%s %q: send: %v", typ, s, err)
		}
		back, err = ParseBinary(bin, typ)
		if err != nil || Compare(back, v, typ) != 0 {
			t.Fatalf("%s %q: binary round trip: %v %v", typ, s, back, err)
		}
	})
}

// TestFastISOMatchesGeneralParser checks that the fast path for the ISO form
// gives what the general date/time parser gives (a trailing space forces it).
func TestFastISOMatchesGeneralParser(t *testing.T) {
	ins := []string{"2024-01-02", "2024-02-29 23:59:59.999999", "1970-01-01 00:00:00", "0001-01-01 00:00:00.5",
		"9999-12-31T23:59:59.1", "2000-02-29 12:00:00.000001", "1969-12-31 23:59:59.123",
		"2023-10-09T17:13:20.200+00:00", "2023-09-18T14:23:10Z", "2024-01-02 03:04:05-08", "2024-01-02 03:04:05+0530",
		"2024-01-02 03:04:05.5+05:45", "2024-01-02T03:04:05z"}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultFormat
	opts.Location = ny
	for _, in := range ins {
		_, _, ok1 := fastISO(in)
		_, _, _, ok2 := fastISOZone(in)
		if !ok1 && !ok2 {
			t.Errorf("%q: not on the fast path", in)
		}
		for _, typ := range []T{TDate, TTimestamp, TTimestampTZ, TTimestamp.WithTypmod(0)} {
			if typ.Kind == TDate.Kind && len(in) > 10 {
				continue
			}
			a, err1 := ParseText(in, typ, &opts)
			b, err2 := ParseText(in+" ", typ, &opts)
			if err1 != nil || err2 != nil || Compare(a, b, typ) != 0 {
				t.Errorf("%s %q: fast %v (%v), general %v (%v)", typ, in, a, err1, b, err2)
			}
		}
	}
}
