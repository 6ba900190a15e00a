package types

import (
	"testing"

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
