package stream

import (
	"math"
	"slices"
	"sort"
)

// SESSION windows. Per key, the live event times are kept in order, each
// with its group (the aggregate states of that key's rows at that time),
// and the sessions they form: a session is [first, last + gap), and two
// times less than gap apart are in one session. An insert at a new time
// starts, extends or merges sessions in place; a retraction that empties a
// time marks the key for a rebuild of its sessions from its times (which
// may split a session). A session's result merges the groups of its times.
//
// A key's emitted rows (entries, by start, pairwise disjoint) are
// reconciled with its sessions when the key is flushed: an emitted row that
// a session now covers is retracted (an update pair when the start is the
// same) and the session's row inserted; an emitted row that no session
// covers any more is retracted. Which sessions and rows are due depends on
// the EMIT mode: all of them (ON UPDATE, EVERY at its tick, EARLY EVERY at
// its tick), else those closed (end + delay <= watermark); an emitted row
// overlapping an open session stays until that session is due.
//
// Sessions close at end + delay and are freed at end + delay + lateness;
// a row whose time t has t + gap + delay + lateness <= watermark is late
// (its session, whatever it joins, would be freed). A key is woken by the
// watermark through a heap of the next time one of its sessions or rows is
// due.

// sessWin is the sessions of every key, owned by the run.
type sessWin struct {
	gap      int64
	coalesce bool    // the input is append-only: a group holds several times (group)
	keys     []*skey // per key id (nil: none)
	ids      idAlloc // group ids
	sched    schedHeap
	free     []*skey // freed keys' sessions, kept for their slices (newKey)
	dirty    []int32 // keys changed since the last barrier
	early    []int32 // keys changed since the last EARLY EVERY flush
	rebuild  []int32 // keys with an emptied time

	// scratch
	dst, src []int32
	tgt      []int32
	tmp      []int32
}

// skey is one key's sessions.
//
// A key's first times and session live in the skey itself (ptsIn, ssIn,
// where pts and ss start): over an append-only input most keys keep two
// times and one session (group), and a row's lookup then reads one object
// instead of following two more pointers, each a cache miss on a state
// that does not fit the cache (and, at two cores, often on the other
// core's).
type skey struct {
	pts   []spt  // live times, ascending (with pend: all of them)
	ptsIn [2]spt // pts's first backing array
	ss    []span // sessions, ascending, disjoint
	ssIn  [1]span
	sched int64 // the valid heap entry's time (MaxInt64: none)

	dirty, early, rebuild bool

	pend []spt   // times added out of order, not yet merged into pts (settle)
	out  []int32 // emitted entries, by start
}

type spt struct {
	t int64
	g int32
}

type span struct{ first, last int64 }

// assign returns the group of a row with key k at time t, or lateRow.
func (s *sessWin) assign(r *waggRun, k int32, t int64) int32 {
	if addSat(addSat(t, s.gap), r.dl) <= r.wm {
		return lateRow
	}
	sk := s.key(k)
	g, newTime := s.group(r, k, sk, t)
	if newTime {
		s.schedule(k, sk, r.sessionDue(sk.addTime(t, s.gap)))
	}
	if !sk.dirty {
		sk.dirty = true
		s.dirty = append(s.dirty, k)
		r.keyFlagged(k)
	}
	if !sk.early && r.eowc && r.w.Emit.EarlyEvery > 0 {
		sk.early = true
		s.early = append(s.early, k)
		r.keyFlagged(k)
	}
	return g
}

// key returns key k's sessions, making them if it has none.
func (s *sessWin) key(k int32) *skey {
	if sk := s.keys[k]; sk != nil {
		return sk
	}
	return s.newKey(k)
}

// newKey gives key k empty sessions, reusing a freed key's: a key is
// freed when its last session is, and a bidder's next row makes it again,
// so fresh slices would be grown from nothing (most of a SESSION query's
// allocations).
func (s *sessWin) newKey(k int32) *skey {
	var sk *skey
	if n := len(s.free); n > 0 {
		sk, s.free = s.free[n-1], s.free[:n-1]
	} else {
		sk = &skey{}
		sk.pts, sk.ss = sk.ptsIn[:0], sk.ssIn[:0]
	}
	sk.sched = math.MaxInt64
	s.keys[k] = sk
	return sk
}

