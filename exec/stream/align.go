package stream

import (
	"math"
	"reflect"
)

// align reads several inputs for a multi-input operator, enforcing the two
// rules of the runtime:
//
//   - barriers align: once input i delivered epoch e's barrier, nothing more
//     is read from i until every open input delivered it; then onBarrier
//     runs once for the epoch;
//   - watermarks combine: onWatermark runs when the minimum over the open
//     inputs of a column's watermark rises.
//
// onChunk gets each chunk with its input index. A callback returning false
// stops align. align returns when every input is closed, a callback stops,
// or env.Ctx is canceled. It runs on the caller's goroutine.
func align(env *Env, inputs []<-chan Message,
	onChunk func(input int, c *Chunk) bool,
	onWatermark func(w Watermark) bool,
	onBarrier func(b Barrier) bool) {
	alignMapped(env, inputs, nil, nil, onChunk, onWatermark, onBarrier)
}

// alignMarks is align's watermark bookkeeping: per (mapped) column, each
// input's watermark (MinInt64: none yet) and the last one emitted. An
// operator that checkpoints keeps it as part of its state (a restored
// operator's inputs do not send their watermarks again). Owned by the
// goroutine running align.
type alignMarks struct {
	marks   map[int][]int64
	emitted map[int]int64
}

func newAlignMarks() *alignMarks {
	return &alignMarks{marks: map[int][]int64{}, emitted: map[int]int64{}}
}

// alignMapped is align where markCol first renames the column of each
// input's watermark (false drops it), for inputs whose columns differ (a
// join combines the watermarks of its two key columns). st, if not nil,
// holds the watermarks (see alignMarks).
func alignMapped(env *Env, inputs []<-chan Message, st *alignMarks,
	markCol func(input, col int) (int, bool),
	onChunk func(input int, c *Chunk) bool,
	onWatermark func(w Watermark) bool,
	onBarrier func(b Barrier) bool) {
	alignCore(env, inputs, st, markCol, nil, onChunk, onWatermark, onBarrier)
}

// inputEnded is the column of the watermark alignSides reports when an
// input closes: its value is math.MaxInt64 (no row will come).
const inputEnded = -1

// alignSides is align for operators that track each input's watermarks
// themselves (interval joins): onMark gets every watermark with its input
// index, uncombined, and a Watermark{Col: inputEnded, Value: MaxInt64}
// when the input closes.
func alignSides(env *Env, inputs []<-chan Message,
	onChunk func(input int, c *Chunk) bool,
	onMark func(input int, w Watermark) bool,
	onBarrier func(b Barrier) bool) {
	alignCore(env, inputs, nil, nil, onMark, onChunk, nil, onBarrier)
}

func alignCore(env *Env, inputs []<-chan Message, st *alignMarks,
	markCol func(input, col int) (int, bool),
	onMark func(input int, w Watermark) bool,
	onChunk func(input int, c *Chunk) bool,
	onWatermark func(w Watermark) bool,
	onBarrier func(b Barrier) bool) {
	n := len(inputs)
	open := make([]bool, n)
	blocked := make([]bool, n)
	for i := range open {
		open[i] = true
	}
	nOpen := n
	// marks[col][input] is the input's watermark for col; emitted[col] the
	// last one sent downstream.
	if st == nil {
		st = newAlignMarks()
	}
	marks, emitted := st.marks, st.emitted
	var pending *Barrier
	nBlocked := 0

	cases := make([]reflect.SelectCase, n+1)
	cases[n] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(env.Ctx.Done())}
	minMark := func(col int) int64 {
		m := int64(math.MaxInt64)
		for i, v := range marks[col] {
			if open[i] {
				m = min(m, v)
			}
		}
		return m
	}
	// releaseMarks emits, for every column, a risen minimum; an open input
	// that has not reported a watermark yet (MinInt64) holds it back.
	releaseMarks := func() bool {
		for col := range marks {
			m := minMark(col)
			if last, ok := emitted[col]; (!ok || m > last) && m != math.MaxInt64 && m != math.MinInt64 {
				emitted[col] = m
				if !onWatermark(Watermark{Col: col, Value: m}) {
					return false
				}
			}
		}
		return true
	}
	// releaseBarrier forwards the pending barrier once every open input is
	// blocked on it.
	releaseBarrier := func() bool {
		if pending == nil || nBlocked < nOpen {
			return true
		}
		b := *pending
		pending, nBlocked = nil, 0
		for i := range blocked {
			blocked[i] = false
		}
		return onBarrier(b)
	}
	bc := env.busyClock()
	for nOpen > 0 {
		bc.stop()
		for i := 0; i < n; i++ {
			ch := reflect.Value{}
			if open[i] && !blocked[i] {
				ch = reflect.ValueOf(inputs[i])
			}
			cases[i] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: ch}
		}
		i, v, ok := reflect.Select(cases)
		bc.start()
		if i == n {
			return // canceled
		}
		if !ok {
			open[i] = false
			nOpen--
			if blocked[i] {
				blocked[i] = false
				nBlocked--
			}
			if onMark != nil && !onMark(i, Watermark{Col: inputEnded, Value: math.MaxInt64}) {
				return
			}
			if !releaseMarks() || !releaseBarrier() {
				return
			}
			continue
		}
		m := v.Interface().(Message)
		switch m.Kind {
		case KindChunk:
			if !onChunk(i, m.Chunk) {
				return
			}
		case KindWatermark:
			w := m.Watermark
			if onMark != nil {
				if !onMark(i, w) {
					return
				}
				continue
			}
			if markCol != nil {
				col, ok := markCol(i, w.Col)
				if !ok {
					continue
				}
				w.Col = col
			}
			if marks[w.Col] == nil {
				marks[w.Col] = make([]int64, n)
				for j := range marks[w.Col] {
					marks[w.Col][j] = math.MinInt64
				}
			}
			if w.Value > marks[w.Col][i] {
				marks[w.Col][i] = w.Value
			}
			if !releaseMarks() {
				return
			}
		case KindBarrier:
			var err error
			if pending, err = joinBarrier(pending, m.Barrier); err != nil {
				env.Fail(err)
				return
			}
			blocked[i] = true
			nBlocked++
			if !releaseBarrier() {
				return
			}
		}
	}
}
