package expr

import (
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// Vectorized kernels for the most used string functions (length, lower,
// upper): they read the string buffers directly and skip NULL rows.

// stringMap applies f to every non-NULL string of args[0]. When keeps is
// not nil and reports that f leaves every string of the array as it is
// (lower() of text already in lower case), the input array is the result.
func stringMap(f func(string) string, keeps func([]byte) bool) kernel {
	return func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		in := args[0].(*array.String)
		if keeps != nil && in.Len() == n && keeps(in.ValueBytes()) {
			in.Retain()
			return in, nil
		}
		b := array.NewStringBuilder(ctx.Allocator())
		defer b.Release()
		b.Reserve(n)
		b.ReserveData(len(in.ValueBytes()))
		for i := 0; i < n; i++ {
			if in.IsNull(i) {
				b.AppendNull()
				continue
			}
			b.Append(f(in.Value(i)))
		}
		return b.NewArray(), nil
	}
}

// asciiWithout returns a test that the bytes are ASCII without any in
// lo..hi: text that lower() (A..Z) or upper() (a..z) returns unchanged.
// (Other bytes may belong to letters that change case.)
func asciiWithout(lo, hi byte) func([]byte) bool {
	return func(b []byte) bool {
		for _, c := range b {
			if c >= 0x80 || c >= lo && c <= hi {
				return false
			}
		}
		return true
	}
}

// stringLength counts characters (bytes when octets) of every string.
func stringLength(octets, trimSpaces bool) kernel {
	return func(_ *Context, args []arrow.Array, n int) (arrow.Array, error) {
		in := args[0].(*array.String)
		offs := in.ValueOffsets()
		data := in.ValueBytes() // starts at offs[0] (the array may be a slice)
		out := make([]int32, n)
		for i := range out {
			s := data[offs[i]-offs[0] : offs[i+1]-offs[0]]
			if trimSpaces {
				for len(s) > 0 && s[len(s)-1] == ' ' {
					s = s[:len(s)-1]
				}
			}
			if octets {
				out[i] = int32(len(s))
			} else {
				out[i] = int32(utf8.RuneCount(s))
			}
		}
		return makePrim(arrow.PrimitiveTypes.Int32, out, validity(args[0])), nil
	}
}

func init() {
	TX, BP, I4 := types.TText, types.TBpchar, types.TInt4
	fast := []*Func{
		{Name: "lower", Args: []types.T{TX}, Return: TX, Strict: true, Kernel: stringMap(strings.ToLower, asciiWithout('A', 'Z'))},
		{Name: "upper", Args: []types.T{TX}, Return: TX, Strict: true, Kernel: stringMap(strings.ToUpper, asciiWithout('a', 'z'))},
		{Name: "octet_length", Args: []types.T{TX}, Return: I4, Strict: true, Kernel: stringLength(true, false)},
	}
	for _, name := range []string{"length", "char_length", "character_length"} {
		fast = append(fast,
			&Func{Name: name, Args: []types.T{TX}, Return: I4, Strict: true, Kernel: stringLength(false, false)},
			&Func{Name: name, Args: []types.T{BP}, Return: I4, Strict: true, Kernel: stringLength(false, true)})
	}
	for _, f := range fast {
		f.nullSafe = true
		replaceOverload(f)
	}
}
