package pgclient

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/pgerr"
)

func TestQuoting(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{QuoteIdent(`a"b`), `"a""b"`},
		{QuoteLit(`it's`), `'it''s'`},
		{QuoteDSN(`p\w'd`), `'p\\w\'d'`},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}

func TestCheckOptions(t *testing.T) {
	known := map[string]bool{"hostname": true, "table.name": true, "port": false}
	if err := CheckOptions(map[string]string{"hostname": "h", "table.name": "t"}, known, "x", "an x"); err != nil {
		t.Fatal(err)
	}
	err := CheckOptions(map[string]string{"hostname": "h", "table.name": "t", "prot": "1"}, known, "x", "an x")
	if pgerr.CodeOf(err) != pgerr.InvalidParameterValue || !strings.Contains(err.Error(), `unknown x option "prot"`) {
		t.Fatalf("unknown option: %v", err)
	}
	// The first missing option by name, every time.
	err = CheckOptions(map[string]string{"table.name": " "}, known, "x", "an x")
	if err == nil || !strings.Contains(err.Error(), `an x needs the option "hostname"`) {
		t.Fatalf("missing options: %v", err)
	}
}

func TestWrapErrorKeepsSQLSTATE(t *testing.T) {
	err := WrapError(&pgconn.PgError{Code: "42501", Message: "permission denied"}, "upstream")
	if pgerr.CodeOf(err) != "42501" || err.Error() != "upstream: permission denied" {
		t.Fatalf("got %q %s", err.Error(), pgerr.CodeOf(err))
	}
	if err := WrapError(errors.New("dial"), "upstream"); !strings.HasPrefix(err.Error(), "upstream: dial") {
		t.Fatalf("got %v", err)
	}
}
