package dataflow

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// Shared source reads (docs/contributing/streaming.md, "Shared source
// reads"). The scans of a plan that read one source or table (the
// planner's stream.ScanShare: a UNION ALL of two filters of it, a
// self-join) are read once: the first of them that startFlow meets opens the source's
// reader, or its split readers, over the union of the scans' columns
// (Scan.Shared), and a tee behind every reader passes each message on to
// every scan of the share, a chunk as that scan's columns (the same
// arrays, not copied), a watermark with its column renumbered. The
// source then has one set of roots (positions, watermarks) in the
// checkpoint, and every scan sees the same rows between the same
// barriers, in the same order.
//
// Deadlock: a tee sends each message to every scan in turn and blocks on
// the slowest, so every scan has received everything before a barrier
// once any has received the barrier itself; an operator that aligns the
// barrier over two scans of the share (a join) waits only for messages
// the tee already sent. In a cluster (sharesPlans) reads are not
// shared: each scan reads on its own, as without a share.

// Shared subplans (stream.Shared, the same doc's "Shared subplans") go
// the same way: startFlow starts the Input of a group's first Shared
// (Idx 0, first in preorder, so first met) and tees each of its channels
// to every Shared of the group, whose own Inputs never start (their
// leaves open no reader, their operators keep no state). In a cluster
// (sharesPlans) every Shared runs its own Input.

// sharedFlow is the started first Shared of a group: per Shared of the
// group, its channels. Owned by the starting job (rt.mu held).
type sharedFlow struct {
	chs    [][]<-chan stream.Message
	meters []int
	frag   int
	taken  []bool
}

// sharesPlans reports whether the job computes each group of Shared
// subtrees once (and each shared read once): not in a cluster, whose
// nodes run parts of a plan by its operators' positions (nodesplits.go,
// upper.go) and compute every copy.
func (j *Job) sharesPlans() bool { return j.rt.cfg.Placement == nil }

// startShare returns x's flow: its group's first Input's, teed; rt.mu
// is held.
func (j *Job) startShare(x *stream.Shared, ri *resumeInputs) (flow, error) {
	if !j.sharesPlans() {
		return j.startFlow(x.Input, ri)
	}
	g := j.subplans[x.Group]
	if x.Idx == 0 {
		if g != nil {
			return flow{}, internalf("dataflow: share %d started twice", x.Group.ID)
		}
		in, err := j.startFlow(x.Input, ri)
		if err != nil {
			return flow{}, err
		}
		n := x.Group.N
		g = &sharedFlow{chs: make([][]<-chan stream.Message, n), meters: in.meters, frag: in.frag, taken: make([]bool, n)}
		outs := make([][]chan stream.Message, len(in.chs))
		for i := range in.chs {
			outs[i] = make([]chan stream.Message, n)
			for m := range n {
				ch := make(chan stream.Message, stream.ChannelSize)
				outs[i][m] = ch
				g.chs[m] = append(g.chs[m], ch)
			}
		}
		views := make([]shareView, n) // no cut: every Shared has the same columns
		for i, ch := range in.chs {
			j.wg.Add(1)
			j.labeled(in.frag, i, len(in.chs), RoleExchange, "", func() { go j.tee(ch, outs[i], views) })
		}
		if j.subplans == nil {
			j.subplans = map[*stream.SharedGroup]*sharedFlow{}
		}
		j.subplans[x.Group] = g
	}
	if g == nil || x.Idx >= len(g.taken) || g.taken[x.Idx] {
		return flow{}, internalf("dataflow: share %d: copy %d started before the first, or twice", x.Group.ID, x.Idx)
	}
	g.taken[x.Idx] = true
	return flow{chs: g.chs[x.Idx], meters: g.meters, frag: g.frag}, nil
}

// sharedRead is a started shared read; owned by the starting job (rt.mu
// held).
type sharedRead struct {
	scan  *stream.Scan              // the scan opened: the share's columns
	outs  [][]chan stream.Message   // per scan of the share (ShareIdx), per reader
	taken []bool                    // per scan of the share: started
	frag  int                       // the readers' fragment
	chs   [][]<-chan stream.Message // outs, receive side
}

// sharing reports whether scan s takes its rows from a shared read.
func (j *Job) sharing(s *stream.Scan) bool {
	return s.Share != nil && s.ShareIdx < s.Share.Scans && j.sharesPlans()
}

// sharedOf returns the shared read of s's share (not started yet when
// new); rt.mu is held.
func (j *Job) sharedOf(s *stream.Scan) *sharedRead {
	if sh := j.shared[s.Share]; sh != nil {
		return sh
	}
	if j.shared == nil {
		j.shared = map[*stream.ScanShare]*sharedRead{}
	}
	sh := &sharedRead{scan: s.Shared(), taken: make([]bool, s.Share.Scans)}
	j.shared[s.Share] = sh
	return sh
}

