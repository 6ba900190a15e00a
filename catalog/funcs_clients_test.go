package catalog

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// parseIdentCases were checked against PostgreSQL 15 (TestParseIdentMatchesPostgres
// checks them again when it is reachable): the array as text, or the error's
// message and detail.
var parseIdentCases = []struct{ in, want string }{
	{`t`, `{t}`},
	{`s2.w`, `{s2,w}`},
	{`"My""T".x`, `{"My\"T",x}`},
	{`  A . b  `, `{a,b}`},
	{`a.b.c`, `{a,b,c}`},
	{`a_1$b`, `{a_1$b}`},
	{`a.`, `string is not a valid identifier: "a." | No valid identifier after ".".`},
	{`.a`, `string is not a valid identifier: ".a" | No valid identifier before ".".`},
	{`a b`, `string is not a valid identifier: "a b" | `},
	{`""`, `string is not a valid identifier: """" | Quoted identifier must not be empty.`},
	{`"x`, `string is not a valid identifier: ""x" | String has unclosed double quotes.`},
}

func parseIdentText(in string) string {
	v, err := parseIdent(in, true)
	if err != nil {
		e := pgerr.As(err)
		if e == nil || e.Code != pgerr.InvalidParameterValue {
			return "unexpected error: " + err.Error()
		}
		return e.Message + " | " + e.Detail
	}
	return types.FormatText(v, types.ArrayOf(types.TText), &types.DefaultFormat)
}

func TestParseIdent(t *testing.T) {
	for _, c := range parseIdentCases {
		if got := parseIdentText(c.in); got != c.want {
			t.Errorf("parse_ident(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestParseIdentMatchesPostgres(t *testing.T) {
	conn := pgConn(t)
	for _, c := range parseIdentCases {
		var s string
		err := conn.QueryRow(context.Background(), "SELECT parse_ident($1)::text", c.in).Scan(&s)
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			s = pe.Message + " | " + pe.Detail
		} else if err != nil {
			t.Fatal(err)
		}
		if s != c.want || strings.Contains(s, "unexpected") {
			t.Errorf("PostgreSQL: parse_ident(%q) = %s, the case says %s", c.in, s, c.want)
		}
	}
}
