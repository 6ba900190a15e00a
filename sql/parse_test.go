package sql

import (
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

func TestParseSeveral(t *testing.T) {
	stmts, err := Parse("SELECT 1; select 'a;b' ;\n-- c\nINSERT INTO t VALUES (1)")
	if err != nil {
		t.Fatal(err)
	}
	if len(stmts) != 3 {
		t.Fatalf("got %d statements", len(stmts))
	}
	want := []string{"SELECT 1", "select 'a;b'", "-- c\nINSERT INTO t VALUES (1)"}
	for i, s := range stmts {
		if s.Text() != want[i] {
			t.Errorf("stmt %d: %q, want %q", i, s.Text(), want[i])
		}
	}
}

func TestParseEmpty(t *testing.T) {
	for _, q := range []string{"", "  ", "-- only a comment", ";"} {
		stmts, err := Parse(q)
		if err != nil || len(stmts) != 0 {
			t.Errorf("%q: %d statements, %v", q, len(stmts), err)
		}
	}
}

func TestSyntaxErrorPosition(t *testing.T) {
	_, err := Parse("SELECT 1;\nSELEC é 2")
	e := pgerr.As(err)
	if e == nil || e.Code != pgerr.SyntaxError {
		t.Fatalf("got %v", err)
	}
	// PostgreSQL: syntax error at or near "SELEC", position 11.
	if e.Position != 11 || e.Message != `syntax error at or near "SELEC"` {
		t.Fatalf("got %q at %d", e.Message, e.Position)
	}
}

// TestUnicodeEscapeHint: PostgreSQL's scanner hints at the escape forms of
// the literal that holds a bad Unicode escape.
func TestUnicodeEscapeHint(t *testing.T) {
	for q, hint := range map[string]string{
		`SELECT U&'wrong: \061'`:   `Unicode escapes must be \XXXX or \+XXXXXX.`,
		`SELECT U&'wrong: \+0061'`: `Unicode escapes must be \XXXX or \+XXXXXX.`,
		`SELECT E'wrong: \u061'`:   `Unicode escapes must be \uXXXX or \UXXXXXXXX.`,
		`SELECT E'wrong: \U0061'`:  `Unicode escapes must be \uXXXX or \UXXXXXXXX.`,
	} {
		_, err := Parse(q)
		e := pgerr.As(err)
		if e == nil || e.Message != "invalid Unicode escape" || e.Hint != hint {
			t.Errorf("%s: got %v (hint %q), want hint %q", q, err, e.Hint, hint)
		}
	}
}
