package windowfuzz

import (
	"fmt"
	"math/rand/v2"
)

// A TUMBLE count over an inner or LEFT interval join's left time column,
// under EMIT ON WINDOW CLOSE (docs/windows.md, "Interval joins": the
// join's output carries min(wl, wr + lo) on the left time column, so
// windows over it close with it; a left row's NULL-padded row is final once
// its range closed, which that watermark implies). The view is, for each
// window the join's output watermark closed, the count of the join's rows
// in it: its pairs, and with LEFT its unmatched left rows (a row with a NULL
// time is in no window).
type joinWinModel struct {
	j    *joinModel
	size int64
}

func randJoinWin(r *rand.Rand, ins [2]input, clock int64) *joinWinModel {
	j := randJoin(r)
	j.kind = []string{"JOIN", "LEFT JOIN"}[r.IntN(2)]
	return &joinWinModel{j: &joinModel{j: j, in: ins, clock: clock}, size: []int64{10, 20}[r.IntN(2)]}
}

func (m *joinWinModel) sql() string {
	inner := m.j.sql()
	inner = "SELECT a.id AS aid, b.id AS bid, a.ts AS ts" + inner[len("SELECT a.id AS aid, b.id AS bid"):]
	return fmt.Sprintf("SELECT window_start, window_end, count(*) FROM TUMBLE((%s), ts, INTERVAL '%d' SECOND) GROUP BY window_start, window_end EMIT ON WINDOW CLOSE", inner, m.size)
}

func (m *joinWinModel) apply(table int, ops []op) { m.j.apply(table, ops) }
func (m *joinWinModel) barrier()                  { m.j.barrier() }
func (m *joinWinModel) advance(d int64)           { m.j.advance(d) }
func (m *joinWinModel) checkpoint()               { m.j.checkpoint() }
func (m *joinWinModel) restartAt(clock int64)     { m.j.restartAt(clock) }
func (m *joinWinModel) lateRows() int             { return m.j.lateRows() }
func (m *joinWinModel) mark() string              { return m.j.mark() }
func (m *joinWinModel) replayLateExact() bool     { return false } // two inputs (docs/watermarks.md)

func (m *joinWinModel) rows() [][]string {
	in := m.j.in
	if !in[0].hasWM || !in[1].hasWM {
		return nil
	}
	w := min(in[0].wm, in[1].wm+m.j.j.lo)
	count := map[int64]int{}
	for _, a := range m.j.side[0] {
		matched := false
		for _, b := range m.j.side[1] {
			if m.j.matches(a, b) {
				count[floorDiv(a.t, m.size)*m.size]++
				matched = true
			}
		}
		if !matched && !a.tN && m.j.j.kind == "LEFT JOIN" {
			count[floorDiv(a.t, m.size)*m.size]++
		}
	}
	var out [][]string
	for st, n := range count {
		if st+m.size <= w {
			out = append(out, []string{stamp(st), stamp(st + m.size), fmt.Sprint(n)})
		}
	}
	return out
}