// freeKey forgets key k's sessions (a key is freed once its sessions
// and rows are: the slices are empty), keeping them for newKey.
func (s *sessWin) freeKey(k int32) {
	sk := s.keys[k]
	if sk == nil {
		return
	}
	s.keys[k] = nil
	if len(s.free) < freeMax {
		*sk = skey{pts: keepSmall(sk.pts), pend: keepSmall(sk.pend), ss: keepSmall(sk.ss), out: keepSmall(sk.out)}
		if sk.pts == nil {
			sk.pts = sk.ptsIn[:0]
		}
		if sk.ss == nil {
			sk.ss = sk.ssIn[:0]
		}
		s.free = append(s.free, sk)
	}
}

// freeMax is how many freed keys' sessions are kept (a few KiB each at
// most): keys are freed and made in a stream, and the peak of freed keys
// at one time only grows with a run's length.
const freeMax = 256

// smallKeep is the longest slice a freed key's sessions keep: most keys
// hold a few times, and a longer slice would stay with whatever key is
// made next, however few times it gets.
const smallKeep = 64

// keepSmall is s emptied for reuse, or nil when it is longer than
// smallKeep.
func keepSmall[T any](s []T) []T {
	if cap(s) > smallKeep {
		return nil
	}
	return s[:0]
}

// group returns the group of a row of key k at time t (sk is k's
// sessions), creating it (empty) if needed, and whether t is a new time
// of the key (its sessions must take it in: addTime). A key's times are in
// order, so the group is found among them, with no table of (key, time) to
// probe and to remove from: rows come mostly in time order, each at a new
// time, and are appended. A time before the last one waits in pend (also
// in order), merged into pts (settle) when pend is long enough or when
// the key's sessions are next read, so that rows of two inputs
// interleaving their times (the readers of a split source) do not each
// move the times after them: the input ahead appends to pts, the one
// behind to pend.
//
// Over an append-only input (coalesce) a group holds rows of several
// times of one session, and its time is one of them (the latest, but for
// the key's first group): a row after the key's last time moves that time
// up to it when the time before is still within the gap of the row; a row
// between two times of one session (within the gap of each other) joins
// the later one's group; and a row before the key's first time, within
// the gap of its second, moves the first time down to it (the first
// group's rows lie between the two). Either way the sessions the times
// make are the rows' sessions (each session's first and last row time is
// a time, and consecutive times of a session stay within the gap), which
// is all a session's result and a restore's rebuild need; a retraction,
// which would have to find its own time, never comes. A hot key then
// keeps a few times a gap instead of one a row.
func (s *sessWin) group(r *waggRun, k int32, sk *skey, t int64) (g int32, newTime bool) {
	pts := sk.pts
	n := len(pts)
	if n == 0 || pts[n-1].t < t {
		if s.coalesce && n >= 2 && t-pts[n-2].t < s.gap {
			last := &pts[n-1]
			r.retime(last.g, t)
			last.t = t
			return last.g, true
		}
		g = s.newGroup(r, k, t)
		sk.pts = append(pts, spt{t, g})
		return g, true
	}
	i, ok := sptFind(pts, t)
	if ok || s.coalesce && i > 0 && pts[i].t-pts[i-1].t < s.gap {
		return pts[i].g, false
	}
	i, ok = sptFind(sk.pend, t)
	if ok {
		return sk.pend[i].g, false
	}
	if s.coalesce && len(sk.pend) == 0 && n >= 2 && pts[1].t-t < s.gap && t < pts[0].t {
		// Before the key's first time, within the gap of its second: the
		// first time moves down to the row, which joins its group. Over
		// the readers of a split source this is nine in ten of q11's rows
		// that would make a group in pend (docs/benchmarks.md, "q11's rows
		// out of order at the session operator").
		first := &pts[0]
		r.retime(first.g, t)
		first.t = t
		return first.g, true
	}
	g = s.newGroup(r, k, t)
	sk.pend = slices.Insert(sk.pend, i, spt{t, g})
	if len(sk.pend) >= min(max(pendMax, len(sk.pts)/8), pendMaxLong) {
		sk.settle()
	}
	return g, true
}

// sptFind is where t is in ps (ascending), or would be, and whether it is
// there; the last place is checked first (times come mostly in order).
func sptFind(ps []spt, t int64) (int, bool) {
	n := len(ps)
	if n == 0 || ps[n-1].t < t {
		return n, false
	}
	if ps[n-1].t == t {
		return n - 1, true
	}
	i := sort.Search(n, func(j int) bool { return ps[j].t >= t })
	return i, ps[i].t == t
}

