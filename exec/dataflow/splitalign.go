package dataflow

import (
	"math"
	"sync"
	"time"
)

// Aligned cuts of a split source (docs/contributing/parallel.md,
// "Sources"). The readers of a split generator each get every barrier
// when it is injected, but they run apart: one may be seconds of event
// time ahead of another when the barrier comes. Each then cuts its own
// stream where it stands, so an epoch holds a different span of event
// time from each reader, and a group whose rows come from both readers
// changes in two epochs where one reader would have changed it in one
// (an insert and later an update pair instead of one insert: the
// parallel plan emitted 1.5 to 2.5 times the rows of the serial one).
//
// So the readers of a split source whose streams advance together in
// event time (a generator's, not Kafka partitions, which may sit at any
// time) cut each epoch at one event time, as Flink's watermark alignment
// holds back a split that runs ahead: a reader that takes an epoch's
// barrier registers its watermark and sends no more rows until every
// reader (that has not ended) has registered; the epoch's cut is then the
// furthest of the registered watermarks, and each reader sends rows until
// its watermark reaches the cut, then the barrier. The reader that stood
// furthest sends its barrier at once. The epoch then holds the same span
// of event time from every reader, up to one batch, as one reader's epoch
// would. A barrier never waits longer than alignMaxWait (a reader whose
// rows have no event time, a stalled input), nor once the reader's input
// ended.

// Between barriers the readers are kept together too: a reader whose
// watermark is more than driftSteps of its own steps of event time ahead
// of another's (that has not ended) sends no rows until that one catches
// up, so the readers stay within about driftSteps steps of event time of
// each other (Flink's watermark alignment with a maximum drift). Left
// alone they drift apart by tens of seconds of event time within an epoch
// (at 10,000 events/s and a step of 4,096 rows or more, a 100 ms epoch is
// minutes of event time on a fast machine), and every keyed instance above
// them then holds that much more state, and a SESSION or window instance
// receives each key's rows out of order (Nexmark q11 at two readers held
// twice the state of one reader). A drift of zero (the readers taking
// turns a step each) woke a waiting reader at every step of the other,
// and the instances they feed with it: the instances' goroutines then
// changed cores about twice as often (docs/contributing/parallel.md,
// "Sources"). A reader waits at most driftMaxWait for a step: a sibling
// stalled for another reason does not stop it.

// A scan kept behind another (stream.Scan.Behind: the raw rows of an
// interval join whose other input aggregates the same source, read
// apart) follows the other scan's readers too: a reader of it whose
// watermark is ahead of a reader of the lead scan (that has not ended)
// sends no step until that one catches up, within the same driftMaxWait,
// and never while it holds a barrier (it then sends up to the barrier's
// cut: the lead may be waiting for that barrier downstream). The lead
// scan's readers never wait for it.

// alignMaxWait bounds how long a reader holds a barrier back.
const alignMaxWait = time.Second

// driftMaxWait bounds how long a reader that is ahead waits for the others
// before it sends its next step anyway.
const driftMaxWait = 100 * time.Millisecond

// driftSteps is how many of its own steps of event time a reader may run
// ahead of another before it waits.
const driftSteps = 8

// splitAlign is shared by the readers of one split source; safe for
// concurrent use.
type splitAlign struct {
	mu    sync.Mutex
	done  []bool        // per reader: its input ended
	marks []int64       // per reader: its watermark after its last step (MinInt64: none yet)
	moved chan struct{} // closed when a mark moves or a reader ends (nil: nobody waits)
	cuts  map[uint64]*alignCut
}

// alignCut is one epoch's cut.
type alignCut struct {
	at    int64  // the furthest registered watermark (MinInt64: none)
	in    []bool // per reader: registered
	n     int
	final chan struct{} // closed once every reader that has not ended registered
}

