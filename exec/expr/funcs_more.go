package expr

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"

	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Less common string and binary functions: encode/decode, overlay, to_number, sha256,
// num_nulls/num_nonnulls.

// toNumber is to_number(text, fmt): the digits, sign and decimal point of
// the input are kept, group separators and other characters dropped.
func toNumber(s, f string) (types.Value, error) {
	var sb strings.Builder
	trimmed := strings.TrimSpace(s)
	neg := strings.Contains(s, "-") || (strings.HasPrefix(trimmed, "(") || strings.HasPrefix(trimmed, "<")) && strings.Contains(strings.ToUpper(f), "PR")
	// as PostgreSQL, reading stops when the format's digit positions are used up
	// (to_number('123,000', '999G') is 123)
	positions := strings.Count(f, "9") + strings.Count(f, "0")
	digits := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			if digits++; digits > positions {
				break
			}
			sb.WriteRune(r)
		case r == '.':
			sb.WriteRune(r)
		}
	}
	if sb.Len() == 0 {
		return nil, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type numeric: \" \"")
	}
	d, err := parseNumeric(sb.String())
	if err != nil {
		return nil, err
	}
	if neg {
		d.Negative = !d.IsZero()
	}
	return d, nil
}

func init() {
	TX, BA, I4 := types.TText, types.TBytea, types.TInt4
	s := func(a []types.Value, i int) string { return a[i].(string) }
	define(
		rowFn("encode", TX, []types.T{BA, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			b := a[0].([]byte)
			switch strings.ToLower(s(a, 1)) {
			case "hex":
				return hex.EncodeToString(b), nil
			case "base64":
				return base64Lines(b), nil
			case "escape":
				var sb strings.Builder
				for _, c := range b {
					switch {
					case c == '\\':
						sb.WriteString(`\\`)
					case c == 0 || c >= 0x80: // as esc_encode: other bytes as they are
						sb.WriteString(`\` + string([]byte{'0' + c>>6, '0' + c>>3&7, '0' + c&7}))
					default:
						sb.WriteByte(c)
					}
				}
				return sb.String(), nil
			}
			return nil, pgerr.New(pgerr.InvalidParameterValue, "unrecognized encoding: \"%s\"", s(a, 1))
		}),
		rowFn("decode", BA, []types.T{TX, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			switch strings.ToLower(s(a, 1)) {
			case "hex":
				b, err := hex.DecodeString(s(a, 0))
				if err != nil {
					return nil, pgerr.New(pgerr.InvalidParameterValue, "invalid hexadecimal data: odd number of digits")
				}
				return b, nil
			case "base64":
				b, err := base64.StdEncoding.DecodeString(s(a, 0))
				if err != nil {
					return nil, pgerr.New(pgerr.InvalidParameterValue, "invalid base64 end sequence").
						WithHint("Input data is missing padding, is truncated, or is otherwise corrupted.")
				}
				return b, nil
			case "escape":
				return types.ParseText(s(a, 0), types.TBytea, nil)
			}
			return nil, pgerr.New(pgerr.InvalidParameterValue, "unrecognized encoding: \"%s\"", s(a, 1))
		}),
		rowFn("sha256", BA, []types.T{BA}, func(_ *Context, a []types.Value) (types.Value, error) {
			h := sha256.Sum256(a[0].([]byte))
			return h[:], nil
		}),
		rowFn("to_number", types.TNumeric, []types.T{TX, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			return toNumber(s(a, 0), s(a, 1))
		}),
	)
	overlay := func(_ *Context, a []types.Value) (types.Value, error) {
		if err := membudget.AllocRequest(int64(len(s(a, 0))+len(s(a, 1))) + 4); err != nil {
			return nil, err
		}
		src, repl := []rune(s(a, 0)), s(a, 1)
		start := a[2].(int64)
		n := int64(len([]rune(repl)))
		if len(a) > 3 {
			n = a[3].(int64)
		}
		if start < 1 {
			return nil, pgerr.New("22011", "negative substring length not allowed")
		}
		head := string(src[:min(start-1, int64(len(src)))])
		tailFrom := min(max(start-1+n, 0), int64(len(src)))
		return head + repl + string(src[tailFrom:]), nil
	}
	define(
		rowFn("overlay", TX, []types.T{TX, TX, I4}, overlay),
		rowFn("overlay", TX, []types.T{TX, TX, I4, I4}, overlay),
	)
	for _, name := range []string{"num_nulls", "num_nonnulls"} {
		name := name
		registerBuilder(name, func(args []Expr) (Expr, error) {
			nulls := name == "num_nulls"
			return polyCall(name, args, I4, false, func(_ *Context, a []types.Value) (types.Value, error) {
				c := int64(0)
				for _, v := range a {
					if (v == nil) == nulls {
						c++
					}
				}
				return c, nil
			}), nil
		})
	}
}

// base64Lines is PostgreSQL's base64 encoding: a newline after every 76
// characters written (also after the last line when it is full).
func base64Lines(b []byte) string {
	enc := base64.StdEncoding.EncodeToString(b)
	if len(enc) < 76 {
		return enc
	}
	var sb strings.Builder
	for len(enc) >= 76 {
		sb.WriteString(enc[:76])
		sb.WriteByte('\n')
		enc = enc[76:]
	}
	sb.WriteString(enc)
	return sb.String()
}
