package slt

import (
	"reflect"
	"testing"
)

// The expected strings are what the reference harness (C printf with %d of
// an int, %.3f of a double) prints for these values; the reals were checked
// with printf(1).
func TestRenderClassic(t *testing.T) {
	cases := []struct {
		v    Value
		typ  byte
		want string
	}{
		{Value{Text: "42"}, 'I', "42"},
		{Value{Text: "-7"}, 'I', "-7"},
		{Value{Text: "12.7"}, 'I', "12"},
		{Value{Text: "-3.9"}, 'I', "-3"},
		{Value{Text: "t"}, 'I', "1"},
		{Value{Null: true}, 'I', "NULL"},
		{Value{Text: "1"}, 'R', "1.000"},
		{Value{Text: "2.0005"}, 'R', "2.001"}, // as printf(1) prints it
		{Value{Text: "-0.0001"}, 'R', "-0.000"},
		{Value{Text: "33.3333333333333333"}, 'R', "33.333"},
		{Value{Null: true}, 'R', "NULL"},
		{Value{Text: ""}, 'T', "(empty)"},
		{Value{Text: "a\tb"}, 'T', "a@b"},
		{Value{Text: "é"}, 'T', "@@"},
		{Value{Text: "hello world"}, 'T', "hello world"},
		{Value{Null: true}, 'T', "NULL"},
	}
	for _, c := range cases {
		if got := renderClassic(c.v, c.typ); got != c.want {
			t.Errorf("renderClassic(%+v, %c) = %q, want %q", c.v, c.typ, got, c.want)
		}
	}
}

func TestRenderRS(t *testing.T) {
	for v, want := range map[Value]string{
		{Text: "1.5"}:                 "1.5",
		{Text: ""}:                    "(empty)",
		{Null: true}:                  "NULL",
		{Text: "2024-01-01 00:00:00"}: "2024-01-01 00:00:00",
	} {
		if got := renderRS(v); got != want {
			t.Errorf("renderRS(%+v) = %q, want %q", v, got, want)
		}
	}
}

// Hashes computed independently with: printf '1\n2\n' | md5sum
func TestHashLine(t *testing.T) {
	if got, want := hashLine([]string{"1", "2"}), "2 values hashing to 6ddb4095eb719e2a9f0a3f95677d24e0"; got != want {
		t.Errorf("hashLine = %q, want %q", got, want)
	}
	if got, want := hashLine([]string{"a", "(empty)", "NULL"}), "3 values hashing to 4e209d69b352a896e57cd42a6084990a"; got != want {
		t.Errorf("hashLine = %q, want %q", got, want)
	}
}

func TestSortRendered(t *testing.T) {
	rows := [][]string{{"9", "b"}, {"10", "a"}, {"9", "a"}}
	got := sortRendered(RowSort, rows)
	// strcmp order: "10" < "9".
	want := [][]string{{"10", "a"}, {"9", "a"}, {"9", "b"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rowsort = %v, want %v", got, want)
	}
	got = sortRendered(ValueSort, [][]string{{"b", "a"}, {"c", "NULL"}})
	want = [][]string{{"NULL"}, {"a"}, {"b"}, {"c"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("valuesort = %v, want %v", got, want)
	}
}

func TestCompare(t *testing.T) {
	rows := [][]string{{"1", "x y"}, {"2", "NULL"}}
	cases := []struct {
		d        Dialect
		mode     SortMode
		expected []string
		ok       bool
	}{
		{Classic, NoSort, []string{"1", "x y", "2", "NULL"}, true},
		{Classic, NoSort, []string{"1", "x y", "2", "3"}, false},
		{Classic, NoSort, []string{"4 values hashing to " + "2a7a4b8b1d8f5e4b1a5e5b7e1f0f6d3c"}, false},
		{RS, NoSort, []string{"1   x y", "2 NULL"}, true},
		{RS, NoSort, []string{"2 NULL", "1 x y"}, false},
		{RS, RowSort, []string{"2 NULL", "1 x y"}, true},
		{RS, NoSort, []string{"1 x y"}, false},
		{RS, NoSort, []string{"1 x y", "2 NULL", "3 z"}, false},
	}
	for _, c := range cases {
		msg := compare(c.d, c.mode, c.expected, rows)
		if (msg == "") != c.ok {
			t.Errorf("compare(%v, %v, %q) = %q, want ok=%v", c.d, c.mode, c.expected, msg, c.ok)
		}
	}
	h := hashLine([]string{"1", "x y", "2", "NULL"})
	if msg := compare(Classic, NoSort, []string{h}, rows); msg != "" {
		t.Errorf("compare with the right hash: %q", msg)
	}
}
