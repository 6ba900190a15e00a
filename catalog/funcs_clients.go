package catalog

import (
	"strings"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// parse_ident (Grafana's column look-up calls it) and what psql's less common describe
// commands call: getdatabaseencoding, pg_char_to_encoding,
// pg_operator_is_visible and the like, pg_describe_object
// (NULL: there are no objects it could describe), pg_tablespace_size.

func init() {
	textArr := types.ArrayOf(types.TText)
	reg := func(args []types.T, fn func(ctx *expr.Context, a []types.Value) (types.Value, error)) {
		expr.Register(&expr.Func{Name: "parse_ident", Args: args, Return: textArr, Strict: true, Kernel: expr.RowKernel(textArr, args, fn)})
	}
	reg([]types.T{types.TText}, func(_ *expr.Context, a []types.Value) (types.Value, error) {
		return parseIdent(a[0].(string), true)
	})
	reg([]types.T{types.TText, types.TBool}, func(_ *expr.Context, a []types.Value) (types.Value, error) {
		return parseIdent(a[0].(string), a[1].(bool))
	})
	yes := func(*expr.Context, []types.Value) (types.Value, error) { return true, nil }
	fn := func(name string, ret types.T, args []types.T, f func(*expr.Context, []types.Value) (types.Value, error)) {
		expr.Register(&expr.Func{Name: name, Args: args, Return: ret, Strict: true, Kernel: expr.RowKernel(ret, args, f)})
	}
	fn("getdatabaseencoding", types.TName, nil, func(*expr.Context, []types.Value) (types.Value, error) { return "UTF8", nil })
	fn("pg_char_to_encoding", types.TInt4, []types.T{types.TName}, func(_ *expr.Context, a []types.Value) (types.Value, error) {
		switch strings.ToUpper(a[0].(string)) {
		case "UTF8", "UTF-8", "UNICODE":
			return int64(6), nil
		case "SQL_ASCII":
			return int64(0), nil
		}
		return int64(-1), nil
	})
	for _, kind := range []string{"operator", "statistics_obj", "conversion", "collation", "opclass", "opfamily",
		"ts_config", "ts_dict", "ts_parser", "ts_template"} {
		fn("pg_"+kind+"_is_visible", types.TBool, []types.T{types.TOid}, yes)
	}
	fn("pg_describe_object", types.TText, []types.T{types.TOid, types.TOid, types.TInt4},
		func(*expr.Context, []types.Value) (types.Value, error) { return nil, nil })
	for _, t := range []types.T{types.TOid, types.TName} {
		fn("pg_tablespace_size", types.TInt8, []types.T{t}, func(*expr.Context, []types.Value) (types.Value, error) { return int64(0), nil })
	}
}

// parseIdent splits a qualified identifier as PostgreSQL's parse_ident
// does: quoted parts keep their case ("" is a quote), others are folded to
// lower case; with strict, nothing may follow the last part.
func parseIdent(s string, strict bool) (types.Value, error) {
	bad := func(detail string) error {
		e := pgerr.New(pgerr.InvalidParameterValue, "string is not a valid identifier: \"%s\"", s)
		if detail != "" {
			e = e.WithDetail("%s", detail)
		}
		return e
	}
	var out []types.Value
	i := 0
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
	}
	skipSpace()
	for {
		var part string
		switch {
		case i < len(s) && s[i] == '"':
			var b strings.Builder
			i++
			for {
				k := strings.IndexByte(s[i:], '"')
				if k < 0 {
					return nil, bad("String has unclosed double quotes.")
				}
				b.WriteString(s[i : i+k])
				i += k + 1
				if i < len(s) && s[i] == '"' {
					b.WriteByte('"')
					i++
					continue
				}
				break
			}
			if b.Len() == 0 {
				return nil, bad("Quoted identifier must not be empty.")
			}
			part = b.String()
		default:
			start := i
			for i < len(s) && (isIdentByte(s[i]) || i > start && s[i] >= '0' && s[i] <= '9' || s[i] == '$' && i > start) {
				i++
			}
			if i == start {
				switch {
				case len(out) > 0:
					return nil, bad("No valid identifier after \".\".")
				case i < len(s) && s[i] == '.':
					return nil, bad("No valid identifier before \".\".")
				}
				return nil, bad("")
			}
			part = strings.ToLower(s[start:i])
		}
		out = append(out, part)
		skipSpace()
		if i < len(s) && s[i] == '.' {
			i++
			skipSpace()
			continue
		}
		break
	}
	if strict && i < len(s) {
		return nil, bad("")
	}
	return out, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
