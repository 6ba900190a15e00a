package dataflow

import (
	"fmt"
	"math"
	"reflect"

	"github.com/streamsql/streamsql/exec/stream"
)

// Split sources (docs/contributing/parallel.md, "Sources"). A source scan
// whose connector splits (stream.Scan.Readers > 1, set by the planner at
// parallelism N for the generators) runs N readers, reader i reading
// share i of N (connector.ReaderOptions.Split). Each is a root of the job
// of its own: barriers are injected into each, each records its own
// position and watermark at a checkpoint (rootMeta.Split, Splits), and a
// resume with the same N gives each its position back. mergeReaders
// joins the readers' streams into the scan's one: barriers aligned,
// watermarks the minimum over the readers that have not ended and are not
// idle (a Kafka reader whose share has no partition), and, once all have
// ended, the maximum over all (the watermark one reader of the whole input
// ends at: a generator's events are spread over the readers, so the last
// event is one reader's, whichever ends last).

// SplitInputs is implemented by Inputs whose sources can be read by
// several readers, each its share (the engine's, the benchmark's).
// Without it every source is read by one reader.
type SplitInputs interface {
	// OpenSourceSplit opens reader split of splits of source oid for the
	// job (the view's OID) at pos (nil: the start), pos being a position
	// that reader split of splits reported.
	OpenSourceSplit(job, oid uint32, pos []byte, split, splits int, onError func(error)) (SourceReader, error)
}

// readersOf is how many readers the runtime runs for scan s: its
// Readers when it is a source scan whose inputs can split, else 1.
func (rt *Runtime) readersOf(s *stream.Scan) int {
	if s.Kind != stream.ScanSource || s.Readers <= 1 {
		return 1
	}
	if _, ok := rt.in.(SplitInputs); !ok {
		return 1
	}
	return s.Readers
}

// openSplit opens reader i of k of scan s at pos through the inputs'
// SplitInputs.
func (j *Job) openSplit(s *stream.Scan, pos []byte, i, k int) (sourceRun, error) {
	si := j.rt.in.(SplitInputs)
	sr, err := si.OpenSourceSplit(j.spec.ID, s.Rel, pos, i, k, j.rowError)
	if err != nil {
		return sourceRun{}, err
	}
	return sourceRun{run: sr.Run, position: sr.Position, partition: sr.Partition, partitions: sr.Partitions,
		marks: sr.Marks, finite: sr.Finite, inputEnd: sr.InputEnd, start: pos, split: true}, nil
}

// startSplit starts the k readers of source scan s and returns their
// merged stream; rt.mu is held. ri, when the job resumes, holds the
// readers opened at their positions (one source root each, in order).
func (j *Job) startSplit(s *stream.Scan, k int, ri *resumeInputs) (<-chan stream.Message, error) {
	outs := make([]<-chan stream.Message, k)
	for i := range k {
		var src sourceRun
		if ri != nil {
			src = ri.srcs[ri.ns]
			ri.ns++
		} else {
			var err error
			if src, err = j.openSplit(s, nil, i, k); err != nil {
				return nil, err
			}
		}
		r := newRoot()
		r.source, r.idx, r.split, r.splits = s.Rel, len(j.roots), i, k
		j.roots = append(j.roots, r)
		w := j.newWM(s)
		if ri != nil {
			ri.applyWM(w)
		}
		out := make(chan stream.Message, stream.ChannelSize)
		outs[i] = out
		j.wg.Add(1)
		go j.readSource(r, src, w, out)
	}
	return j.mergeReaders(outs), nil
}

// readerDone is the column of the watermark a split reader sends once its
// input has ended (value MaxInt64): mergeReaders stops waiting for its
// watermark. It never leaves mergeReaders.
const readerDone = -2

// readerIdle is the column of the watermark a split reader sends when it
// knows it has no input (a Kafka reader without partitions: value 1) and
// when it has some again (value 0): while idle it does not hold the
// merged watermark back. It never leaves mergeReaders.
const readerIdle = -3

// idleMsg is what a split reader sends when it goes idle or active.
func idleMsg(idle bool) stream.Message {
	v := int64(0)
	if idle {
		v = 1
	}
	return stream.WatermarkMsg(stream.Watermark{Col: readerIdle, Value: v})
}

// doneMsg is what a split reader sends when its input ended.
func doneMsg() stream.Message {
	return stream.WatermarkMsg(stream.Watermark{Col: readerDone, Value: math.MaxInt64})
}

// mergeReaders merges the streams of a split source's readers into one:
// rows as they come, a barrier once every open reader delivered it, and
// per column the minimum of the watermarks of the active readers (input
// not ended, not idle; one that has not sent a watermark yet holds it
// back), or, with none active, the maximum over those that ended. The output closes
// when every input has or the job ends.
func (j *Job) mergeReaders(ins []<-chan stream.Message) <-chan stream.Message {
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
				// maximum over the ended ones (all of them at the end)
				m, active := int64(math.MaxInt64), false
				for i, v := range ms {
					if !done[i] && !idle[i] {
						m, active = min(m, v), true
					}
				}
				if !active {
					m = math.MinInt64
					for i, v := range ms {
						if done[i] {
							m = max(m, v)
						}
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
				ch := reflect.Value{} // a zero Chan is never ready: the reader is closed or held at a barrier
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
				open[i] = false
				nOpen--
				if blocked[i] {
					blocked[i] = false
					nBlocked--
				}
				if !releaseBarrier() {
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
					j.fail(internalf("dataflow: the readers of a source delivered barriers of epochs %d and %d together", pending.Epoch, b.Epoch))
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

// splitWhy checks the checkpoint's roots from index at for source scan s
// read by k readers now: "" when they are its k readers in order, else
// why the job cannot resume.
func splitWhy(roots []rootMeta, at int, s *stream.Scan, k int) string {
	if at >= len(roots) {
		return "its inputs changed"
	}
	if old := max(roots[at].Splits, 1); old != k {
		return fmt.Sprintf("source %s was read by %d readers and is now read by %d (a reader resumes only its own share)", s.Name, old, k)
	}
	for i := range k {
		if at+i >= len(roots) {
			return "its inputs changed"
		}
		rm := roots[at+i]
		if rm.Source != s.Rel || max(rm.Splits, 1) != k || rm.Split != i {
			return "its inputs changed"
		}
	}
	return ""
}
