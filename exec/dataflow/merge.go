package dataflow

import (
	"math"
	"reflect"

	"github.com/streamsql/streamsql/exec/stream"
)

// merge joins the streams of one fragment's instances into one (a gather,
// or the fan-in of an N×N exchange into one instance): rows as they come,
// a barrier once every open input delivered it, and per column the
// minimum of the watermarks of the active inputs (not ended, not idle,
// not closed; one that has not sent a watermark yet holds it back), or,
// with none active, the maximum over all. An input ends or
// goes idle by the reader marks (readerDone, readerIdle) of the split
// reader under it, which pass the fused operators and exchanges on the
// way; the marks never leave the merge. The output closes when every
// input has or the job ends.
//
// When several inputs have rows ready, the merge takes the input that is
// furthest behind in event time (the lowest watermark, then the fewest
// rows taken), and never passes over a ready input more than
// mergeMaxSkip times in a row. So the readers of a split source stay
// aligned in event time while the consumer is the bottleneck: a random
// choice lets them drift apart like a random walk (by an epoch's worth of
// events in a few seconds), and every group of a keyed operator that got
// rows from both readers in different epochs is emitted twice (an insert,
// then an update pair) instead of once. The order changes nothing else:
// every input's messages stay in order, and the choice is only among
// rows already there (no wait is added).
//
// Owned by its goroutine.
func (j *Job) merge(ins []<-chan stream.Message) <-chan stream.Message {
	out := make(chan stream.Message, stream.ChannelSize)
	m := newMerger(j, ins, out)
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		defer close(out)
		m.run()
	}()
	return out
}

// mergeMaxSkip bounds how many times in a row the merge passes over an
// input with rows ready for one further behind: an input whose producer
// never sends watermarks (or always lags) cannot starve the others.
const mergeMaxSkip = 8

// merger is the state of one merge's goroutine.
type merger struct {
	j   *Job
	ins []<-chan stream.Message
	out chan<- stream.Message

	open, blocked, done, idle []bool
	nOpen, nBlocked           int
	head                      []*stream.Chunk // per input: a chunk taken from it, not yet forwarded (nil: none)
	skipped                   []int           // per input: times its head was passed over in a row
	rows                      []int64         // per input: rows forwarded

	marks    map[int][]int64 // per column, per input (MinInt64: none yet)
	emitted  map[int]int64   // per column: the watermark sent on
	alignCol int             // the column whose watermarks order the inputs (-1: none yet)
	pending  *stream.Barrier

	cases []reflect.SelectCase
	chans []reflect.Value
}

func newMerger(j *Job, ins []<-chan stream.Message, out chan<- stream.Message) *merger {
	n := len(ins)
	m := &merger{j: j, ins: ins, out: out,
		open: make([]bool, n), blocked: make([]bool, n), done: make([]bool, n), idle: make([]bool, n),
		nOpen: n, head: make([]*stream.Chunk, n), skipped: make([]int, n), rows: make([]int64, n),
		marks: map[int][]int64{}, emitted: map[int]int64{}, alignCol: -1,
		cases: make([]reflect.SelectCase, n+1), chans: make([]reflect.Value, n)}
	for i := range n {
		m.open[i] = true
		m.chans[i] = reflect.ValueOf(ins[i])
	}
	m.cases[n] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(j.env.Ctx.Done())}
	return m
}

// run merges until every input has closed or the job ends.
func (m *merger) run() {
	n := len(m.ins)
	for m.nOpen > 0 {
		// take what the inputs hold without waiting
		for i := range n {
			if !m.poll(i) {
				return
			}
		}
		if k := m.pick(); k >= 0 {
			c := m.head[k]
			m.head[k] = nil
			m.rows[k] += int64(c.Len())
			if !m.j.send(m.out, stream.ChunkMsg(c)) {
				return
			}
			continue
		}
		if m.nOpen == 0 { // every input closed while polled
			return
		}
		// nothing ready: wait for any input
		for i := range n {
			ch := reflect.Value{} // a zero Chan is never ready: the input is closed or held at a barrier
			if m.open[i] && !m.blocked[i] {
				ch = m.chans[i]
			}
			m.cases[i] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: ch}
		}
		i, v, ok := reflect.Select(m.cases)
		if i == n {
			return
		}
		var msg stream.Message
		if ok {
			msg = v.Interface().(stream.Message)
		}
		if !m.take(i, msg, ok) {
			return
		}
	}
}