func newSplitAlign(k int) *splitAlign {
	marks := make([]int64, k)
	for i := range marks {
		marks[i] = math.MinInt64
	}
	return &splitAlign{done: make([]bool, k), marks: marks, cuts: map[uint64]*alignCut{}}
}

// mark records reader i's watermark wm after a step.
func (a *splitAlign) mark(i int, wm int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if wm > a.marks[i] {
		a.marks[i] = wm
		a.wake()
	}
}

// wake tells the readers waiting that a mark moved or a reader ended; mu
// is held.
func (a *splitAlign) wake() {
	if a.moved != nil {
		close(a.moved)
		a.moved = nil
	}
}

// ahead reports whether reader i, at watermark wm, is ahead of another
// reader that has not ended, and if so returns the channel closed when
// that may have changed (i = -1: a reader of another scan, ahead of any
// of these).
func (a *splitAlign) ahead(i int, wm int64) (<-chan struct{}, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for r, m := range a.marks {
		if r != i && !a.done[r] && m < wm {
			if a.moved == nil {
				a.moved = make(chan struct{})
			}
			return a.moved, true
		}
	}
	return nil, false
}

// register records reader i's watermark wm for epoch's cut and returns
// the cut.
func (a *splitAlign) register(i int, epoch uint64, wm int64) *alignCut {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.cuts[epoch]
	if c == nil {
		c = &alignCut{at: math.MinInt64, in: make([]bool, len(a.done)), final: make(chan struct{})}
		a.cuts[epoch] = c
	}
	c.at = max(c.at, wm)
	c.in[i] = true
	c.n++
	a.settle(epoch, c)
	return c
}

// settle closes c once every reader that has not ended registered; mu is
// held.
func (a *splitAlign) settle(epoch uint64, c *alignCut) {
	for r, in := range c.in {
		if !in && !a.done[r] {
			return
		}
	}
	close(c.final)
	delete(a.cuts, epoch)
}

// end records that reader i's input ended: no cut waits for it.
func (a *splitAlign) end(i int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.done[i] = true
	a.wake()
	for e, c := range a.cuts {
		a.settle(e, c)
	}
}

