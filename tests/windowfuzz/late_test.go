package windowfuzz

import (
	"fmt"
	"strings"
)

// LATE ROWS INTO in the model (docs/watermarks.md): a view's late rows (and
// late deletions, as rows) go to its table, each once, with the view's
// name. A late row waits for the next checkpoint, which FLUSH and ADVANCE
// CLOCK take when some late row waits; the model takes that checkpoint
// (lateWaiting), so that a restart resumes from it. The table's watermark
// column is not compared.

// lateTableDDL is the table of a view's late rows (ev's columns).
func lateTableDDL(name string) string {
	return "CREATE TABLE " + name + " (id int, k int, v int, ts timestamp, view_name text, watermark timestamptz)"
}

// lateTab is a view's LATE ROWS INTO table ("": none) and the rows the
// model found late, lateCp of them at the last checkpoint.
type lateTab struct {
	lateTable string
	lateList  []row
	lateCp    int
}

// into is the clause for the view's query ("" without a table).
func (l *lateTab) into() string {
	if l.lateTable == "" {
		return ""
	}
	return " LATE ROWS INTO " + l.lateTable
}

// prelude creates the table.
func (l *lateTab) prelude() []string {
	if l.lateTable == "" {
		return nil
	}
	return []string{lateTableDDL(l.lateTable)}
}

func (l *lateTab) drop(r row)       { l.lateList = append(l.lateList, r) }
func (l *lateTab) lateCheckpoint()  { l.lateCp = len(l.lateList) }
func (l *lateTab) lateName() string { return l.lateTable }

// lateWaiting reports whether late rows wait for a checkpoint.
func (l *lateTab) lateWaiting() bool { return l.lateTable != "" && len(l.lateList) > l.lateCp }

// lateTableRows is what the table must hold, without its watermark.
func (l *lateTab) lateTableRows() [][]string {
	name := strings.TrimSuffix(l.lateTable, "_late")
	var out [][]string
	for _, r := range l.lateList {
		ts := "NULL"
		if !r.tN {
			ts = stamp(r.t)
		}
		out = append(out, []string{fmt.Sprint(r.id), text(r.k, r.kN), text(r.v, r.vN), ts, name})
	}
	return out
}

// dropped counts r as late for every window it is in.
func (m *model) dropped(r row) {
	m.late++
	m.drop(r)
}
