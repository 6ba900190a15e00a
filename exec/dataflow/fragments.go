package dataflow

import (
	"math"
	"reflect"

	"github.com/streamsql/streamsql/exec/stream"
)

// Fragments (docs/contributing/parallel.md). A started subtree of the
// plan sends a flow: one channel, or one per instance of its fragment,
// whose union is the subtree's output. A split source scan sends one per
// reader (split.go), a Parallel one per instance of its operator
// (parallel.go), and a fused operator (stream.Fused: Filter, Project,
// WindowExpand) runs once per channel of its input, so the stateless
// chain above a split source or a parallel operator runs N-way. An
// exchange takes every channel of its input (each instance hashes its
// rows straight to the consumer's instances: N×N), and every other
// operator, single, gets each input gathered into one stream (merge).

// flow is the output of a started subtree: its channels, and per channel
// the id of the meter counting it (nil when the runtime does not count).
// Used while the job starts only.
type flow struct {
	chs    []<-chan stream.Message
	meters []int
}

// width is how many channels f has.
func (f flow) width() int { return len(f.chs) }

// startFlow starts n's operators, feeding its leaves, and returns its
// flow; rt.mu is held.
func (j *Job) startFlow(n stream.Node, ri *resumeInputs) (flow, error) {
	switch x := n.(type) {
	case *stream.Parallel:
		return j.startParallel(x, ri)
	case *stream.Scan:
		if x.Kind == stream.ScanSource {
			if k := j.rt.readersOf(x); k > 1 {
				chs, err := j.startSplit(x, k, ri)
				if err != nil {
					return flow{}, err
				}
				var f flow
				for i, ch := range chs {
					f.add(j, j.startMetered(x, nil, i, j.env, []<-chan stream.Message{ch}))
				}
				return f, nil
			}
		}
		ch, err := j.startLeaf(x, ri)
		if err != nil {
			return flow{}, err
		}
		var f flow
		f.add(j, j.startMetered(x, nil, 0, j.env, []<-chan stream.Message{ch}))
		return f, nil
	}
	if stream.Fused(n) {
		in, err := j.startFlow(n.Inputs()[0], ri)
		if err != nil {
			return flow{}, err
		}
		var f flow
		for k, ch := range in.chs {
			f.add(j, j.startMetered(n, in.meterOf(k), k, j.env, []<-chan stream.Message{ch}))
		}
		return f, nil
	}
	var ins []<-chan stream.Message
	var ids []int // the inputs' meters (opstats.go)
	for _, c := range n.Inputs() {
		in, err := j.startFlow(c, ri)
		if err != nil {
			return flow{}, err
		}
		ins = append(ins, j.gather(in))
		ids = append(ids, in.meters...)
	}
	var f flow
	f.add(j, j.startMetered(n, ids, 0, j.env, ins))
	return f, nil
}

// add appends ch, just started by startMetered (its meter in
// j.outMeters), to f.
func (f *flow) add(j *Job, ch <-chan stream.Message) {
	f.chs = append(f.chs, ch)
	f.meters = append(f.meters, j.outMeters...)
}

// meterOf is the meter of channel k as a list of input ids (nil when not
// counting).
func (f flow) meterOf(k int) []int {
	if k < len(f.meters) {
		return f.meters[k : k+1]
	}
	return nil
}

// gather returns f as one stream: its channel, or the merge of its
// channels.
func (j *Job) gather(f flow) <-chan stream.Message {
	if len(f.chs) == 1 {
		return f.chs[0]
	}
	return j.merge(f.chs)
}

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
func (j *Job) merge(ins []<-chan stream.Message) <-chan stream.Message {
	out := make(chan stream.Message, stream.ChannelSize)
	n := len(ins)
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		defer close(out)
		open, blocked, done, idle := make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n)
		for i := range open {
			open[i] = true
		}
		nOpen, nBlocked := n, 0
		marks := map[int][]int64{} // per column, per reader (MinInt64: none yet)
		emitted := map[int]int64{}
		var pending *stream.Barrier
		release := func() bool {
			for col, ms := range marks {
				// the minimum over the active readers; with none, the
				// maximum over the ended and idle ones (all ended at the
				// end; all idle: the idle readers' watermarks advance
				// with processing time, as one reader's would)
				m, active := int64(math.MaxInt64), false
				for i, v := range ms {
					if !done[i] && !idle[i] {
						m, active = min(m, v), true
					}
				}
				if !active {
					m = math.MinInt64
					for _, v := range ms {
						m = max(m, v)
					}
				}
				if last, ok := emitted[col]; (!ok || m > last) && m != math.MinInt64 && m != math.MaxInt64 {
					emitted[col] = m
					if !j.send(out, stream.WatermarkMsg(stream.Watermark{Col: col, Value: m})) {
						return false
					}
				}
			}
			return true
		}
		releaseBarrier := func() bool {
			if pending == nil || nBlocked < nOpen {
				return true
			}
			b := *pending
			pending, nBlocked = nil, 0
			clear(blocked)
			return j.send(out, stream.BarrierMsg(b))
		}
		cases := make([]reflect.SelectCase, n+1)
		cases[n] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(j.env.Ctx.Done())}
		chans := make([]reflect.Value, n)
		for i := range n {
			chans[i] = reflect.ValueOf(ins[i])
		}
		for nOpen > 0 {
			for i := range n {
				ch := reflect.Value{} // a zero Chan is never ready: the input is closed or held at a barrier
				if open[i] && !blocked[i] {
					ch = chans[i]
				}
				cases[i] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: ch}
			}
			i, v, ok := reflect.Select(cases)
			if i == n {
				return
			}
			if !ok {
				open[i], done[i] = false, true // closed: no row will come, as if ended
				nOpen--
				if blocked[i] {
					blocked[i] = false
					nBlocked--
				}
				if !release() || !releaseBarrier() {
					return
				}
				continue
			}
			m := v.Interface().(stream.Message)
			switch m.Kind {
			case stream.KindChunk:
				if !j.send(out, m) {
					return
				}
			case stream.KindWatermark:
				w := m.Watermark
				switch w.Col {
				case readerDone:
					done[i] = true
				case readerIdle:
					idle[i] = w.Value != 0
				default:
					if marks[w.Col] == nil {
						marks[w.Col] = make([]int64, n)
						for k := range marks[w.Col] {
							marks[w.Col][k] = math.MinInt64
						}
					}
					marks[w.Col][i] = max(marks[w.Col][i], w.Value)
				}
				if !release() {
					return
				}
			case stream.KindBarrier:
				b := m.Barrier
				switch {
				case pending == nil:
					pending = &b
				case pending.Epoch != b.Epoch:
					j.fail(internalf("dataflow: the inputs of a merge delivered barriers of epochs %d and %d together", pending.Epoch, b.Epoch))
					return
				default:
					pending.Checkpoint = pending.Checkpoint || b.Checkpoint
				}
				blocked[i] = true
				nBlocked++
				if !releaseBarrier() {
					return
				}
			}
		}
	}()
	return out
}