// cutAt returns c's cut and whether it is final.
func (a *splitAlign) cutAt(c *alignCut) (int64, bool) {
	select {
	case <-c.final:
	default:
		return 0, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return c.at, true
}

// aligner is one reader's side of a splitAlign: the barriers it holds
// back. Owned by the reader's goroutine.
type aligner struct {
	a       *splitAlign
	i       int
	lead    *splitAlign  // the lead scan's readers, when the scan is kept behind them (nil: none)
	pending []barrierReq // in order
	cuts    []*alignCut  // per pending barrier
	since   time.Time    // when the first pending barrier was held
	timer   *time.Timer

	waitFrom  time.Time   // when the reader began to wait for the others (zero: it does not)
	waitTimer *time.Timer // fires driftMaxWait after waitFrom

	last    int64 // the watermark after its last step (if stepped)
	stepped bool
	span    int64 // the event time its last step covered (0: not known yet)
}

// sent records the reader's watermark wm after a step it sent.
func (al *aligner) sent(wm int64) {
	if al == nil {
		return
	}
	al.waitFrom = time.Time{}
	if al.stepped && al.last != math.MinInt64 && wm > al.last {
		al.span = wm - al.last
	}
	al.last, al.stepped = wm, true
	al.a.mark(al.i, wm)
}

// floor is the watermark another reader may be behind before the reader,
// at watermark wm, waits: wm less driftSteps of its last step's span
// (MinInt64 where that would pass it).
func (al *aligner) floor(wm int64) int64 {
	if al.span <= 0 {
		return wm
	}
	room := uint64(wm) ^ 1<<63 // wm's distance above MinInt64, exact
	if uint64(al.span) > room/driftSteps {
		return math.MinInt64
	}
	return wm - driftSteps*al.span
}

// hold reports whether the reader, at watermark wm, must wait before its
// next step: it is ahead of another reader, and has not waited
// driftMaxWait yet. moved is closed when that may change, late fires when
// the wait is over.
func (al *aligner) hold(wm int64) (moved <-chan struct{}, late <-chan time.Time, ok bool) {
	if al == nil || wm == math.MinInt64 {
		return nil, nil, false
	}
	moved, ok = al.a.ahead(al.i, al.floor(wm))
	if !ok && al.lead != nil && len(al.pending) == 0 {
		moved, ok = al.lead.ahead(-1, wm)
	}
	if !ok {
		al.waitFrom = time.Time{}
		return nil, nil, false
	}
	now := time.Now()
	if al.waitFrom.IsZero() {
		al.waitFrom = now
		if al.waitTimer == nil {
			al.waitTimer = time.NewTimer(driftMaxWait)
		} else {
			al.waitTimer.Reset(driftMaxWait)
		}
	} else if now.Sub(al.waitFrom) >= driftMaxWait {
		return nil, nil, false
	}
	return moved, al.waitTimer.C, true
}

// take registers the barriers reqs just requested at the reader's
// watermark wm and returns those to send now (none: every barrier waits
// for the others' registrations, unless the others ended); it holds the
// others.
func (al *aligner) take(reqs []barrierReq, wm int64) []barrierReq {
	if len(reqs) == 0 {
		return nil
	}
	if len(al.pending) == 0 {
		al.since = time.Now()
		al.arm(alignMaxWait)
	}
	for _, b := range reqs {
		al.pending, al.cuts = append(al.pending, b), append(al.cuts, al.a.register(al.i, b.epoch, wm))
	}
	return al.ready(wm)
}

// blocked reports whether the reader must send no rows: the first held
// barrier's cut is not final yet.
func (al *aligner) blocked() bool {
	if al == nil || len(al.pending) == 0 {
		return false
	}
	_, ok := al.a.cutAt(al.cuts[0])
	return !ok
}

// settled is the channel closed when the first held barrier's cut
// becomes final, nil when none is held or it is final already.
func (al *aligner) settled() <-chan struct{} {
	if !al.blocked() {
		return nil
	}
	return al.cuts[0].final
}

// ready returns the held barriers whose cut is final and reached by the
// watermark wm, in order, and all of them once the first was held for
// alignMaxWait.
func (al *aligner) ready(wm int64) []barrierReq {
	if al == nil || len(al.pending) == 0 {
		return nil
	}
	n := 0
	if time.Since(al.since) >= alignMaxWait {
		n = len(al.pending)
	}
	for n < len(al.pending) {
		at, ok := al.a.cutAt(al.cuts[n])
		if !ok || wm < at {
			break
		}
		n++
	}
	return al.release(n)
}

// all returns every held barrier (the input ended).
func (al *aligner) all() []barrierReq { return al.release(len(al.pending)) }

func (al *aligner) release(n int) []barrierReq {
	if n == 0 {
		return nil
	}
	out := append([]barrierReq(nil), al.pending[:n]...)
	al.pending = append(al.pending[:0], al.pending[n:]...)
	al.cuts = append(al.cuts[:0], al.cuts[n:]...)
	if len(al.pending) > 0 {
		al.since = time.Now()
		al.arm(alignMaxWait)
	}
	return out
}

// arm (re)starts the timer that bounds the wait.
func (al *aligner) arm(d time.Duration) {
	if al.timer == nil {
		al.timer = time.NewTimer(d)
		return
	}
	al.timer.Reset(d)
}

// expired is the timer's channel while barriers are held, else nil.
func (al *aligner) expired() <-chan time.Time {
	if al == nil || len(al.pending) == 0 || al.timer == nil {
		return nil
	}
	return al.timer.C
}

// stop releases the timer.
func (al *aligner) stop() {
	if al != nil && al.timer != nil {
		al.timer.Stop()
	}
	if al != nil && al.waitTimer != nil {
		al.waitTimer.Stop()
	}
}
