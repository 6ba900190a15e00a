package stream

import (
	"slices"

	"github.com/streamsql/streamsql/pgerr"
)

// TUMBLE, HOP and CUMULATE: windows fixed by time alone, aligned to the
// Unix epoch plus the offset. State is kept per pane, a span of time that
// no window boundary cuts: the window itself (TUMBLE), gcd(size, slide)
// (HOP: a row updates one pane, a window merges size/gcd panes) or the step
// (CUMULATE, whose windows [s, s+step), [s, s+2*step), ... up to size grow
// within each size-aligned period; the last pane of a period is cut at its
// end when size is not a multiple of step). A window is known by its end,
// which no two windows share.
//
// A window closes when the watermark reaches end + delay and is freed at
// end + delay + lateness; a pane is freed with the last window that holds
// it, and a row whose pane was freed is late. Changed groups are
// translated into their (window, key) entries at each watermark and
// barrier, at the watermark the rows arrived under, so a window freed
// meanwhile never sees rows that came after it was freed.

// maxPanes bounds the panes a window merges.
const maxPanes = 4096

// fixedWin is the window geometry and the live panes, owned by the run.
type fixedWin struct {
	kind                   WindowKind
	size, slide, off, plen int64
	panes                  map[int64]*pane   // by start
	wins                   map[int64][]int32 // tracked: window end -> its entries
	ids                    idAlloc           // group ids
	lastP                  int64             // the pane assign found last
	last                   *pane             // (nil: none)
	spare                  []*pane           // freed dense panes: no groups, index all zero

	// scratch
	ends, pstarts []int64
	dst, src      []int32
	tkeys         []int32
	list          []int32
}

// pane is the groups of one pane, indexed by key id: densely (a slice
// by key id) while few panes are live, which is the common case and costs
// no hashing; else in a map.
type pane struct {
	gids   []int32
	dense  []int32         // by key id: group+1; nil when sparse
	sparse map[int32]int32 // by key id: group
}

// densePanes is how many live panes may index their groups densely: the
// index takes 4 bytes per live key and pane, while a live key has a group
// in some pane.
const densePanes = 32

// idAlloc hands out dense ids, reusing freed ones first.
type idAlloc struct {
	next int32
	live int
	free []int32
}

func (a *idAlloc) get() int32 {
	a.live++
	if n := len(a.free); n > 0 {
		id := a.free[n-1]
		a.free = a.free[:n-1]
		return id
	}
	a.next++
	return a.next - 1
}

func (a *idAlloc) put(id int32) {
	a.live--
	a.free = append(a.free, id)
}

// lookup returns group (k, p), or -1.
func (f *fixedWin) lookup(k int32, p int64) int32 {
	pn := f.panes[p]
	if pn == nil {
		return -1
	}
	return pn.find(k)
}

func (pn *pane) find(k int32) int32 {
	if pn.dense != nil {
		if int(k) < len(pn.dense) {
			return pn.dense[k] - 1
		}
		return -1
	}
	if g, ok := pn.sparse[k]; ok {
		return g
	}
	return -1
}

// pane returns pane p, creating it.
func (f *fixedWin) pane(p int64) *pane {
	if f.last != nil && f.lastP == p {
		return f.last
	}
	pn := f.panes[p]
	if pn == nil {
		switch n := len(f.spare); {
		case len(f.panes) >= densePanes:
			pn = &pane{sparse: map[int32]int32{}}
		case n > 0:
			pn = f.spare[n-1]
			f.spare[n-1] = nil
			f.spare = f.spare[:n-1]
		default:
			pn = &pane{dense: make([]int32, 0, 64)}
		}
		f.panes[p] = pn
	}
	f.lastP, f.last = p, pn
	return pn
}

// deletePane forgets pane p, whose groups are gone; a dense pane is kept
// for reuse, so that a new pane does not grow its index again.
func (f *fixedWin) deletePane(p int64) {
	pn := f.panes[p]
	delete(f.panes, p)
	if f.lastP == p {
		f.last = nil
	}
	if pn != nil && pn.dense != nil && len(f.spare) < densePanes {
		pn.gids, pn.dense = pn.gids[:0], pn.dense[:0]
		f.spare = append(f.spare, pn)
	}
}

