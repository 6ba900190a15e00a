package windowfuzz

import (
	"fmt"
	"math/rand/v2"
)

// A view over a view: the windowed count of ev as a view of its own, and
// over it the max, count and sum of the counts per window_start (Nexmark
// q5's shape across two views). Under EMIT ON WINDOW CLOSE the upper view
// closes a window start in the epoch the lower view closed its windows
// (docs/watermarks.md: a view over a view receives the lower view's
// watermarks after each epoch's changes).
type chainModel struct {
	up   string // the lower view's name
	low  *model
	eowc bool
}

func randChain(r *rand.Rand, up string, in input, clock int64) *chainModel {
	s := spec{kind: tumble, size: []int64{10, 20}[r.IntN(2)], keyed: r.IntN(3) > 0, aggs: []agg{aggCount}, eowc: r.IntN(3) > 0}
	if r.IntN(3) == 0 {
		s.kind, s.slide = hop, s.size/2
	}
	if s.eowc && r.IntN(2) == 0 {
		s.delay = 3
	}
	return &chainModel{up: up, low: newModel(s, in, clock), eowc: s.eowc}
}

// prelude creates the lower view.
func (m *chainModel) prelude() []string {
	return []string{fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", m.up, m.low.s.sql())}
}

func (m *chainModel) sql() string {
	q := fmt.Sprintf(`SELECT window_start, max("count"), count(*), sum("count") FROM %s GROUP BY window_start`, m.up)
	if m.eowc {
		q += " EMIT ON WINDOW CLOSE"
	}
	return q
}

func (m *chainModel) apply(table int, ops []op) { m.low.apply(table, ops) }
func (m *chainModel) barrier()                  { m.low.barrier() }
func (m *chainModel) advance(d int64)           { m.low.advance(d) }
func (m *chainModel) checkpoint()               { m.low.checkpoint() }
func (m *chainModel) restartAt(clock int64)     { m.low.restartAt(clock) }
func (m *chainModel) lateRows() int             { return 0 } // the lower view's
func (m *chainModel) mark() string              { return m.low.mark() }
func (m *chainModel) rows() [][]string          { return outerRows(m.low.rows(), m.low.s.keyed) }
