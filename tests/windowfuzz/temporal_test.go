package windowfuzz

import (
	"fmt"
	"math/rand/v2"
)

// Temporal filters over ev (docs/streaming.md, section 2 of the spec):
// now() is the manual clock, which starts at base and only ADVANCE CLOCK
// moves. Either the rows of a sliding range, `WHERE ts > now() + x`, which
// leave the view as the clock passes them, or the keys gone silent,
// `GROUP BY k HAVING max(ts) < now() + x`, which enter it as the clock
// passes their last time. The view is the query over the table's rows at
// the current clock: temporal filters drop no rows.
type temporalModel struct {
	silent bool
	x      int64 // seconds
	clock  int64
	cur    map[int]row
	cpCur  map[int]row
}

func randTemporal(r *rand.Rand, clock int64) *temporalModel {
	m := &temporalModel{silent: r.IntN(2) == 0, clock: clock, cur: map[int]row{}}
	if m.silent {
		m.x = []int64{950, 1050}[r.IntN(2)]
	} else {
		m.x = []int64{850, 950}[r.IntN(2)]
	}
	return m
}

func (m *temporalModel) sql() string {
	if m.silent {
		return fmt.Sprintf("SELECT k, max(ts) FROM ev GROUP BY k HAVING max(ts) < now() + INTERVAL '%d seconds'", m.x)
	}
	return fmt.Sprintf("SELECT id, k, v FROM ev WHERE ts > now() + INTERVAL '%d seconds'", m.x)
}

func (m *temporalModel) apply(table int, ops []op) {
	if table != 0 {
		return
	}
	for _, o := range ops {
		if o.del {
			delete(m.cur, o.r.id)
		} else {
			m.cur[o.r.id] = o.r
		}
	}
}

func (m *temporalModel) barrier()              {}
func (m *temporalModel) advance(d int64)       { m.clock += d }
func (m *temporalModel) checkpoint()           {}
func (m *temporalModel) restartAt(clock int64) { m.clock = clock }
func (m *temporalModel) lateRows() int         { return 0 }
func (m *temporalModel) mark() string          { return fmt.Sprintf("clock %s", stamp(m.clock)) }

func (m *temporalModel) rows() [][]string {
	var out [][]string
	if !m.silent {
		for _, r := range m.cur {
			if !r.tN && r.t > m.clock+m.x {
				out = append(out, []string{fmt.Sprint(r.id), text(r.k, r.kN), text(r.v, r.vN)})
			}
		}
		return out
	}
	type last struct {
		t   int64
		has bool
	}
	keys := map[gkey]*last{}
	for _, r := range m.cur {
		var g gkey
		if r.kN {
			g.kN = true
		} else {
			g.k = r.k
		}
		l := keys[g]
		if l == nil {
			l = &last{}
			keys[g] = l
		}
		if !r.tN && (!l.has || r.t > l.t) {
			l.t, l.has = r.t, true
		}
	}
	for g, l := range keys {
		if l.has && l.t < m.clock+m.x {
			out = append(out, []string{text(g.k, g.kN), stamp(l.t)})
		}
	}
	return out
}
