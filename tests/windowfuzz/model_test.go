package windowfuzz

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
)

// The model: what a windowed view must hold after each committed INSERT,
// computed from the rules of docs/windows.md and docs/watermarks.md alone,
// without the engine's code. Times are whole seconds after base.
//
//   - The table's watermark is max(ts) - delay over the rows of every batch
//     (one INSERT or UPDATE, or a view's backfill) so far, NULLs and deleted
//     rows ignored; it moves after the batch's rows, so a batch is judged
//     against the watermark before it. With idle_timeout, at each barrier
//     an input that has delivered no row for that long moves its watermark
//     to the one at its last row plus the processing time since that row.
//   - A deletion (an UPDATE deletes the old row and inserts the new one) is
//     judged as a row is: late where the row's window was freed.
//   - TUMBLE and HOP: a row counts in each of its windows that is not freed
//     when it arrives; a window is freed once end + delay + lateness <= the
//     watermark. Under EMIT ON WINDOW CLOSE a window is in the view once
//     end + delay <= the watermark.
//   - SESSION: per key, a row whose time t has t + gap + delay + lateness <=
//     the watermark is late; any other joins (and merges) the key's sessions
//     not yet freed that it is less than gap from. A session [first, last +
//     gap) is due once its end + delay <= the watermark and freed at end +
//     delay + lateness. Under EMIT ON WINDOW CLOSE, a due session replaces
//     the emitted rows it covers; an emitted row that an open session grew
//     over stays until that session is due.

// gkey is a group: the key (when keyed) and the window (tN: a bucket
// of NULL times).
type gkey struct {
	k          int64
	kN, tN     bool
	start, end int64
}

// op is a row inserted, or deleted (an UPDATE is a delete of the old row
// and an insert of the new one, in one batch).
type op struct {
	r   row
	del bool
}

// model is one view's expected state.
type model struct {
	s spec
	input
	clock   int64 // processing time
	late    int   // rows and deletions late for every window they are in
	cpLate  int   // late at the last checkpoint
	lateTab       // LATE ROWS INTO (late_test.go)

	// TUMBLE, HOP: each window's rows by id.
	groups map[gkey]map[int]row

	// SESSION: per key (start, end zero), its sessions not yet freed in
	// order, and the freed ones' rows in the view; under EMIT ON WINDOW
	// CLOSE the rows emitted and not yet freed, in order, and what the view
	// holds.
	open    map[gkey][]*sess
	done    map[gkey][]*sess
	emitted map[gkey][]gkey
	view    map[gkey]*acc

	// EMIT EVERY and EARLY EVERY: a tick is due once processing time
	// reaches next (the operator's timer, started with it and again after
	// each tick, at the barrier that takes the tick); shown is what the
	// view showed at the last tick (EVERY: all of it; EARLY EVERY: the
	// provisional rows of windows then open).
	next           int64
	shown, cpShown [][]string
	// earlyKeys: under SESSION ... EARLY EVERY, the keys whose sessions
	// changed since the last tick (all their sessions go out at the next)
	earlyKeys map[gkey]bool
}

func newModel(s spec, in input, clock int64) *model {
	return &model{s: s, input: in, clock: clock, next: clock + max(s.every, s.early), groups: map[gkey]map[int]row{}, open: map[gkey][]*sess{},
		done: map[gkey][]*sess{}, emitted: map[gkey][]gkey{}, view: map[gkey]*acc{}, earlyKeys: map[gkey]bool{}, lateTab: lateTab{lateTable: s.lateTable}}
}

// The viewModel methods of a windowed view of ev.

func (m *model) sql() string { return m.s.sql() }

func (m *model) apply(table int, ops []op) {
	if (table == 1) == (m.s.table == "ew") {
		m.batch(ops)
	}
}

func (m *model) lateRows() int { return m.late }

// replayExact reports whether the view's rows after a replay of several
// writes are what the model says. Not for a SESSION under EMIT ON WINDOW
// CLOSE with ALLOW LATENESS: a late row that makes a session already due
// emits it at the end of the epoch, and if a later row of the same epoch
// extends it first, only the extended session goes out, once due; a
// replay puts several writes in one epoch (docs/windows.md, SESSION).
func (m *model) replayExact() bool {
	return !(m.s.kind == session && m.s.eowc && m.s.lateness > 0)
}

func (m *model) mark() string { return stamp(m.wm) }

// freed reports whether a window ending at end was freed at the current
// watermark.
func (m *model) freed(end int64) bool {
	return m.hasWM && end+m.s.delay+m.s.lateness <= m.wm
}

