package dataflow

import (
	"math"
	"slices"
	"sync"

	"github.com/streamsql/streamsql/exec/stream"
)

// A view's watermarks: the watermarks its plan's output carries are
// collected per epoch on the way to the view (tap, or runSink for a sink)
// and committed when the view publishes that epoch (onEpoch), so that what
// streamsql_views shows and what downstream views receive after an epoch's
// changes never runs ahead of the published rows.

// pendingMarks are the highest watermark per column seen since the last
// barrier. Owned by one goroutine.
type pendingMarks map[int]int64

func (p *pendingMarks) note(w stream.Watermark) {
	if *p == nil {
		*p = pendingMarks{}
	}
	if v, ok := (*p)[w.Col]; !ok || w.Value > v {
		(*p)[w.Col] = w.Value
	}
}

// markState is a job's watermarks. Safe for concurrent use.
type markState struct {
	mu     sync.Mutex
	queued []epochMarks  // seen before a barrier the view has not published yet
	cur    map[int]int64 // per output column: the highest committed
	sent   map[int]int64 // per output column: the last handed to subscribers
}

type epochMarks struct {
	epoch uint64
	marks pendingMarks
}

// queue records the watermarks seen before epoch e's barrier.
func (m *markState) queue(e uint64, p pendingMarks) {
	if len(p) == 0 {
		return
	}
	m.mu.Lock()
	m.queued = append(m.queued, epochMarks{e, p})
	m.mu.Unlock()
}

// commit makes the watermarks of epochs up to e current and returns those
// that rose since the last commit, in column order (for subscribers).
func (m *markState) commit(e uint64) []stream.Watermark {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, q := range m.queued {
		if q.epoch > e {
			break
		}
		n++
		for col, v := range q.marks {
			if old, ok := m.cur[col]; !ok || v > old {
				if m.cur == nil {
					m.cur = map[int]int64{}
				}
				m.cur[col] = v
			}
		}
	}
	m.queued = append(m.queued[:0], m.queued[n:]...)
	var out []stream.Watermark
	for col, v := range m.cur {
		if last, ok := m.sent[col]; !ok || v > last {
			if m.sent == nil {
				m.sent = map[int]int64{}
			}
			m.sent[col] = v
			out = append(out, stream.Watermark{Col: col, Value: v})
		}
	}
	slices.SortFunc(out, func(a, b stream.Watermark) int { return a.Col - b.Col })
	return out
}

// restore sets the committed watermarks of a resumed view (its
// checkpoint's), as already sent: downstream views resumed from the same
// checkpoint have them too.
func (m *markState) restore(marks []stream.Watermark) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, w := range marks {
		if m.cur == nil {
			m.cur, m.sent = map[int]int64{}, map[int]int64{}
		}
		m.cur[w.Col], m.sent[w.Col] = w.Value, w.Value
	}
}

// all returns the committed watermarks in column order.
func (m *markState) all() []stream.Watermark {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]stream.Watermark, 0, len(m.cur))
	for col, v := range m.cur {
		out = append(out, stream.Watermark{Col: col, Value: v})
	}
	slices.SortFunc(out, func(a, b stream.Watermark) int { return a.Col - b.Col })
	return out
}

// Watermarks returns the view's watermark per output column as of its last
// completed epoch, in column order.
func (j *Job) Watermarks() []stream.Watermark { return j.marks.all() }

// Watermark is the view's current watermark as of its last completed
// epoch: the highest over its columns (µs); false when none came yet.
func (j *Job) Watermark() (int64, bool) {
	m, ok := int64(math.MinInt64), false
	for _, w := range j.marks.all() {
		m, ok = max(m, w.Value), true
	}
	return m, ok
}

// carriesWatermarks reports whether watermarks can reach plan's output:
// some leaf has a watermark or reads a view, or a projection stamps
// PROCTIME() (watermarked by the clock).
func carriesWatermarks(n stream.Node) bool {
	if s, ok := n.(*stream.Scan); ok {
		return s.Watermark != nil || s.Kind == stream.ScanView
	}
	if p, ok := n.(*stream.Project); ok && len(p.ProcTimeCols()) > 0 {
		return true
	}
	for _, in := range n.Inputs() {
		if carriesWatermarks(in) {
			return true
		}
	}
	return false
}

// tap passes the plan's output on to the view, collecting its watermarks
// per epoch.
func (j *Job) tap(in <-chan stream.Message) <-chan stream.Message {
	out := make(chan stream.Message, stream.ChannelSize)
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		defer close(out)
		var pend pendingMarks
		for {
			var m stream.Message
			var ok bool
			select {
			case m, ok = <-in:
			case <-j.env.Ctx.Done():
				return
			}
			if !ok {
				return
			}
			switch m.Kind {
			case stream.KindWatermark:
				pend.note(m.Watermark)
			case stream.KindBarrier:
				j.marks.queue(m.Barrier.Epoch, pend)
				pend = nil
			}
			if !j.send(out, m) {
				return
			}
		}
	}()
	return out
}