// A key keeps apart up to pendMax times added out of order, or an eighth
// of its times when it has more, up to pendMaxLong: settling moves the
// times above the smallest kept apart, which for a key with many times
// (a hot bidder's, getting the steps of two readers in turn) is a step's
// worth each time, so it must not happen every pendMax rows.
const pendMax, pendMaxLong = 64, 1024

// settle merges the times added out of order into pts, from the back:
// the times above the smallest of them move once.
func (sk *skey) settle() {
	m := len(sk.pend)
	if m == 0 {
		return
	}
	n := len(sk.pts)
	sk.pts = slices.Grow(sk.pts, m)[:n+m]
	pts, pend := sk.pts, sk.pend
	i, j := n-1, m-1
	for w := n + m - 1; j >= 0; w-- {
		if i >= 0 && pts[i].t > pend[j].t {
			pts[w] = pts[i]
			i--
		} else {
			pts[w] = pend[j]
			j--
		}
	}
	sk.pend = sk.pend[:0]
}

// newGroup returns a new (empty) group (k, t); the caller puts it among
// k's times.
func (s *sessWin) newGroup(r *waggRun, k int32, t int64) int32 {
	g := s.ids.get()
	r.initGroup(g, k, t, int(s.ids.next))
	return g
}

// emptied notes that one of key k's times lost its last row.
func (s *sessWin) emptied(r *waggRun, k int32) {
	if sk := s.keys[k]; !sk.rebuild {
		sk.rebuild = true
		s.rebuild = append(s.rebuild, k)
	}
}

// addTime adds a new time t to the sessions and returns the end of the
// session holding it.
func (sk *skey) addTime(t, gap int64) int64 {
	ss := sk.ss
	i := len(ss)
	if i > 0 && t >= ss[i-1].last {
		// at or after the last session's last time (most rows): it grows,
		// or a session starts after it
		if end := addSat(ss[i-1].last, gap); t < end {
			ss[i-1].last = t
			return addSat(t, gap)
		}
		sk.ss = append(ss, span{t, t})
		return addSat(t, gap)
	}
	if i > 0 && addSat(ss[i-1].last, gap) > t {
		i = sort.Search(len(ss), func(j int) bool { return addSat(ss[j].last, gap) > t })
	}
	if i == len(ss) || ss[i].first >= addSat(t, gap) {
		sk.ss = slices.Insert(ss, i, span{t, t})
		return addSat(t, gap)
	}
	ss[i].first, ss[i].last = min(ss[i].first, t), max(ss[i].last, t)
	for i+1 < len(ss) && ss[i+1].first < addSat(ss[i].last, gap) {
		ss[i].last = max(ss[i].last, ss[i+1].last)
		ss = slices.Delete(ss, i+1, i+2)
	}
	sk.ss = ss
	return addSat(ss[i].last, gap)
}

// rebuild drops the emptied times and recomputes the sessions.
func (s *sessWin) rebuildKey(r *waggRun, sk *skey) {
	sk.settle()
	pts := sk.pts[:0]
	for _, p := range sk.pts {
		if r.rows[p.g] == 0 {
			s.ids.put(p.g)
			r.dropGroup(p.g)
		} else {
			pts = append(pts, p)
		}
	}
	clear(sk.pts[len(pts):])
	sk.pts = pts
	ss := sk.ss[:0]
	for _, p := range pts {
		if n := len(ss); n > 0 && p.t < addSat(ss[n-1].last, s.gap) {
			ss[n-1].last = p.t
		} else {
			ss = append(ss, span{p.t, p.t})
		}
	}
	sk.ss = ss
	sk.rebuild = false
}

// sessionDue is when a session ending at end must be looked at next: its
// close (ON WINDOW CLOSE, if still ahead), else its release.
func (r *waggRun) sessionDue(end int64) int64 {
	if r.eowc {
		if c := addSat(end, r.d); c > r.wm {
			return c
		}
	}
	return addSat(end, r.dl)
}

// schedule makes the watermark wake key k once it reaches t.
func (s *sessWin) schedule(k int32, sk *skey, t int64) {
	if t < sk.sched {
		sk.sched = t
		s.sched.push(schedAt{t, k})
	}
}

