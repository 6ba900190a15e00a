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
	frag   int // its fragment (labels.go)
}

// width is how many channels f has.
func (f flow) width() int { return len(f.chs) }

// startFlow starts n's operators, feeding its leaves, and returns its
// flow; rt.mu is held.
func (j *Job) startFlow(n stream.Node, ri *resumeInputs) (flow, error) {
	switch x := n.(type) {
	case *stream.Parallel:
		return j.startParallel(x, ri)
	case *stream.Shared:
		return j.startShare(x, ri) // share.go
	case *stream.Scan:
		if j.sharing(x) {
			return j.startShared(x, ri) // share.go
		}
		if x.Kind == stream.ScanSource {
			if k := j.rt.readersOf(x); k > 1 {
				f := flow{frag: j.newFragment()}
				chs, err := j.startSplit(x, k, f.frag, ri)
				if err != nil {
					return flow{}, err
				}
				for i, ch := range chs {
					f.add(j, j.startMetered(x, nil, i, k, f.frag, j.env, []<-chan stream.Message{ch}))
				}
				return f, nil
			}
		}
		f := flow{frag: j.newFragment()}
		var ch <-chan stream.Message
		var err error
		j.labeled(f.frag, 0, 1, RoleReader, x.Name, func() { ch, err = j.startLeaf(x, ri) })
		if err != nil {
			return flow{}, err
		}
		f.add(j, j.startMetered(x, nil, 0, 1, f.frag, j.env, []<-chan stream.Message{ch}))
		return f, nil
	}
	if stream.Fused(n) {
		in, err := j.startFlow(n.Inputs()[0], ri)
		if err != nil {
			return flow{}, err
		}
		f := flow{frag: in.frag}
		for k, ch := range in.chs {
			f.add(j, j.startMetered(n, in.meterOf(k), k, in.width(), in.frag, j.env, []<-chan stream.Message{ch}))
		}
		return f, nil
	}
	var ins []<-chan stream.Message
	var ids []int // the inputs' meters (opstats.go)
	var started []flow
	for _, c := range n.Inputs() {
		in, err := j.startFlow(c, ri)
		if err != nil {
			return flow{}, err
		}
		started = append(started, in)
		ids = append(ids, in.meters...)
	}
	f := flow{frag: j.newFragment()}
	for _, in := range started {
		ins = append(ins, j.gather(in, f.frag, 0, 1))
	}
	f.add(j, j.startMetered(n, ids, 0, 1, f.frag, j.env, ins))
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
// channels, labeled as instance inst of fragment frag (of width
// instances), the consumer's.
func (j *Job) gather(f flow, frag, inst, width int) <-chan stream.Message {
	if len(f.chs) == 1 {
		return f.chs[0]
	}
	var out <-chan stream.Message
	j.labeled(frag, inst, width, RoleMerge, "", func() { out = j.merge(f.chs) })
	return out
}
