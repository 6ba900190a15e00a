package planner

import (
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// TestAggModifierOnMissingFunction: DISTINCT/ORDER BY on a function that
// does not exist is PostgreSQL 15's 42883, with its hint about a misplaced
// ORDER BY when the ORDER BY has several keys; on one that exists but is no
// aggregate, 42809 naming the modifier.
func TestAggModifierOnMissingFunction(t *testing.T) {
	d := newTestDB(t, schema...)
	const plain = "No function matches the given name and argument types. You might need to add explicit type casts."
	const misplaced = "No aggregate function matches the given name and argument types. Perhaps you misplaced ORDER BY; ORDER BY must appear after all regular arguments of the aggregate."
	cases := []struct {
		sql, msg, hint string
		code           pgerr.Code
	}{
		{"SELECT nosuch(DISTINCT a, b ORDER BY a, b) FROM t", "function nosuch(integer, text) does not exist", misplaced, pgerr.UndefinedFunction},
		{"SELECT nosuch(DISTINCT a, b ORDER BY a) FROM t", "function nosuch(integer, text) does not exist", plain, pgerr.UndefinedFunction},
		{"SELECT abs(a ORDER BY a, b) FROM t", "ORDER BY specified, but abs is not an aggregate function", "", pgerr.WrongObjectType},
	}
	for _, c := range cases {
		_, _, err := d.run(c.sql)
		e := pgerr.As(err)
		if e == nil || e.Code != c.code || e.Message != c.msg || e.Hint != c.hint {
			t.Errorf("%s: got %v, want %s %q (hint %q)", c.sql, err, c.code, c.msg, c.hint)
		}
	}
}