// reschedule schedules key k at the next time one of its sessions or
// emitted rows is due.
func (s *sessWin) reschedule(r *waggRun, k int32, sk *skey) {
	next := int64(math.MaxInt64)
	for _, ss := range sk.ss {
		next = min(next, r.sessionDue(addSat(ss.last, s.gap)))
	}
	for _, e := range sk.out {
		if c := addSat(r.eend[e], r.d); r.eowc && c > r.wm {
			next = min(next, c)
		}
		if c := addSat(r.eend[e], r.dl); c > r.wm {
			next = min(next, c)
		}
	}
	s.schedule(k, sk, next)
}

// withKey runs fn on key k's sessions, holding the key while it runs.
func (s *sessWin) withKey(r *waggRun, k int32, fn func(sk *skey) error) error {
	sk := s.keys[k]
	if sk == nil {
		return nil
	}
	r.keyRefs[k]++
	err := fn(sk)
	r.unrefKey(k)
	return err
}

// flushKey reconciles key k's emitted rows with its sessions, for the
// sessions and rows whose end due accepts (due must accept every end below
// one it accepts).
//
// With release set (the watermark's pass, which frees the released
// sessions right after), a due session that is also released and that
// no emitted row overlaps goes out as a plain insert with no entry: the
// entry would be freed with it (under ON WINDOW CLOSE without lateness a
// session closes and is released at once).
func (s *sessWin) flushKey(r *waggRun, k int32, sk *skey, due func(end int64) bool, release bool) error {
	if sk.rebuild {
		s.rebuildKey(r, sk)
	}
	if len(sk.out) == 0 && (len(sk.ss) == 0 || !due(addSat(sk.ss[0].last, s.gap))) {
		// Nothing emitted and no session due (the first ends first): a
		// barrier under ON WINDOW CLOSE finds most changed keys so.
		return nil
	}
	sk.settle()
	dst, src := s.dst[:0], s.src[:0]
	s.tgt = growSlice(s.tgt[:0], len(sk.ss))
	n := int32(0)
	for i, ss := range sk.ss {
		s.tgt[i] = -1
		if !due(addSat(ss.last, s.gap)) {
			continue
		}
		s.tgt[i] = n
		j := sort.Search(len(sk.pts), func(j int) bool { return sk.pts[j].t >= ss.first })
		for ; j < len(sk.pts) && sk.pts[j].t <= ss.last; j++ {
			dst, src = append(dst, n), append(src, sk.pts[j].g)
		}
		n++
	}
	s.dst, s.src = dst, src
	if err := r.compute(int(n), dst, src); err != nil {
		return err
	}
	out, kept := sk.out, s.tmp[:0]
	orphan := func(e int32) {
		if due(r.eend[e]) {
			r.ob.addPrev(r, Delete, e)
			r.freeEntry(e)
		} else {
			kept = append(kept, e)
		}
	}
	oi := 0
	for i, ss := range sk.ss {
		first, end := ss.first, addSat(ss.last, s.gap)
		for ; oi < len(out) && r.eend[out[oi]] <= first; oi++ {
			orphan(out[oi])
		}
		oj := oi
		for oj < len(out) && r.estart[out[oj]] < end {
			oj++
		}
		run := out[oi:oj]
		oi = oj
		t := int(s.tgt[i])
		if t < 0 {
			kept = append(kept, run...)
			continue
		}
		if release && len(run) == 0 && addSat(end, r.dl) <= r.wm {
			if r.rcount[t] > 0 {
				r.ob.addRes(r, Insert, first, end, k, t)
			}
			continue
		}
		if len(run) == 1 && r.estart[run[0]] == first && r.eend[run[0]] == end && r.sameRes(run[0], t) {
			kept = append(kept, run[0])
			continue
		}
		same := int32(-1)
		for _, e := range run {
			if r.estart[e] == first {
				same = e
				continue
			}
			r.ob.addPrev(r, Delete, e)
			r.freeEntry(e)
		}
		if same < 0 {
			same, _ = r.entry(k, first)
		}
		r.emitEntry(same, t, r.rcount[t], first, end)
		kept = append(kept, same)
	}
	for ; oi < len(out); oi++ {
		orphan(out[oi])
	}
	sk.out = append(sk.out[:0], kept...)
	s.tmp = kept[:0]
	return nil
}

