package dataflow

import (
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
