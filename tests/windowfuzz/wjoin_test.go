package windowfuzz

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// A window join: the same windowed count over ev and over ew, joined on
// window_start (and the key), as docs/windows.md's "Window joins" and
// Nexmark q8 do. The view is the join of the two sides' rows as the model
// of each side has them (under EMIT ON WINDOW CLOSE, the closed windows'
// rows: a window's pair goes out once both sides closed it); its late
// rows are both sides'.
type wjoinModel struct {
	a, b *model
}

func randWJoin(r *rand.Rand, ins [2]input, clock int64) *wjoinModel {
	s := spec{kind: tumble, size: []int64{10, 20}[r.IntN(2)], keyed: r.IntN(2) == 0, aggs: []agg{aggCount}, eowc: r.IntN(3) > 0}
	if r.IntN(3) == 0 {
		s.kind, s.slide = hop, s.size/2
	}
	if s.eowc && r.IntN(2) == 0 {
		s.delay = 3
	}
	t := s
	t.table = "ew"
	return &wjoinModel{a: newModel(s, ins[0], clock), b: newModel(t, ins[1], clock)}
}

func (m *wjoinModel) sql() string {
	side := func(s spec) string {
		e := s
		e.eowc, e.delay = false, 0
		return strings.Replace(e.sql(), "count(*)", "count(*) AS c", 1)
	}
	cond, k := "a.window_start = b.window_start", ""
	if m.a.s.keyed {
		cond, k = cond+" AND a.k = b.k", "a.k, "
	}
	q := fmt.Sprintf("SELECT a.window_start, %sa.c, b.c FROM (%s) a JOIN (%s) b ON %s", k, side(m.a.s), side(m.b.s), cond)
	if m.a.s.eowc {
		q += " EMIT ON WINDOW CLOSE"
		if m.a.s.delay > 0 {
			q += fmt.Sprintf(" WITH DELAY INTERVAL '%d' SECOND", m.a.s.delay)
		}
	}
	return q
}

func (m *wjoinModel) apply(table int, ops []op) { m.a.apply(table, ops); m.b.apply(table, ops) }
func (m *wjoinModel) barrier()                  { m.a.barrier(); m.b.barrier() }
func (m *wjoinModel) advance(d int64)           { m.a.advance(d); m.b.advance(d) }
func (m *wjoinModel) checkpoint()               { m.a.checkpoint(); m.b.checkpoint() }
func (m *wjoinModel) restartAt(clock int64)     { m.a.restartAt(clock); m.b.restartAt(clock) }
func (m *wjoinModel) lateRows() int             { return m.a.lateRows() + m.b.lateRows() }
func (m *wjoinModel) mark() string              { return m.a.mark() + " and " + m.b.mark() }

func (m *wjoinModel) rows() [][]string {
	// A side's row: [k,] window_start, window_end, c.
	n := 2
	if m.a.s.keyed {
		n = 3
	}
	var out [][]string
	for _, x := range m.a.rows() {
		if m.a.s.keyed && x[0] == "NULL" {
			continue // NULL = NULL is not true
		}
		for _, y := range m.b.rows() {
			if strings.Join(x[:n-1], "\x00") == strings.Join(y[:n-1], "\x00") {
				r := []string{x[n-2]}
				if m.a.s.keyed {
					r = append(r, x[0])
				}
				out = append(out, append(r, x[n], y[n]))
			}
		}
	}
	return out
}
