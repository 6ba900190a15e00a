package types

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// sampleValues gives, per type, values parsed from PostgreSQL text (nil = NULL).
func sampleValues(t *testing.T) map[string][]Value {
	t.Helper()
	specs := map[string][]string{
		"bool":          {"t", "f"},
		"int2":          {"-32768", "7"},
		"int4":          {"2147483647", "-1"},
		"int8":          {"-9223372036854775808", "0"},
		"float4":        {"1.5", "NaN", "-Infinity"},
		"float8":        {"0.1", "1e300", "NaN"},
		"numeric":       {"1.50", "NaN", "-12345678901234567890.000001", "Infinity"},
		"text":          {"héllo", ""},
		"varchar(5)":    {"ab"},
		"char(3)":       {"a"},
		"name":          {"pg_class"},
		"\"char\"":      {"x"},
		"bytea":         {`\x00ff`, `\x`},
		"date":          {"2024-01-02", "0044-03-15 BC", "infinity"},
		"time":          {"04:05:06.789", "24:00:00"},
		"timestamp":     {"2024-01-02 03:04:05.123456", "-infinity"},
		"timestamptz":   {"2024-01-02 03:04:05+02"},
		"interval":      {"1 year 2 mons -3 days 04:05:06.7", "-00:00:00.000001"},
		"json":          {`{"b":1, "a":[2]}`},
		"jsonb":         {`{"b":1, "a":[2]}`},
		"oid":           {"4294967295", "0"},
		"int4[]":        {"{1,NULL,3}", "{}"},
		"text[]":        {`{"a b",NULL,""}`},
		"numeric[]":     {"{1.5,NaN}"},
		"interval[]":    {`{"1 day"}`},
		"timestamptz[]": {`{"2024-01-02 03:04:05+00",NULL}`},
	}
	out := map[string][]Value{}
	for spec, ins := range specs {
		typ, err := typeFromSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		vals := []Value{nil}
		for _, in := range ins {
			v, err := ParseText(in, typ, nil)
			if err != nil {
				t.Fatalf("%s %q: %v", spec, in, err)
			}
			vals = append(vals, v)
		}
		out[spec] = append(vals, nil)
	}
	return out
}

// TestArrowRoundTrip stores values of every type in Arrow (MakeArray,
// AppendValue) and reads them back (ValueAt), NULLs included.
func TestArrowRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	for spec, vals := range sampleValues(t) {
		typ, _ := typeFromSpec(spec)
		arr, err := MakeArray(mem, typ, vals)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if !arrowTypeEqual(arr.DataType().ID(), typ) {
			t.Errorf("%s: array type %s, want %s", spec, arr.DataType(), typ.ArrowType())
		}
		if arr.Len() != len(vals) {
			t.Fatalf("%s: len %d, want %d", spec, arr.Len(), len(vals))
		}
		for i, want := range vals {
			got := ValueAt(arr, i, typ)
			if (got == nil) != (want == nil) {
				t.Errorf("%s[%d]: got %v, want %v", spec, i, got, want)
				continue
			}
			if want != nil && (Compare(got, want, typ) != 0 || FormatText(got, typ, nil) != FormatText(want, typ, nil)) {
				t.Errorf("%s[%d]: got %s, want %s", spec, i, FormatText(got, typ, nil), FormatText(want, typ, nil))
			}
		}
		arr.Release()
	}
	mem.AssertSize(t, 0)
}

func arrowTypeEqual(id interface{ String() string }, typ T) bool {
	return id.String() == typ.ArrowType().ID().String()
}

// TestConstArray checks n copies of a constant, and all-NULL constants.
func TestConstArray(t *testing.T) {
	mem := memory.DefaultAllocator
	for spec, vals := range sampleValues(t) {
		typ, _ := typeFromSpec(spec)
		for _, v := range vals {
			arr, err := ConstArray(mem, typ, v, 3)
			if err != nil {
				t.Fatalf("%s: %v", spec, err)
			}
			if arr.Len() != 3 {
				t.Fatalf("%s: len %d", spec, arr.Len())
			}
			for i := 0; i < 3; i++ {
				got := ValueAt(arr, i, typ)
				if v == nil {
					if got != nil || !arr.IsNull(i) {
						t.Errorf("%s: want NULL, got %v", spec, got)
					}
					continue
				}
				if got == nil || Compare(got, v, typ) != 0 {
					t.Errorf("%s[%d]: got %v, want %v", spec, i, got, v)
				}
			}
		}
	}
	arr, err := ConstArray(mem, TInt8, int64(5), 0)
	if err != nil || arr.Len() != 0 {
		t.Fatalf("empty const: %v %v", arr, err)
	}
}

// TestAppendValueRejectsWrongForm checks that a value of the wrong Go form
// is an error, not a panic or a silent wrong value.
func TestAppendValueRejectsWrongForm(t *testing.T) {
	mem := memory.DefaultAllocator
	cases := []struct {
		typ T
		v   Value
	}{
		{TInt4, "1"}, {TText, int64(1)}, {TDate, int64(1)}, {TBool, 1}, {TFloat8, int64(1)},
		{TInterval, int64(1)}, {ArrayOf(TInt4), int64(1)}, {ArrayOf(TInt4), []Value{"x"}}, {TNumeric, "abc"},
		{TTimestamp, DateValue(1)}, {TBytea, "x"},
	}
	for _, c := range cases {
		b := NewBuilder(mem, c.typ)
		if err := AppendValue(b, c.v, c.typ); err == nil {
			t.Errorf("AppendValue(%T %v as %s) succeeded", c.v, c.v, c.typ)
		}
		b.Release()
	}
	if _, err := MakeArray(mem, ArrayOf(TInt4), []Value{[]Value{[]Value{int64(1)}}}); err == nil {
		t.Errorf("nested array stored without error")
	}
}

// TestAppendValueConveniences checks the accepted alternative Go forms.
func TestAppendValueConveniences(t *testing.T) {
	mem := memory.DefaultAllocator
	arr, err := MakeArray(mem, TInt4, []Value{1, int32(2), int64(3)})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{1, 2, 3} {
		if got := ValueAt(arr, i, TInt4); got != want {
			t.Errorf("row %d: %v", i, got)
		}
	}
	arr, err = MakeArray(mem, TNumeric, []Value{"1.50", int64(7)})
	if err != nil {
		t.Fatal(err)
	}
	if got := FormatText(ValueAt(arr, 0, TNumeric), TNumeric, nil); got != "1.50" {
		t.Errorf("numeric from text: %s", got)
	}
	if got := FormatText(ValueAt(arr, 1, TNumeric), TNumeric, nil); got != "7" {
		t.Errorf("numeric from int64: %s", got)
	}
}

// TestConcurrentUse runs parsing, formatting, comparison and Arrow access
// from several goroutines at once (run with -race): the package keeps no
// mutable shared state.
func TestConcurrentUse(t *testing.T) {
	samples := sampleValues(t)
	done := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			for spec, vals := range samples {
				typ, _ := typeFromSpec(spec)
				arr, err := MakeArray(memory.DefaultAllocator, typ, vals)
				if err != nil {
					done <- err
					return
				}
				for i, v := range vals {
					if v == nil {
						continue
					}
					text := FormatText(v, typ, nil)
					back, err := ParseText(text, typ, nil)
					if err != nil {
						done <- err
						return
					}
					if Compare(back, ValueAt(arr, i, typ), typ) != 0 {
						done <- fmt.Errorf("%s: %s changed", spec, text)
						return
					}
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
