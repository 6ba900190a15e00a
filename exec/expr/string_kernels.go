package expr

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Vectorized kernels for the most used string functions (length, lower,
// upper): they read the string buffers directly and skip NULL rows.

// caseMap is lower() (f strings.ToLower, ASCII letters lo..hi = A..Z) or
// upper() (strings.ToUpper, a..z). An array of ASCII text without such
// letters is returned as it is; otherwise the result is written straight
// into its buffers, ASCII strings byte by byte and the others through f.
func caseMap(f func(string) string, lo, hi byte) kernel {
	return func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		in := args[0].(*array.String)
		data := in.ValueBytes() // starts at offs[0] (the array may be a slice)
		if in.Len() == n && asciiWithout(data, lo, hi) {
			in.Retain()
			return in, nil
		}
		offs := in.ValueOffsets()
		base := offs[0]
		out := make([]byte, 0, len(data))
		outOffs := make([]int32, n+1)
		for i := 0; i < n; i++ {
			if in.IsValid(i) {
				str := data[offs[i]-base : offs[i+1]-base]
				if asciiWithout(str, 0x80, 0xFF) {
					for _, c := range str {
						if c >= lo && c <= hi {
							c ^= 0x20
						}
						out = append(out, c)
					}
				} else {
					out = append(out, f(string(str))...)
				}
			}
			outOffs[i+1] = int32(len(out))
			if len(out) > math.MaxInt32/2 {
				if err := checkBuild(ctx, int64(len(out))*2); err != nil {
					return nil, err
				}
			}
		}
		if err := checkBuild(ctx, int64(len(out))); err != nil {
			return nil, err
		}
		var vb *memory.Buffer
		nulls := in.NullN()
		if nulls > 0 {
			vb = memory.NewBufferBytes(append([]byte(nil), validity(in)...))
		}
		d := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{vb, memory.NewBufferBytes(arrow.GetBytes(outOffs)), memory.NewBufferBytes(out)}, nil, nulls, 0)
		defer d.Release()
		return array.MakeFromData(d), nil
	}
}

// splitPartKernel is split_part over arrays, writing the fields straight
// into the result's buffers. Strict: callKernel passes non-NULL rows only.
func splitPartKernel(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
	strs, ok1 := args[0].(*array.String)
	delims, ok2 := args[1].(*array.String)
	if !ok1 || !ok2 {
		return nil, pgerr.Internal("split_part: arguments are not text arrays")
	}
	pos := make([]int64, n)
	readInt(args[2], pos)
	offs := make([]int32, n+1)
	var data []byte
	for i := 0; i < n; i++ {
		if pos[i] == 0 {
			return nil, errFieldZero
		}
		data = append(data, splitField(strs.Value(i), delims.Value(i), pos[i])...)
		if len(data) > math.MaxInt32 {
			return nil, checkBuild(ctx, int64(len(data)))
		}
		offs[i+1] = int32(len(data))
	}
	if err := checkBuild(ctx, int64(len(data))); err != nil {
		return nil, err
	}
	d := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.GetBytes(offs)), memory.NewBufferBytes(data)}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// replaceKernel is replace(string, from, to) over arrays, writing the
// result straight into its buffers (a string without from is copied as
// it is). Strict: callKernel passes non-NULL rows only.
func replaceKernel(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
	strs, ok1 := args[0].(*array.String)
	froms, ok2 := args[1].(*array.String)
	tos, ok3 := args[2].(*array.String)
	if !ok1 || !ok2 || !ok3 {
		return nil, pgerr.Internal("replace: arguments are not text arrays")
	}
	offs := make([]int32, n+1)
	data := make([]byte, 0, len(strs.ValueBytes()))
	for i := 0; i < n; i++ {
		s, from, to := strs.Value(i), froms.Value(i), tos.Value(i)
		start := len(data)
		if from == "" {
			data = append(data, s...)
		} else {
			if err := replacedLength(s, from, to); err != nil {
				return nil, err
			}
			for {
				j := strings.Index(s, from)
				if j < 0 {
					data = append(data, s...)
					break
				}
				data = append(append(data, s[:j]...), to...)
				s = s[j+len(from):]
			}
		}
		if sz := len(data) - start; sz > 1<<20 {
			if err := membudget.AllocRequest(int64(sz) + 4); err != nil {
				return nil, err
			}
		}
		if len(data) > math.MaxInt32 {
			return nil, checkBuild(ctx, int64(len(data)))
		}
		offs[i+1] = int32(len(data))
	}
	if err := checkBuild(ctx, int64(len(data))); err != nil {
		return nil, err
	}
	d := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.GetBytes(offs)), memory.NewBufferBytes(data)}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// asciiWithout reports whether the bytes are ASCII without any in lo..hi:
// text that lower() (A..Z) or upper() (a..z) returns unchanged. (Other
// bytes may belong to letters that change case.)
func asciiWithout(b []byte, lo, hi byte) bool {
	for _, c := range b {
		if c >= 0x80 || c >= lo && c <= hi {
			return false
		}
	}
	return true
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
		{Name: "lower", Args: []types.T{TX}, Return: TX, Strict: true, Kernel: caseMap(strings.ToLower, 'A', 'Z')},
		{Name: "upper", Args: []types.T{TX}, Return: TX, Strict: true, Kernel: caseMap(strings.ToUpper, 'a', 'z')},
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
