package sql

import (
	"strings"
	"testing"
)

func TestSessionFrameDeparse(t *testing.T) {
	for _, q := range []string{
		"SELECT first_value(tm) OVER (PARTITION BY bar ORDER BY tm SESSION WITH GAP '10 minutes'), last_value(tm) OVER w FROM t WINDOW w AS (PARTITION BY bar ORDER BY tm SESSION WITH GAP INTERVAL '1' HOUR)",
		"SELECT 1; SELECT count(*) OVER (ORDER BY tm SESSION WITH GAP '5 seconds') FROM t",
	} {
		stmts, err := Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		st := stmts[len(stmts)-1]
		frames := st.Ext.SessionFrames
		wins := SessionWindows(st.AST, frames)
		if len(wins) != len(frames) || len(frames) == 0 {
			t.Fatalf("%s: %d frames, %d windows matched", q, len(frames), len(wins))
		}
		text, err := DeparseSessions(st.AST, wins)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range frames {
			if !strings.Contains(text, "SESSION WITH GAP "+f.Gap.Text) {
				t.Fatalf("deparsed %q lost %s", text, f.Gap.Text)
			}
		}
		// The deparsed text parses again to the same frames.
		again, err := Parse(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		a := again[0]
		if got := SessionWindows(a.AST, a.Ext.SessionFrames); len(got) != len(frames) {
			t.Fatalf("%s: %d windows matched after a round trip", text, len(got))
		}
		t.Log(text)
	}
}