// startShared returns scan x's flow from its share's read, starting the
// read when x is the first of its scans to start; rt.mu is held.
func (j *Job) startShared(x *stream.Scan, ri *resumeInputs) (flow, error) {
	sh := j.sharedOf(x)
	if sh.taken[x.ShareIdx] {
		return flow{}, internalf("dataflow: scan %d of the shared read of %s started twice", x.ShareIdx, x.Name)
	}
	if sh.outs == nil {
		if err := j.startRead(sh, x, ri); err != nil {
			return flow{}, err
		}
	}
	sh.taken[x.ShareIdx] = true
	f := flow{frag: sh.frag}
	chs := sh.chs[x.ShareIdx]
	for i, ch := range chs {
		f.add(j, j.startMetered(x, nil, i, len(chs), f.frag, j.env, []<-chan stream.Message{ch}))
	}
	return f, nil
}

// startRead opens sh's readers and starts a tee behind each.
func (j *Job) startRead(sh *sharedRead, s0 *stream.Scan, ri *resumeInputs) error {
	s, share := sh.scan, s0.Share
	sh.frag = j.newFragment()
	var ins []<-chan stream.Message
	if k := j.rt.readersOf(s); k > 1 {
		chs, err := j.startSplit(s, k, sh.frag, ri)
		if err != nil {
			return err
		}
		ins = chs
	} else {
		var ch <-chan stream.Message
		var err error
		j.labeled(sh.frag, 0, 1, RoleReader, s.Name, func() { ch, err = j.startLeaf(s, ri) })
		if err != nil {
			return err
		}
		ins = []<-chan stream.Message{ch}
	}
	n := share.Scans
	sh.outs, sh.chs = make([][]chan stream.Message, n), make([][]<-chan stream.Message, n)
	for m := range n {
		sh.outs[m], sh.chs[m] = make([]chan stream.Message, len(ins)), make([]<-chan stream.Message, len(ins))
		for i := range ins {
			ch := make(chan stream.Message, stream.ChannelSize)
			sh.outs[m][i], sh.chs[m][i] = ch, ch
		}
	}
	views := shareViews(s0)
	for i, in := range ins {
		outs := make([]chan stream.Message, n)
		for m := range n {
			outs[m] = sh.outs[m][i]
		}
		j.wg.Add(1)
		j.labeled(sh.frag, i, len(ins), RoleReader, s.Name, func() { go j.tee(in, outs, views) })
	}
	return nil
}

// shareView is how one scan of a share cuts its chunks and watermarks
// from the shared read's: cols are the positions of its columns among
// the read's (nil: the same columns), schema its rows' schema, and wm
// maps the read's watermark column to its own.
type shareView struct {
	cols   []int
	schema *arrow.Schema
	wmFrom int
	wmTo   int
}

// shareViews returns the view of every scan of s's share (s is one of
// them).
func shareViews(s *stream.Scan) []shareView {
	sh := s.Share
	at := map[int]int{} // relation column -> position in the read
	for k := range s.Cols {
		at[k] = k
	}
	if sh.Read != nil {
		clear(at)
		for k, c := range sh.Read {
			at[c] = k
		}
	}
	views := make([]shareView, sh.Scans)
	for m, read := range sh.Reads {
		v := shareView{wmFrom: -1, wmTo: -1}
		if !slicesEqual(read, sh.Read) {
			if read == nil {
				read = make([]int, len(s.Cols))
				for k := range read {
					read[k] = k
				}
			}
			v.cols = make([]int, len(read))
			cols := make([]types.Column, len(read))
			for k, c := range read {
				v.cols[k], cols[k] = at[c], s.Cols[c]
			}
			v.schema = types.ArrowSchema(cols)
			if w := sh.Watermark; w != nil {
				v.wmFrom = w.Col
				for k, p := range v.cols {
					if p == w.Col {
						v.wmTo = k
					}
				}
			}
		}
		views[m] = v
	}
	return views
}

func slicesEqual(a, b []int) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// cut returns m as the scan of view v sees it.
func (v *shareView) cut(m stream.Message) stream.Message {
	if v.cols == nil {
		return m
	}
	switch m.Kind {
	case stream.KindChunk:
		rec := m.Chunk.Rec
		cols := make([]arrow.Array, len(v.cols))
		for k, p := range v.cols {
			cols[k] = rec.Column(p)
		}
		return stream.ChunkMsg(&stream.Chunk{Rec: array.NewRecordBatch(v.schema, cols, rec.NumRows()), Ops: m.Chunk.Ops})
	case stream.KindWatermark:
		if m.Watermark.Col == v.wmFrom && v.wmTo >= 0 {
			m.Watermark.Col = v.wmTo
		}
	}
	return m
}

// tee passes every message of in on to each of outs, cut for its scan
// (views), in order, and closes outs once in closes or the job ends.
func (j *Job) tee(in <-chan stream.Message, outs []chan stream.Message, views []shareView) {
	defer j.wg.Done()
	defer func() {
		for _, o := range outs {
			close(o)
		}
	}()
	for m := range in {
		for k, o := range outs {
			if !j.send(o, views[k].cut(m)) {
				return
			}
		}
	}
}
