package expr

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"math/bits"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// The bytea overloads of the string functions (md5, substr/substring,
// btrim/ltrim/rtrim, overlay), the SHA-2 digests, and the bit and byte
// accessors (get_bit, set_bit, get_byte, set_byte, bit_count), as
// PostgreSQL defines them: positions count bytes; bits are numbered from
// the low bit of the first byte. Pure functions, safe for concurrent use;
// setters return a copy.

// substrBytes is substr(bytea, start [, count]) with PostgreSQL's rules
// for a start before the first byte.
func substrBytes(b []byte, start, count int64, hasCount bool) ([]byte, error) {
	if hasCount && count < 0 {
		return nil, pgerr.New("22011", "negative substring length not allowed")
	}
	end := int64(len(b)) + 1
	if hasCount && start+count < end && start+count >= start {
		end = start + count
	}
	start = max(start, 1)
	if end <= start || start > int64(len(b)) {
		return []byte{}, nil
	}
	return append([]byte{}, b[start-1:end-1]...), nil
}

// trimBytes removes the bytes in set from b's start and/or end.
func trimBytes(b, set []byte, left, right bool) []byte {
	i, j := 0, len(b)
	for left && i < j && bytes.IndexByte(set, b[i]) >= 0 {
		i++
	}
	for right && j > i && bytes.IndexByte(set, b[j-1]) >= 0 {
		j--
	}
	return append([]byte{}, b[i:j]...)
}

func indexOutOfRange(n, hi int64) error {
	return pgerr.New(pgerr.ArraySubscriptError, "index %d out of valid range, 0..%d", n, hi)
}

func init() {
	BA, TX, I4, I8 := types.TBytea, types.TText, types.TInt4, types.TInt8
	b := func(a []types.Value, i int) []byte { return a[i].([]byte) }
	n := func(a []types.Value, i int) int64 { return a[i].(int64) }
	digest := func(name string, sum func([]byte) []byte) *Func {
		return rowFn(name, BA, []types.T{BA}, func(_ *Context, a []types.Value) (types.Value, error) { return sum(b(a, 0)), nil })
	}
	define(
		rowFn("md5", TX, []types.T{BA}, func(_ *Context, a []types.Value) (types.Value, error) {
			h := md5.Sum(b(a, 0))
			return hex.EncodeToString(h[:]), nil
		}),
		digest("sha224", func(x []byte) []byte { h := sha256.Sum224(x); return h[:] }),
		digest("sha384", func(x []byte) []byte { h := sha512.Sum384(x); return h[:] }),
		digest("sha512", func(x []byte) []byte { h := sha512.Sum512(x); return h[:] }),
		rowFn("btrim", BA, []types.T{BA, BA}, func(_ *Context, a []types.Value) (types.Value, error) {
			return trimBytes(b(a, 0), b(a, 1), true, true), nil
		}),
		rowFn("ltrim", BA, []types.T{BA, BA}, func(_ *Context, a []types.Value) (types.Value, error) {
			return trimBytes(b(a, 0), b(a, 1), true, false), nil
		}),
		rowFn("rtrim", BA, []types.T{BA, BA}, func(_ *Context, a []types.Value) (types.Value, error) {
			return trimBytes(b(a, 0), b(a, 1), false, true), nil
		}),
		rowFn("bit_count", I8, []types.T{BA}, func(_ *Context, a []types.Value) (types.Value, error) {
			c := 0
			for _, x := range b(a, 0) {
				c += bits.OnesCount8(x)
			}
			return int64(c), nil
		}),
		rowFn("get_bit", I4, []types.T{BA, I8}, func(_ *Context, a []types.Value) (types.Value, error) {
			x, i := b(a, 0), n(a, 1)
			if i < 0 || i >= int64(len(x))*8 {
				return nil, indexOutOfRange(i, int64(len(x))*8-1)
			}
			return int64(x[i/8]>>(i%8)) & 1, nil
		}),
		rowFn("set_bit", BA, []types.T{BA, I8, I4}, func(_ *Context, a []types.Value) (types.Value, error) {
			x, i, v := b(a, 0), n(a, 1), n(a, 2)
			if i < 0 || i >= int64(len(x))*8 {
				return nil, indexOutOfRange(i, int64(len(x))*8-1)
			}
			if v != 0 && v != 1 {
				return nil, pgerr.New(pgerr.InvalidParameterValue, "new bit must be 0 or 1")
			}
			out := append([]byte{}, x...)
			out[i/8] = out[i/8]&^(1<<(i%8)) | byte(v<<(i%8))
			return out, nil
		}),
		rowFn("get_byte", I4, []types.T{BA, I4}, func(_ *Context, a []types.Value) (types.Value, error) {
			x, i := b(a, 0), n(a, 1)
			if i < 0 || i >= int64(len(x)) {
				return nil, indexOutOfRange(i, int64(len(x))-1)
			}
			return int64(x[i]), nil
		}),
		rowFn("set_byte", BA, []types.T{BA, I4, I4}, func(_ *Context, a []types.Value) (types.Value, error) {
			x, i := b(a, 0), n(a, 1)
			if i < 0 || i >= int64(len(x)) {
				return nil, indexOutOfRange(i, int64(len(x))-1)
			}
			out := append([]byte{}, x...)
			out[i] = byte(n(a, 2))
			return out, nil
		}),
	)
	for _, name := range []string{"substr", "substring"} {
		define(
			rowFn(name, BA, []types.T{BA, I4}, func(_ *Context, a []types.Value) (types.Value, error) {
				return substrBytes(b(a, 0), n(a, 1), 0, false)
			}),
			rowFn(name, BA, []types.T{BA, I4, I4}, func(_ *Context, a []types.Value) (types.Value, error) {
				return substrBytes(b(a, 0), n(a, 1), n(a, 2), true)
			}),
		)
	}
	overlay := func(_ *Context, a []types.Value) (types.Value, error) {
		src, repl, start := b(a, 0), b(a, 1), n(a, 2)
		count := int64(len(repl))
		if len(a) > 3 {
			count = n(a, 3)
		}
		if start < 1 {
			return nil, pgerr.New("22011", "negative substring length not allowed")
		}
		head := src[:min(start-1, int64(len(src)))]
		tail := src[min(max(start-1+count, 0), int64(len(src))):]
		out := append(append(append([]byte{}, head...), repl...), tail...)
		return out, nil
	}
	define(
		rowFn("overlay", BA, []types.T{BA, BA, I4}, overlay),
		rowFn("overlay", BA, []types.T{BA, BA, I4, I4}, overlay),
	)
}