// closed reports whether a window ending at end is due.
func (m *model) closed(end int64) bool {
	return m.hasWM && end+m.s.delay <= m.wm
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// keyOf is r's session or group key.
func (m *model) keyOf(r row) gkey {
	switch {
	case !m.s.keyed:
		return gkey{}
	case r.kN:
		return gkey{kN: true}
	}
	return gkey{k: r.k}
}

// inserts is a batch of inserted rows.
func inserts(rows []row) []op {
	ops := make([]op, len(rows))
	for i, r := range rows {
		ops[i] = op{r: r}
	}
	return ops
}

// batch applies one batch (one INSERT, UPDATE or DELETE, or a backfill).
func (m *model) batch(ops []op) {
	s := m.s
	rebuild := map[gkey]bool{}
	for _, o := range ops {
		r := o.r
		key := m.keyOf(r)
		if s.kind == bucket {
			m.bucketOp(key, o)
			continue
		}
		if r.tN {
			continue // in no window
		}
		if s.kind != session {
			if !s.keeps(r) {
				continue
			}
			counted := false
			for _, w := range s.windowsOf(r.t) {
				if m.freed(w[1]) {
					if s.topN > 0 {
						m.late++ // the top-N sees each window's row apart
					}
					continue
				}
				counted = true
				g := key
				g.start, g.end = w[0], w[1]
				m.applyTo(g, o)
			}
			if !counted && s.topN == 0 {
				m.dropped(r)
			}
			continue
		}
		if m.hasWM && r.t+s.gap+s.delay+s.lateness <= m.wm {
			m.dropped(r)
			continue
		}
		r.pass = s.keeps(r)
		if s.early > 0 {
			m.earlyKeys[key] = true
		}
		if o.del {
			// One row equal to r goes: the key may also hold an older
			// version of it whose deletion came late and was dropped.
			for _, x := range m.open[key] {
				if i := slices.IndexFunc(x.rows, func(y row) bool { y.pass = r.pass; return y == r }); i >= 0 {
					x.rows = slices.Delete(x.rows, i, i+1)
					break
				}
			}
			rebuild[key] = true
			continue
		}
		merged := &sess{first: r.t, last: r.t, rows: []row{r}}
		var keep []*sess
		for _, x := range m.open[key] {
			if r.t > x.first-s.gap && r.t < x.last+s.gap {
				merged.first = min(merged.first, x.first)
				merged.last = max(merged.last, x.last)
				merged.rows = append(merged.rows, x.rows...)
			} else {
				keep = append(keep, x)
			}
		}
		m.open[key] = append(keep, merged)
	}
	for key := range rebuild {
		m.open[key] = sessionsOf(m.open[key], s.gap)
	}
	m.note(ops, m.clock)
}

// advance moves processing time on by d seconds (ADVANCE CLOCK, then a
// barrier).
func (m *model) advance(d int64) {
	m.clock += d
	m.barrier()
}

// restart is a restart of the server: the watermark goes on from where it
// was, idleness is measured from now, the counters start at 0.
// checkpoint is a CHECKPOINT; a restart resumes from it, and what the
// view showed then under EVERY or EARLY EVERY is what it shows until the
// next tick (ticks are processing time: a replay does not repeat them).
func (m *model) checkpoint() {
	m.cpLate, m.cpShown = m.late, m.shown
	m.lateCheckpoint()
}

func (m *model) restartAt(clock int64) {
	m.clock = clock
	m.late -= m.cpLate
	m.shown = m.cpShown
	m.input.restart(m.clock)
	m.next = m.clock + max(m.s.every, m.s.early)
}

// barrier is the end of an epoch (FLUSH, ADVANCE CLOCK): an idle input's
// watermark moves on, and the windows and sessions it passed are closed
// and freed.
func (m *model) barrier() {
	m.tick(m.clock)
	s := m.s
	tick := false
	if p := max(s.every, s.early); p > 0 && m.clock >= m.next {
		m.next = m.clock + p
		tick = true
		if s.kind != session || s.every > 0 {
			m.shown = m.current(s.early > 0)
		}
	}
	if s.kind != session {
		return
	}
	for key, ss := range m.open {
		slices.SortFunc(ss, func(a, b *sess) int { return int(a.first - b.first) })
		if s.eowc {
			due := m.closed
			if tick && m.earlyKeys[key] { // EARLY EVERY's tick: every session and row of the key
				due = func(int64) bool { return true }
			}
			m.reconcile(key, ss, due)
		}
		var keep []*sess
		for _, x := range ss {
			if m.freed(x.end(s.gap)) {
				m.done[key] = append(m.done[key], x)
				// Its emitted row (if any) stays in the view, untracked.
				m.emitted[key] = slices.DeleteFunc(m.emitted[key], func(e gkey) bool { return e.start < x.end(s.gap) })
			} else {
				keep = append(keep, x)
			}
		}
		m.open[key] = keep
	}
	if tick {
		clear(m.earlyKeys)
	}
}

// bucketOp applies one op to a bucket aggregation: under EMIT ON WINDOW
// CLOSE a row (or deletion) of a closed bucket is late, and so is one
// whose time is NULL (its bucket never closes).
func (m *model) bucketOp(key gkey, o op) {
	r := o.r
	if !m.s.keeps(r) {
		return
	}
	g := key
	if r.tN {
		if m.s.eowc {
			m.late++
			return
		}
		g.tN = true
	} else {
		g.start = floorDiv(r.t, m.s.size) * m.s.size
		g.end = g.start + m.s.size
		if m.s.eowc && m.closed(g.end) {
			m.late++
			return
		}
	}
	m.applyTo(g, o)
}

// applyTo applies o to group g's rows.
func (m *model) applyTo(g gkey, o op) {
	rs := m.groups[g]
	if rs == nil {
		rs = map[int]row{}
		m.groups[g] = rs
	}
	if o.del {
		delete(rs, o.r.id)
	} else {
		rs[o.r.id] = o.r
	}
}

// rows is what the view must hold, as text.
func (m *model) rows() [][]string {
	switch {
	case m.s.outer:
		return outerRows(m.current(false), m.s.keyed)
	case m.s.every > 0:
		return slices.Clone(m.shown)
	case m.s.early > 0 && m.s.kind != session: // a SESSION's provisional rows are in view
		out := m.current(false)
		for _, r := range m.shown {
			if end, _ := time.Parse("2006-01-02 15:04:05", r[len(r)-len(m.s.aggs)-1]); !m.closed(int64(end.Sub(base) / time.Second)) {
				out = append(out, r)
			}
		}
		return out
	}
	return m.current(false)
}

// outerRows is the max, count and sum of the inner rows' count(*) (the
// column after k, window_start and window_end) per window_start.
func outerRows(inner [][]string, keyed bool) [][]string {
	ws, c := 0, 2
	if keyed {
		ws, c = 1, 3
	}
	type agg struct{ max, n, sum int64 }
	per := map[string]*agg{}
	for _, r := range inner {
		v, err := strconv.ParseInt(r[c], 10, 64)
		if err != nil {
			panic(err)
		}
		a := per[r[ws]]
		if a == nil {
			a = &agg{max: v}
			per[r[ws]] = a
		}
		a.max = max(a.max, v)
		a.n++
		a.sum += v
	}
	var out [][]string
	for w, a := range per {
		out = append(out, []string{w, fmt.Sprint(a.max), fmt.Sprint(a.n), fmt.Sprint(a.sum)})
	}
	return out
}

// current is what the view would hold under EMIT ON UPDATE, or with EMIT
// ON WINDOW CLOSE the closed windows' rows; with open set, the rows of the
// windows not yet closed instead.
func (m *model) current(open bool) [][]string {
	var out [][]string
	emit := func(g gkey, a *acc) {
		var r []string
		if m.s.keyed {
			r = append(r, text(g.k, g.kN))
		}
		switch {
		case m.s.kind != bucket:
			r = append(r, stamp(g.start), stamp(g.end))
		case g.tN:
			r = append(r, "NULL")
		default:
			r = append(r, stamp(g.start))
		}
		for _, x := range m.s.aggs {
			r = append(r, a.result(x))
		}
		out = append(out, r)
	}
	switch {
	case m.s.topN > 0:
		for g, rs := range m.groups {
			if m.s.eowc && !m.closed(g.end) {
				continue
			}
			top := slices.Collect(maps.Values(rs))
			slices.SortFunc(top, func(a, b row) int {
				switch { // DESC: NULLs first
				case a.vN != b.vN:
					if a.vN {
						return -1
					}
					return 1
				case !a.vN && a.v != b.v:
					return int(b.v - a.v)
				}
				return a.id - b.id
			})
			for i, r := range top[:min(len(top), m.s.topN)] {
				out = append(out, []string{fmt.Sprint(r.id), text(r.k, r.kN), text(r.v, r.vN), stamp(g.start), stamp(g.end), fmt.Sprint(i + 1)})
			}
		}
	case m.s.kind != session:
		for g, rs := range m.groups {
			if len(rs) == 0 || m.s.eowc && m.closed(g.end) == open {
				continue
			}
			a := &acc{}
			for _, r := range rs {
				a.add(r)
			}
			emit(g, a)
		}
	case m.s.eowc:
		for g, a := range m.view {
			emit(g, a)
		}
	default:
		keys := map[gkey]bool{}
		for key := range m.open {
			keys[key] = true
		}
		for key := range m.done {
			keys[key] = true
		}
		for key := range keys {
			for _, x := range append(slices.Clone(m.open[key]), m.done[key]...) {
				if a := sessAcc(x); a != nil {
					g := key
					g.start, g.end = x.first, x.end(m.s.gap)
					emit(g, a)
				}
			}
		}
	}
	return out
}
