package windowfuzz

import (
	"fmt"
	"math/rand/v2"
)

// An interval join of ev (a, the left side) with ew (b), both append only:
// ON [a.k = b.k AND] lo <= a.ts - b.ts <= hi, written one of three ways.
// The model follows docs/windows.md, "Interval joins": a left row below
// the left watermark is late (right rows are freed by it), a right row
// below the right watermark likewise, a row exactly at its side's
// watermark is not; late rows are dropped and counted, so the view is the
// join of the rows that were not late, outer joins padding the unmatched
// ones. Rows with a NULL time are never late and never match.
type joinSpec struct {
	kind   string // JOIN, LEFT JOIN, RIGHT JOIN, FULL JOIN
	keyed  bool
	lo, hi int64
	form   int
}

func randJoin(r *rand.Rand) joinSpec {
	j := joinSpec{kind: []string{"JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"}[r.IntN(4)], keyed: r.IntN(4) > 0, form: r.IntN(3)}
	j.lo = []int64{-20, -10, 0, 5}[r.IntN(4)]
	j.hi = j.lo + []int64{5, 10, 30}[r.IntN(3)]
	return j
}

// plus writes col + x seconds.
func plus(col string, x int64) string {
	switch {
	case x > 0:
		return fmt.Sprintf("%s + INTERVAL '%d' SECOND", col, x)
	case x < 0:
		return fmt.Sprintf("%s - INTERVAL '%d' SECOND", col, -x)
	}
	return col
}

func (j joinSpec) sql() string {
	var cond string
	switch j.form {
	case 0:
		cond = fmt.Sprintf("b.ts BETWEEN %s AND %s", plus("a.ts", -j.hi), plus("a.ts", -j.lo))
	case 1:
		cond = fmt.Sprintf("a.ts BETWEEN %s AND %s", plus("b.ts", j.lo), plus("b.ts", j.hi))
	default:
		cond = fmt.Sprintf("b.ts >= %s AND b.ts <= %s", plus("a.ts", -j.hi), plus("a.ts", -j.lo))
	}
	if j.keyed {
		cond = "a.k = b.k AND " + cond
	}
	return fmt.Sprintf("SELECT a.id AS aid, b.id AS bid FROM ev a %s ew b ON %s", j.kind, cond)
}

// joinModel is an interval join view's expected state: the rows of each
// side that were not late.
type joinModel struct {
	j      joinSpec
	in     [2]input
	side   [2][]row
	clock  int64
	late   int
	cpLate int
}

func (m *joinModel) sql() string { return m.j.sql() }

func (m *joinModel) apply(table int, ops []op) {
	for _, o := range ops {
		if !o.r.tN && m.in[table].below(o.r.t) {
			m.late++
			continue
		}
		m.side[table] = append(m.side[table], o.r)
	}
	m.in[table].note(ops, m.clock)
}

func (m *joinModel) barrier() {
	m.in[0].tick(m.clock)
	m.in[1].tick(m.clock)
}

func (m *joinModel) advance(d int64) {
	m.clock += d
	m.barrier()
}

func (m *joinModel) checkpoint() { m.cpLate = m.late }

func (m *joinModel) restartAt(clock int64) {
	m.clock = clock
	m.late -= m.cpLate
	m.in[0].restart(m.clock)
	m.in[1].restart(m.clock)
}

func (m *joinModel) lateRows() int { return m.late }

func (m *joinModel) mark() string {
	return fmt.Sprintf("left %s, right %s", stamp(m.in[0].wm), stamp(m.in[1].wm))
}

func (m *joinModel) matches(a, b row) bool {
	if a.tN || b.tN || m.j.keyed && (a.kN || b.kN || a.k != b.k) {
		return false
	}
	d := a.t - b.t
	return m.j.lo <= d && d <= m.j.hi
}

func (m *joinModel) rows() [][]string {
	var out [][]string
	matchedB := make([]bool, len(m.side[1]))
	for _, a := range m.side[0] {
		matched := false
		for i, b := range m.side[1] {
			if m.matches(a, b) {
				matched, matchedB[i] = true, true
				out = append(out, []string{fmt.Sprint(a.id), fmt.Sprint(b.id)})
			}
		}
		if !matched && (m.j.kind == "LEFT JOIN" || m.j.kind == "FULL JOIN") {
			out = append(out, []string{fmt.Sprint(a.id), "NULL"})
		}
	}
	if m.j.kind == "RIGHT JOIN" || m.j.kind == "FULL JOIN" {
		for i, b := range m.side[1] {
			if !matchedB[i] {
				out = append(out, []string{"NULL", fmt.Sprint(b.id)})
			}
		}
	}
	return out
}
