package windowfuzz

import (
	"cmp"
	"fmt"
	"math/rand/v2"
)

// A plain query emitted on window close (docs/windows.md, "EMIT"): SELECT
// id, k, v, ts FROM ev [WHERE ...] EMIT ON WINDOW CLOSE [WITH DELAY d]. A
// row is held until the watermark passes its time plus the delay (W > t +
// d), then goes out once; a deletion of a held row cancels it; a row or a
// deletion whose time plus the delay the watermark already passed, or
// whose time is NULL, is late.
type eowcModel struct {
	where   string
	delay   int64
	in      input
	clock   int64
	late    int
	cpLate  int
	held    []row
	emitted []row
	lateTab        // LATE ROWS INTO (late_test.go)
	table   string // "": ev
}

func randEOWC(r *rand.Rand, in input, clock int64) *eowcModel {
	m := &eowcModel{where: []string{"", "", "v > 3", "k <> 2"}[r.IntN(4)], in: in, clock: clock}
	if r.IntN(2) == 0 {
		m.delay = []int64{3, 10}[r.IntN(2)]
	}
	return m
}

func (m *eowcModel) sql() string {
	q := "SELECT id, k, v, ts FROM " + cmp.Or(m.table, "ev")
	if m.where != "" {
		q += " WHERE " + m.where
	}
	q += " EMIT ON WINDOW CLOSE"
	if m.delay > 0 {
		q += fmt.Sprintf(" WITH DELAY INTERVAL '%d' SECOND", m.delay)
	}
	return q + m.into()
}

func (m *eowcModel) passed(t int64) bool { return m.in.hasWM && t+m.delay < m.in.wm }

func (m *eowcModel) apply(table int, ops []op) {
	if table != 0 {
		return
	}
	for _, o := range ops {
		r := o.r
		if !(spec{where: m.where}).keeps(r) {
			continue
		}
		if r.tN || m.passed(r.t) {
			m.late++
			m.drop(r)
			continue
		}
		if o.del {
			for i, h := range m.held {
				if h.id == r.id && h.t == r.t && h.v == r.v && h.vN == r.vN && h.k == r.k && h.kN == r.kN {
					m.held = append(m.held[:i], m.held[i+1:]...)
					break
				}
			}
			continue
		}
		m.held = append(m.held, r)
	}
	m.in.note(ops, m.clock)
	m.release()
}

// release sends the held rows the watermark passed.
func (m *eowcModel) release() {
	var keep []row
	for _, h := range m.held {
		if m.passed(h.t) {
			m.emitted = append(m.emitted, h)
		} else {
			keep = append(keep, h)
		}
	}
	m.held = keep
}

func (m *eowcModel) barrier()        { m.in.tick(m.clock); m.release() }
func (m *eowcModel) advance(d int64) { m.clock += d; m.barrier() }
func (m *eowcModel) checkpoint()     { m.cpLate = m.late; m.lateCheckpoint() }
func (m *eowcModel) restartAt(clock int64) {
	m.clock = clock
	m.late -= m.cpLate
	m.in.restart(clock)
}
func (m *eowcModel) lateRows() int { return m.late }
func (m *eowcModel) mark() string  { return stamp(m.in.wm) }

func (m *eowcModel) rows() [][]string {
	var out [][]string
	for _, r := range m.emitted {
		out = append(out, []string{fmt.Sprint(r.id), text(r.k, r.kN), text(r.v, r.vN), stamp(r.t)})
	}
	return out
}
