package sql

import (
	"testing"
)

// TestStandardStrings: escape-reading literals become standard ones of
// the same length; everything else (E”, $$, comments, identifiers) is
// left alone; warnings and the U& error carry the literal's position.
func TestStandardStrings(t *testing.T) {
	for in, want := range map[string]string{
		`select 'a\\b', 'c'`:               `select 'a\b' , 'c'`,
		`select 'it\'s', N'x\ty'`:          "select 'it''s', N'x\ty' ",
		`select E'a\\b', $$a\\b$$ -- '\\'`: `select E'a\\b', $$a\\b$$ -- '\\'`,
		`select "a\\b", x'1f', 'plain'`:    `select "a\\b", x'1f', 'plain'`,
		`select 'q''q\\'`:                  `select 'q''q\' `,
	} {
		got, _, err := standardStrings(in, false)
		if err != nil || got != want || len(got) != len(in) {
			t.Errorf("%s: %q (%v), want %q", in, got, err, want)
		}
	}
	_, ws, err := standardStrings(`select 'a\\b', 'c', 'd\'e', '\n'`, true)
	if err != nil || len(ws) != 3 {
		t.Fatalf("warnings %v (%v)", ws, err)
	}
	for i, want := range []struct {
		pos int
		msg string
	}{{8, `nonstandard use of \\ in a string literal`}, {21, `nonstandard use of \' in a string literal`}, {29, `nonstandard use of escape in a string literal`}} {
		if ws[i].Position != want.pos || ws[i].Message != want.msg {
			t.Errorf("warning %d: %d %q, want %d %q", i, ws[i].Position, ws[i].Message, want.pos, want.msg)
		}
	}
	if _, _, err := standardStrings(`select 1, U&'x'`, false); err == nil {
		t.Error("U& literal accepted")
	}
	stmts, _, err := ParseNonStandard(`select 'a\\b' as x; select 2`, false)
	if err != nil || len(stmts) != 2 || stmts[1].Text() != "select 2" {
		t.Fatalf("%v %v", stmts, err)
	}
}
