package windowfuzz

import (
	"slices"
)

// SESSION in the model: a key's sessions and how the rows emitted under
// EMIT ON WINDOW CLOSE are brought in line with them.

// sess is one session of a key: its rows, the WHERE's rejects included
// (they shape sessions; docs/windows.md).
type sess struct {
	first, last int64
	rows        []row
}

func (s *sess) end(gap int64) int64 { return s.last + gap }

// sessionsOf re-forms sessions from the rows of ss: times less than gap
// apart are in one session.
func sessionsOf(ss []*sess, gap int64) []*sess {
	var rows []row
	for _, x := range ss {
		rows = append(rows, x.rows...)
	}
	slices.SortFunc(rows, func(a, b row) int { return int(a.t - b.t) })
	var out []*sess
	for _, r := range rows {
		if n := len(out); n > 0 && r.t-out[n-1].last < gap {
			out[n-1].last = r.t
			out[n-1].rows = append(out[n-1].rows, r)
			continue
		}
		out = append(out, &sess{first: r.t, last: r.t, rows: []row{r}})
	}
	return out
}

// reconcile brings the rows emitted for key under EMIT ON WINDOW CLOSE in
// line with its sessions ss (in order), as docs/windows.md says: a due
// session's row replaces the emitted rows it overlaps; an emitted row that
// overlaps an open session stays until that session is due; one that no
// session overlaps any more goes once its own end is due. A session or
// row is due when due(end) says so: closed, or at an EARLY EVERY tick for
// a key changed since the last, always.
func (m *model) reconcile(key gkey, ss []*sess, due func(end int64) bool) {
	gap := m.s.gap
	out := m.emitted[key]
	var kept []gkey
	orphan := func(e gkey) {
		if due(e.end) {
			delete(m.view, e)
		} else {
			kept = append(kept, e)
		}
	}
	oi := 0
	for _, x := range ss {
		first, end := x.first, x.end(gap)
		for ; oi < len(out) && out[oi].end <= first; oi++ {
			orphan(out[oi])
		}
		oj := oi
		for oj < len(out) && out[oj].start < end {
			oj++
		}
		run := out[oi:oj]
		oi = oj
		if !due(end) {
			kept = append(kept, run...)
			continue
		}
		for _, e := range run {
			delete(m.view, e)
		}
		if a := sessAcc(x); a != nil {
			g := key
			g.start, g.end = first, end
			m.view[g] = a
			kept = append(kept, g)
		}
	}
	for ; oi < len(out); oi++ {
		orphan(out[oi])
	}
	m.emitted[key] = kept
}

// sessAcc is a session's aggregates over the rows its WHERE keeps, nil
// when it keeps none (no group).
func sessAcc(x *sess) *acc {
	var a *acc
	for _, r := range x.rows {
		if r.pass {
			if a == nil {
				a = &acc{}
			}
			a.add(r)
		}
	}
	return a
}
