package windowfuzz

import (
	"fmt"
	"strings"
)

// LATE ROWS INTO in the model (docs/watermarks.md): a windowed
// aggregation's late rows (and late deletions, as rows) go to its table,
// each once, with the view's name. A late row waits for the next
// checkpoint, which FLUSH and ADVANCE CLOCK take when some late row waits;
// the model takes that checkpoint (lateWaiting), so that a restart resumes
// from it. The table's watermark column is not compared.

// lateTableDDL is the table of a view's late rows (ev's columns).
func lateTableDDL(name string) string {
	return "CREATE TABLE " + name + " (id int, k int, v int, ts timestamp, view_name text, watermark timestamptz)"
}

// prelude creates the view's LATE ROWS INTO table.
func (m *model) prelude() []string {
	if m.s.lateTable == "" {
		return nil
	}
	return []string{lateTableDDL(m.s.lateTable)}
}

// dropped counts r as late for every window it is in.
func (m *model) dropped(r row) {
	m.late++
	m.lateList = append(m.lateList, r)
}

// lateWaiting reports whether late rows of a LATE ROWS INTO view wait for
// a checkpoint.
func (m *model) lateWaiting() bool { return m.s.lateTable != "" && len(m.lateList) > m.lateListCp }

// lateTableRows is what the LATE ROWS INTO table must hold, without its
// watermark.
func (m *model) lateTableRows() [][]string {
	name := strings.TrimSuffix(m.s.lateTable, "_late")
	var out [][]string
	for _, r := range m.lateList {
		ts := "NULL"
		if !r.tN {
			ts = stamp(r.t)
		}
		out = append(out, []string{fmt.Sprint(r.id), text(r.k, r.kN), text(r.v, r.vN), ts, name})
	}
	return out
}