// freeSessions forgets key k's sessions that the watermark wm released
// (after flushKey emitted what they owed), with their times and rows.
func (s *sessWin) freeSessions(r *waggRun, sk *skey, wm int64) {
	sk.settle()
	n := 0
	for n < len(sk.ss) && addSat(addSat(sk.ss[n].last, s.gap), r.dl) <= wm {
		n++
	}
	if n == 0 {
		return
	}
	last := sk.ss[n-1].last
	end := addSat(last, s.gap)
	j := 0
	for ; j < len(sk.pts) && sk.pts[j].t <= last; j++ {
		s.ids.put(sk.pts[j].g)
		r.dropGroup(sk.pts[j].g)
	}
	sk.pts = append(sk.pts[:0], sk.pts[j:]...)
	sk.ss = append(sk.ss[:0], sk.ss[n:]...)
	o := 0
	for ; o < len(sk.out) && r.estart[sk.out[o]] < end; o++ {
		r.freeEntry(sk.out[o])
	}
	sk.out = append(sk.out[:0], sk.out[o:]...)
}

// prepass rebuilds the sessions of the keys that lost a time.
func (s *sessWin) prepass(r *waggRun) error {
	for _, k := range s.rebuild {
		err := s.withKey(r, k, func(sk *skey) error {
			if sk.rebuild {
				s.rebuildKey(r, sk)
				s.reschedule(r, k, sk)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	s.rebuild = s.rebuild[:0]
	return nil
}

// advanceSessions moves the watermark to wm and handles the keys it wakes:
// their sessions that closed (ON WINDOW CLOSE) or are released are
// emitted, the released ones freed.
func (r *waggRun) advanceSessions(wm int64) error {
	s := r.ses
	if err := s.prepass(r); err != nil {
		return err
	}
	r.wm = wm
	by := r.dl
	if r.eowc {
		by = r.d
	}
	due := func(end int64) bool { return addSat(end, by) <= wm }
	for len(s.sched) > 0 && s.sched[0].t <= wm {
		x := s.sched.pop()
		if sk := s.keys[x.k]; sk == nil || sk.sched != x.t {
			continue // stale
		}
		err := s.withKey(r, x.k, func(sk *skey) error {
			sk.sched = math.MaxInt64
			if err := s.flushKey(r, x.k, sk, due, true); err != nil {
				return err
			}
			s.freeSessions(r, sk, wm)
			s.reschedule(r, x.k, sk)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// barrierSessions emits the epoch's changes as the EMIT mode wants them.
func (r *waggRun) barrierSessions() error {
	s := r.ses
	if err := s.prepass(r); err != nil {
		return err
	}
	all := r.flushAll()
	var list []int32
	due := func(int64) bool { return true }
	switch {
	case r.eowc && all: // EARLY EVERY tick: every changed key, all sessions
		list = s.early
		s.early = nil
	case r.eowc: // corrections of closed sessions
		list = s.dirty
		due = func(end int64) bool { return addSat(end, r.d) <= r.wm }
	case all:
		list = s.dirty
	default: // EVERY before its tick
		return nil
	}
	for _, k := range list {
		err := s.withKey(r, k, func(sk *skey) error {
			if !sk.dirty && !sk.early {
				return nil
			}
			if err := s.flushKey(r, k, sk, due, false); err != nil {
				return err
			}
			s.reschedule(r, k, sk)
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, k := range s.dirty {
		if sk := s.keys[k]; sk != nil {
			sk.dirty = false
			r.keyFlagged(k)
		}
	}
	s.dirty = s.dirty[:0]
	if r.eowc && all {
		for _, k := range list {
			if sk := s.keys[k]; sk != nil {
				sk.early = false
				r.keyFlagged(k)
			}
		}
	}
	return nil
}

// schedAt is a key to wake when the watermark reaches t.
type schedAt struct {
	t int64
	k int32
}

// schedHeap is a min-heap of schedAt by t, with its own sift loops:
// through container/heap's interface every comparison was a call, and
// the heap was a twelfth of q11's CPU at one core.
type schedHeap []schedAt

// push adds x.
func (h *schedHeap) push(x schedAt) {
	a := append(*h, x)
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if a[p].t <= x.t {
			break
		}
		a[i] = a[p]
		i = p
	}
	a[i] = x
	*h = a
}

// pop removes and returns the earliest entry; the heap is not empty.
func (h *schedHeap) pop() schedAt {
	a := *h
	top := a[0]
	n := len(a) - 1
	x := a[n]
	a = a[:n]
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && a[c+1].t < a[c].t {
			c++
		}
		if x.t <= a[c].t {
			break
		}
		a[i] = a[c]
		i = c
	}
	if n > 0 {
		a[i] = x
	}
	*h = a
	return top
}
