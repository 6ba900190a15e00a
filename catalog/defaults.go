package catalog

import (
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/types"
)

// shownDefault renders a column default as PostgreSQL's pg_get_expr shows
// the stored expression. The catalog keeps the default as written
// ('hi', -1); PostgreSQL shows the literal after coercion to the column's
// type: 'hi'::text, '-1'::integer, 5 for '5' in an integer column. Other
// expressions are shown as written.
func shownDefault(col Column) string {
	d := strings.TrimSpace(col.Default)
	lit, quoted := unquoteLiteral(d)
	if !quoted {
		if col.Type.IsInteger() && strings.HasPrefix(d, "-") {
			if _, err := strconv.ParseInt(d, 10, 64); err == nil {
				return "'" + d + "'::" + col.Type.WithTypmod(-1).String()
			}
		}
		return col.Default
	}
	switch col.Type.Kind {
	case types.Text, types.Varchar, types.Name:
		return d + "::" + col.Type.WithTypmod(-1).String()
	case types.Bpchar:
		return d + "::bpchar"
	case types.Int2, types.Int4, types.Int8:
		n, err := strconv.ParseInt(strings.TrimSpace(lit), 10, 64)
		if err != nil {
			return col.Default
		}
		if n < 0 {
			return "'" + strconv.FormatInt(n, 10) + "'::" + col.Type.WithTypmod(-1).String()
		}
		return strconv.FormatInt(n, 10)
	}
	return col.Default
}

// unquoteLiteral reports whether s is exactly one '...' string literal
// (with ” for a quote) and returns its value.
func unquoteLiteral(s string) (string, bool) {
	if len(s) < 2 || s[0] != '\'' || s[len(s)-1] != '\'' {
		return "", false
	}
	inner := s[1 : len(s)-1]
	var b strings.Builder
	for i := 0; i < len(inner); i++ {
		if inner[i] == '\'' {
			if i+1 >= len(inner) || inner[i+1] != '\'' {
				return "", false // two literals, or an expression between quotes
			}
			i++
		}
		b.WriteByte(inner[i])
	}
	return b.String(), true
}
