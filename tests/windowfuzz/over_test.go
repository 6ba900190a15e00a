package windowfuzz

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Window functions emitted on window close over ev (append only):
// lag, lead and row_number over (PARTITION BY k ORDER BY ts, id), EMIT ON
// WINDOW CLOSE [WITH DELAY d]. The model follows docs/windows.md, "Window
// functions emitted on window close": with W the watermark minus the
// delay, a partition's rows whose time is below W are final; a row goes
// out once it is final and so are the rows its lead reads after it, rows
// of one time together; a row whose time is NULL or below W when it
// arrives is late.
type overModel struct {
	keyed  bool
	lagN   int // 0: no lag; else lag(v, lagN)
	leadN  int // 0: no lead; else lead(v, leadN)
	delay  int64
	in     input
	clock  int64
	late   int
	cpLate int
	parts  map[gkey][]row
}

func randOver(r *rand.Rand, in input, clock int64) *overModel {
	o := &overModel{keyed: r.IntN(3) > 0, lagN: r.IntN(3), leadN: r.IntN(3), in: in, clock: clock, parts: map[gkey][]row{}}
	if r.IntN(2) == 0 {
		o.delay = []int64{3, 10}[r.IntN(2)]
	}
	return o
}

func (o *overModel) sql() string {
	w := "ORDER BY ts, id"
	if o.keyed {
		w = "PARTITION BY k " + w
	}
	cols := []string{"id", "k", "ts"}
	if o.lagN > 0 {
		cols = append(cols, fmt.Sprintf("lag(v, %d) OVER (%s) AS lg", o.lagN, w))
	}
	if o.leadN > 0 {
		cols = append(cols, fmt.Sprintf("lead(v, %d) OVER (%s) AS ld", o.leadN, w))
	}
	cols = append(cols, fmt.Sprintf("row_number() OVER (%s) AS rn", w))
	q := "SELECT " + strings.Join(cols, ", ") + " FROM ev EMIT ON WINDOW CLOSE"
	if o.delay > 0 {
		q += fmt.Sprintf(" WITH DELAY INTERVAL '%d' SECOND", o.delay)
	}
	return q
}

// below reports whether time t is below W, the watermark minus the delay.
func (o *overModel) below(t int64) bool { return o.in.hasWM && t < o.in.wm-o.delay }

func (o *overModel) apply(table int, ops []op) {
	if table != 0 {
		return
	}
	for _, x := range ops {
		r := x.r
		if r.tN || o.below(r.t) {
			o.late++
			continue
		}
		var key gkey
		switch {
		case !o.keyed:
		case r.kN:
			key.kN = true
		default:
			key.k = r.k
		}
		o.parts[key] = append(o.parts[key], r)
	}
	o.in.note(ops, o.clock)
}

func (o *overModel) barrier()        { o.in.tick(o.clock) }
func (o *overModel) advance(d int64) { o.clock += d; o.barrier() }
func (o *overModel) checkpoint()     { o.cpLate = o.late }
func (o *overModel) restartAt(clock int64) {
	o.clock = clock
	o.late -= o.cpLate
	o.in.restart(clock)
}
func (o *overModel) lateRows() int { return o.late }
func (o *overModel) mark() string  { return stamp(o.in.wm) }

func (o *overModel) rows() [][]string {
	var out [][]string
	for _, rs := range o.parts {
		var final []row
		for _, r := range rs {
			if o.below(r.t) {
				final = append(final, r)
			}
		}
		slices.SortFunc(final, func(a, b row) int {
			if a.t != b.t {
				return int(a.t - b.t)
			}
			return a.id - b.id
		})
		// Rows of one time go out together, once all of them can
		// (docs/windows.md): the prefix ends before the time of the first
		// row that must still wait.
		done := len(final) - o.leadN
		for done > 0 && done < len(final) && final[done-1].t == final[done].t {
			done--
		}
		for i := 0; i < done; i++ {
			r := final[i]
			line := []string{fmt.Sprint(r.id), text(r.k, r.kN), stamp(r.t)}
			if o.lagN > 0 {
				lag := "NULL"
				if j := i - o.lagN; j >= 0 {
					lag = text(final[j].v, final[j].vN)
				}
				line = append(line, lag)
			}
			if o.leadN > 0 {
				line = append(line, text(final[i+o.leadN].v, final[i+o.leadN].vN))
			}
			out = append(out, append(line, fmt.Sprint(i+1)))
		}
	}
	return out
}
