package sql

import "testing"

// Text renders a clause that Parse lifts back to the same clause.
func TestEmitTextRoundTrip(t *testing.T) {
	for _, q := range []string{
		"SELECT 1 EMIT ON UPDATE",
		"SELECT 1 EMIT CHANGES",
		"SELECT 1 EMIT FINAL",
		"SELECT 1 EMIT AFTER WATERMARK WITH DELAY '1 s'",
		"SELECT 1 EMIT EVERY INTERVAL '5' SECOND",
		`SELECT 1 EMIT ON WINDOW CLOSE WITH DELAY INTERVAL '1' MINUTE EARLY EVERY '2 s' ALLOW LATENESS INTERVAL '1' HOUR LATE ROWS INTO s."Late ""x"""`,
	} {
		emitOf := func(text string) *Emit {
			t.Helper()
			st, err := Parse(text)
			if err != nil || len(st) != 1 || st[0].Ext == nil || st[0].Ext.Emit == nil {
				t.Fatalf("%s: %v", text, err)
			}
			return st[0].Ext.Emit
		}
		a := emitOf(q)
		b := emitOf("SELECT 1" + a.Text())
		same := a.Mode == b.Mode && a.Delay.Text == b.Delay.Text && a.EarlyEvery.Text == b.EarlyEvery.Text &&
			a.AllowLateness.Text == b.AllowLateness.Text && a.Every.Text == b.Every.Text && a.LateRowsInto == b.LateRowsInto
		if !same {
			t.Errorf("%s: %q lifts to %+v, want %+v", q, a.Text(), b, a)
		}
	}
	if (*Emit)(nil).Text() != "" {
		t.Error("a nil clause renders as text")
	}
	st, err := Parse("SUBSCRIBE (SELECT 1 EMIT ON WINDOW CLOSE)")
	if err != nil || st[0].Ext.Subscribe.Emit == nil || st[0].Ext.Subscribe.Emit.Mode != EmitOnWindowClose {
		t.Fatalf("SUBSCRIBE's EMIT: %v", err)
	}
}