// group returns group (k, p), creating it.
func (f *fixedWin) group(r *waggRun, k int32, p int64) int32 {
	pn := f.pane(p)
	if g := pn.find(k); g >= 0 {
		return g
	}
	g := f.ids.get()
	r.initGroup(g, k, p, int(f.ids.next))
	r.gpos[g] = int32(len(pn.gids))
	pn.gids = append(pn.gids, g)
	if pn.dense != nil {
		pn.dense = growSlice(pn.dense, int(k)+1)
		pn.dense[k] = g + 1
	} else {
		pn.sparse[k] = g
	}
	return g
}

func newFixedWin(ws WindowSpec) (*fixedWin, error) {
	f := &fixedWin{kind: ws.Kind, size: ws.Size, slide: ws.Slide, off: ws.Offset,
		panes: map[int64]*pane{}, wins: map[int64][]int32{}}
	if f.size <= 0 {
		return nil, pgerr.Internal("stream: %s size %d", ws.Kind, ws.Size)
	}
	switch ws.Kind {
	case Tumble:
		f.plen = f.size
	case Hop, Cumulate:
		if f.slide <= 0 {
			return nil, pgerr.Internal("stream: %s slide %d", ws.Kind, ws.Slide)
		}
		f.plen = f.slide
		if ws.Kind == Hop {
			f.plen = gcd(f.size, f.slide)
		}
		if f.size/f.plen > maxPanes {
			return nil, pgerr.Unsupported("%s: a window of %d panes (size over the greatest common divisor of size and slide) is not supported; the limit is %d", ws, f.size/f.plen, maxPanes)
		}
	default:
		return nil, pgerr.Internal("stream: window kind %d", ws.Kind)
	}
	return f, nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// paneOf is the start of the pane holding time t; false when no window
// holds t (HOP with a slide larger than its size).
func (f *fixedWin) paneOf(t int64) (int64, bool) {
	switch f.kind {
	case Tumble:
		return alignDown(t, f.size, f.off), true
	case Hop:
		p := alignDown(t, f.plen, f.off)
		return p, p < alignDown(p, f.slide, f.off)+f.size
	}
	ps := alignDown(t, f.size, f.off)
	return ps + (t-ps)/f.slide*f.slide, true
}

// lastEnd is the end of the last window holding pane p.
func (f *fixedWin) lastEnd(p int64) int64 {
	switch f.kind {
	case Tumble:
		return p + f.size
	case Hop:
		return alignDown(p, f.slide, f.off) + f.size
	}
	return alignDown(p, f.size, f.off) + f.size
}

// windowEnds appends the ends of the windows holding pane p, ascending.
func (f *fixedWin) windowEnds(p int64, dst []int64) []int64 {
	switch f.kind {
	case Tumble:
		return append(dst, p+f.size)
	case Hop:
		top := alignDown(p, f.slide, f.off)
		for s := alignDown(p-f.size, f.slide, f.off) + f.slide; s <= top; s += f.slide {
			dst = append(dst, s+f.size)
		}
		return dst
	}
	ps := alignDown(p, f.size, f.off)
	last := ps + f.size
	for e := ps + ((p-ps)/f.slide+1)*f.slide; ; e += f.slide {
		dst = append(dst, min(e, last))
		if e >= last {
			return dst
		}
	}
}

// winStart is the start of the window ending at end.
func (f *fixedWin) winStart(end int64) int64 {
	if f.kind == Cumulate {
		return alignDown(end-1, f.size, f.off)
	}
	return end - f.size
}

// panesOf appends the starts of the panes of the window ending at end.
func (f *fixedWin) panesOf(end int64, dst []int64) []int64 {
	for p := f.winStart(end); p < end; p += f.plen {
		dst = append(dst, p)
	}
	return dst
}

// assign returns the group of a row with key k at time t (-1: in no
// window; lateRow: its pane was freed).
func (f *fixedWin) assign(r *waggRun, k int32, t int64) int32 {
	p, ok := f.paneOf(t)
	if !ok {
		return -1
	}
	if addSat(f.lastEnd(p), r.dl) <= r.wm {
		return lateRow
	}
	return f.group(r, k, p)
}

// translate marks the entries of the windows that the changed groups are
// part of (when tracked) and frees the groups left empty.
func (f *fixedWin) translate(r *waggRun) {
	for _, g := range r.gdirty {
		r.gmark[g] = false
		if r.tracked {
			k := r.gkey[g]
			f.ends = f.windowEnds(r.gt[g], f.ends[:0])
			last := len(f.ends) - 1
			for i, end := range f.ends {
				if addSat(end, r.dl) <= r.wm {
					continue // freed before these rows came
				}
				// the entry of the group's last window (TUMBLE: its only
				// one) is remembered, which saves most lookups
				if c := r.gent[g] - 1; i == last && c >= 0 && r.elive[c] && r.ekey[c] == k && r.ewid[c] == end {
					r.markEntry(c)
					continue
				}
				e, created := r.entry(k, end)
				if created {
					es := f.wins[end]
					r.epos[e] = int32(len(es))
					f.wins[end] = append(es, e)
				}
				if i == last {
					r.gent[g] = e + 1
				}
				r.markEntry(e)
			}
		}
		if r.rows[g] == 0 {
			f.removeGroup(r, g)
		}
	}
	r.gdirty = r.gdirty[:0]
}

// removeGroup frees group g and takes it out of its pane.
func (f *fixedWin) removeGroup(r *waggRun, g int32) {
	p := r.gt[g]
	pn := f.panes[p]
	i, last := r.gpos[g], pn.gids[len(pn.gids)-1]
	pn.gids[i] = last
	r.gpos[last] = i
	pn.gids = pn.gids[:len(pn.gids)-1]
	if k := r.gkey[g]; pn.dense != nil {
		pn.dense[k] = 0
	} else {
		delete(pn.sparse, k)
	}
	if len(pn.gids) == 0 {
		f.deletePane(p)
	}
	f.ids.put(g)
	r.dropGroup(g)
}

// dropEntry frees entry e and takes it out of its window's list.
func (f *fixedWin) dropEntry(r *waggRun, e int32) {
	end := r.ewid[e]
	es := f.wins[end]
	i, last := r.epos[e], es[len(es)-1]
	es[i] = last
	r.epos[last] = i
	if es = es[:len(es)-1]; len(es) == 0 {
		delete(f.wins, end)
	} else {
		f.wins[end] = es
	}
	r.freeEntry(e)
}

// flushEntries emits the changes of entries es (whose marks are cleared)
// and drops those left without rows.
func (f *fixedWin) flushEntries(r *waggRun, es []int32) error {
	if len(es) == 0 {
		return nil
	}
	dst, src := f.dst[:0], f.src[:0]
	for i, e := range es {
		k := r.ekey[e]
		f.pstarts = f.panesOf(r.ewid[e], f.pstarts[:0])
		for _, p := range f.pstarts {
			if g := f.lookup(k, p); g >= 0 {
				dst, src = append(dst, int32(i)), append(src, g)
			}
		}
	}
	f.dst, f.src = dst, src
	if err := r.compute(len(es), dst, src); err != nil {
		return err
	}
	for i, e := range es {
		end := r.ewid[e]
		r.emitEntry(e, i, r.rcount[i], f.winStart(end), end)
		if !r.emitted[e] {
			f.dropEntry(r, e)
		}
	}
	return nil
}

// flushDirty emits the changes of the marked entries whose window ends at
// an end that due accepts; the others stay marked.
func (f *fixedWin) flushDirty(r *waggRun, due func(end int64) bool) error {
	list, kept := f.list[:0], r.edirty[:0]
	for _, e := range r.edirty {
		switch {
		case !r.emark[e]: // flushed with its window already
		case due(r.ewid[e]):
			r.emark[e] = false
			list = append(list, e)
		default:
			kept = append(kept, e)
		}
	}
	r.edirty, f.list = kept, list
	return f.flushEntries(r, list)
}

// flushWindow emits the changes of the marked entries of window end.
func (f *fixedWin) flushWindow(r *waggRun, end int64) error {
	list := f.list[:0]
	for _, e := range f.wins[end] {
		if r.emark[e] {
			r.emark[e] = false
			list = append(list, e)
		}
	}
	f.list = list
	return f.flushEntries(r, list)
}

// emitWindow emits the final rows of window end (plain ON WINDOW CLOSE):
// one insert per key with rows in its panes.
func (f *fixedWin) emitWindow(r *waggRun, end int64) error {
	dst, src, keys := f.dst[:0], f.src[:0], f.tkeys[:0]
	f.pstarts = f.panesOf(end, f.pstarts[:0])
	for _, p := range f.pstarts {
		pn := f.panes[p]
		if pn == nil {
			continue
		}
		for _, g := range pn.gids {
			if r.rows[g] == 0 {
				continue
			}
			k := r.gkey[g]
			t := r.kslot[k] - 1
			if t < 0 {
				t = int32(len(keys))
				keys = append(keys, k)
				r.kslot[k] = t + 1
			}
			dst, src = append(dst, t), append(src, g)
		}
	}
	for _, k := range keys {
		r.kslot[k] = 0
	}
	f.dst, f.src, f.tkeys = dst, src, keys
	if err := r.compute(len(keys), dst, src); err != nil {
		return err
	}
	r.ob.addBlock(r, Insert, f.winStart(end), end, keys)
	return nil
}

// advanceFixed moves the watermark to wm: closes the windows whose end +
// delay it reached (ON WINDOW CLOSE), emits what the windows it frees still
// owe, and frees them and their panes.
func (r *waggRun) advanceFixed(wm int64) error {
	f := r.fix
	f.translate(r) // at the watermark the rows came under
	old := r.wm
	r.wm = wm
	reached := func(end, by int64) bool {
		t := addSat(end, by)
		return t > old && t <= wm
	}
	if r.eowc {
		ends := f.ends[:0]
		if r.tracked {
			for end := range f.wins {
				if reached(end, r.d) {
					ends = append(ends, end)
				}
			}
		} else {
			var buf []int64
			for p := range f.panes {
				buf = f.windowEnds(p, buf[:0])
				for _, end := range buf {
					if reached(end, r.d) {
						ends = append(ends, end)
					}
				}
			}
		}
		slices.Sort(ends)
		ends = slices.Compact(ends)
		f.ends = ends
		for _, end := range ends {
			var err error
			if r.tracked {
				err = f.flushWindow(r, end)
			} else {
				err = f.emitWindow(r, end)
			}
			if err != nil {
				return err
			}
		}
	}
	if r.tracked {
		var ends []int64
		for end := range f.wins {
			if addSat(end, r.dl) <= wm {
				ends = append(ends, end)
			}
		}
		slices.Sort(ends)
		for _, end := range ends {
			if err := f.flushWindow(r, end); err != nil {
				return err
			}
			for _, e := range f.wins[end] {
				r.freeEntry(e)
			}
			delete(f.wins, end)
		}
	}
	for p, pn := range f.panes {
		if addSat(f.lastEnd(p), r.dl) <= wm {
			for _, g := range pn.gids {
				if pn.dense != nil {
					pn.dense[r.gkey[g]] = 0 // for reuse: a spare pane's index is zero
				}
				f.ids.put(g)
				r.dropGroup(g)
			}
			f.deletePane(p)
		}
	}
	return nil
}

// barrierFixed emits the epoch's changes as the EMIT mode wants them.
func (r *waggRun) barrierFixed() error {
	f := r.fix
	f.translate(r)
	switch {
	case r.flushAll():
		return f.flushDirty(r, func(int64) bool { return true })
	case r.eowc && r.tracked: // corrections of closed windows
		return f.flushDirty(r, func(end int64) bool { return addSat(end, r.d) <= r.wm })
	}
	return nil
}
