package sql

import "strings"

// Text renders the EMIT clause so that Parse lifts it again (a materialized
// view's stored definition keeps its clause this way): " EMIT ..." with a
// leading space, or "" for a nil clause.
func (e *Emit) Text() string {
	if e == nil {
		return ""
	}
	var b strings.Builder
	opt := func(kw string, iv Interval) {
		if iv.Text != "" {
			b.WriteString(" " + kw + " " + iv.Text)
		}
	}
	switch e.Mode {
	case EmitOnUpdate:
		b.WriteString(" EMIT ON UPDATE")
	case EmitEvery:
		opt("EMIT EVERY", e.Every)
	case EmitOnWindowClose:
		b.WriteString(" EMIT ON WINDOW CLOSE")
		opt("WITH DELAY", e.Delay)
		opt("EARLY EVERY", e.EarlyEvery)
		opt("ALLOW LATENESS", e.AllowLateness)
		if e.LateRowsInto != "" {
			parts := strings.Split(e.LateRowsInto, ".")
			for i, p := range parts {
				parts[i] = `"` + strings.ReplaceAll(p, `"`, `""`) + `"`
			}
			b.WriteString(" LATE ROWS INTO " + strings.Join(parts, "."))
		}
	}
	return b.String()
}
