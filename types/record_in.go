package types

import (
	"strings"

	"github.com/streamsql/streamsql/pgerr"
)

// parseRecordText is record_in for a composite type of the catalog:
// "(f1,f2,...)", a field empty and unquoted for NULL, double quotes around
// a field that holds special characters ("" and \x inside them for a quote
// and x), surrounding white space allowed. Records of no named type cannot
// be read (PostgreSQL: input of anonymous composite types is not
// implemented).
func parseRecordText(s string, t T, opts *FormatOptions) (Value, error) {
	if t.Rec == nil || t.Rec.Name == "" {
		return nil, errRecordInput()
	}
	malformed := func(detail string) error {
		return pgerr.New(pgerr.InvalidTextRepresentation, "malformed record literal: \"%s\"", s).WithDetail("%s", detail)
	}
	p := strings.TrimLeft(s, " \t\n\r\v\f")
	if !strings.HasPrefix(p, "(") {
		return nil, malformed("Missing left parenthesis.")
	}
	p = p[1:]
	fs := t.Rec.Types
	out := make(RowValue, len(fs))
	for i := range fs {
		var sb strings.Builder
		quoted := false
		inQuote := false
		for len(p) > 0 {
			c := p[0]
			if !inQuote && (c == ',' || c == ')') {
				break
			}
			p = p[1:]
			switch {
			case c == '\\':
				if len(p) == 0 {
					return nil, malformed("Unexpected end of input.")
				}
				sb.WriteByte(p[0])
				p = p[1:]
			case c == '"' && !inQuote:
				inQuote, quoted = true, true
			case c == '"' && inQuote:
				if len(p) > 0 && p[0] == '"' {
					sb.WriteByte('"')
					p = p[1:]
				} else {
					inQuote = false
				}
			default:
				sb.WriteByte(c)
			}
		}
		if len(p) == 0 {
			return nil, malformed("Unexpected end of input.")
		}
		if sb.Len() > 0 || quoted {
			v, err := ParseText(sb.String(), fs[i], opts)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		if i < len(fs)-1 {
			if p[0] != ',' {
				return nil, malformed("Too few columns.")
			}
			p = p[1:]
		}
	}
	if len(p) == 0 || p[0] != ')' {
		if len(p) > 0 && p[0] == ',' {
			return nil, malformed("Too many columns.")
		}
		return nil, malformed("Too few columns.")
	}
	if rest := strings.TrimSpace(p[1:]); rest != "" {
		return nil, malformed("Junk after right parenthesis.")
	}
	return out, nil
}