// poll takes input i's messages that are there without waiting, until
// it yields a chunk (its head), is held at a barrier or has closed.
func (m *merger) poll(i int) bool {
	for m.open[i] && !m.blocked[i] && m.head[i] == nil {
		select {
		case msg, ok := <-m.ins[i]:
			if !m.take(i, msg, ok) {
				return false
			}
		default:
			return true
		}
	}
	return true
}

// pick chooses the input whose head goes next (-1: no head): one passed
// over mergeMaxSkip times, else the one furthest behind in event time,
// then by rows forwarded.
func (m *merger) pick() int {
	best := -1
	for i := range m.head {
		if m.head[i] == nil {
			continue
		}
		if m.skipped[i] >= mergeMaxSkip {
			best = i
			break
		}
		if best < 0 || m.behind(i, best) {
			best = i
		}
	}
	if best < 0 {
		return -1
	}
	for i := range m.head {
		if i != best && m.head[i] != nil {
			m.skipped[i]++
		}
	}
	m.skipped[best] = 0
	return best
}

// behind reports whether input a is behind input b: a lower watermark on
// the aligning column, or, equal, fewer rows forwarded.
func (m *merger) behind(a, b int) bool {
	if ms := m.marks[m.alignCol]; m.alignCol >= 0 && ms[a] != ms[b] {
		return ms[a] < ms[b]
	}
	return m.rows[a] < m.rows[b]
}

// take handles message msg of input i (ok false: i closed).
func (m *merger) take(i int, msg stream.Message, ok bool) bool {
	if !ok {
		m.open[i], m.done[i] = false, true // closed: no row will come, as if ended
		m.nOpen--
		if m.blocked[i] {
			m.blocked[i] = false
			m.nBlocked--
		}
		return m.release() && m.releaseBarrier()
	}
	switch msg.Kind {
	case stream.KindChunk:
		m.head[i] = msg.Chunk
	case stream.KindWatermark:
		w := msg.Watermark
		switch w.Col {
		case readerDone:
			m.done[i] = true
		case readerIdle:
			m.idle[i] = w.Value != 0
		default:
			if m.marks[w.Col] == nil {
				ms := make([]int64, len(m.ins))
				for k := range ms {
					ms[k] = math.MinInt64
				}
				m.marks[w.Col] = ms
				if w.Col >= 0 && (m.alignCol < 0 || w.Col < m.alignCol) {
					m.alignCol = w.Col
				}
			}
			m.marks[w.Col][i] = max(m.marks[w.Col][i], w.Value)
		}
		return m.release()
	case stream.KindBarrier:
		b := msg.Barrier
		switch {
		case m.pending == nil:
			m.pending = &b
		case m.pending.Epoch != b.Epoch:
			m.j.fail(internalf("dataflow: the inputs of a merge delivered barriers of epochs %d and %d together", m.pending.Epoch, b.Epoch))
			return false
		default:
			m.pending.Checkpoint = m.pending.Checkpoint || b.Checkpoint
		}
		m.blocked[i] = true
		m.nBlocked++
		return m.releaseBarrier()
	}
	return true
}

// release sends on the watermarks that rose: per column the minimum over
// the active inputs; with none, the maximum over the ended and idle ones
// (all ended at the end; all idle: the idle readers' watermarks advance
// with processing time, as one reader's would).
func (m *merger) release() bool {
	for col, ms := range m.marks {
		v, active := int64(math.MaxInt64), false
		for i, x := range ms {
			if !m.done[i] && !m.idle[i] {
				v, active = min(v, x), true
			}
		}
		if !active {
			v = math.MinInt64
			for _, x := range ms {
				v = max(v, x)
			}
		}
		if last, ok := m.emitted[col]; (!ok || v > last) && v != math.MinInt64 && v != math.MaxInt64 {
			m.emitted[col] = v
			if !m.j.send(m.out, stream.WatermarkMsg(stream.Watermark{Col: col, Value: v})) {
				return false
			}
		}
	}
	return true
}

// releaseBarrier sends the pending barrier on once every open input has
// delivered it.
func (m *merger) releaseBarrier() bool {
	if m.pending == nil || m.nBlocked < m.nOpen {
		return true
	}
	b := *m.pending
	m.pending, m.nBlocked = nil, 0
	clear(m.blocked)
	return m.j.send(m.out, stream.BarrierMsg(b))
}
