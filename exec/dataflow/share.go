package dataflow

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

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

// teed is a started stream teed to several receivers (the Shared nodes
// of a group, the scans of a shared read): per receiver, its channels
// (one per channel of the stream), and whether it took them. Owned by
// the starting job (rt.mu held).
type teed struct {
	chs    [][]<-chan stream.Message
	taken  []bool
	frag   int   // the stream's fragment
	meters []int // the stream's meters (a Shared's flow counts as its input)
}

// take returns receiver i's channels, false when they were taken.
func (t *teed) take(i int) ([]<-chan stream.Message, bool) {
	if i >= len(t.taken) || t.taken[i] {
		return nil, false
	}
	t.taken[i] = true
	return t.chs[i], true
}

// teeTo starts a tee behind each of ins (labeled as instance i of
// fragment frag in role, name), each message going to n receivers, cut
// for receiver m by views[m], and returns them teed.
func (j *Job) teeTo(ins []<-chan stream.Message, n int, views []shareView, frag int, role, name string) *teed {
	t := &teed{chs: make([][]<-chan stream.Message, n), taken: make([]bool, n), frag: frag}
	for i, in := range ins {
		outs := make([]chan stream.Message, n)
		for m := range outs {
			outs[m] = make(chan stream.Message, stream.ChannelSize)
			t.chs[m] = append(t.chs[m], outs[m])
		}
		j.wg.Add(1)
		j.labeled(frag, i, len(ins), role, name, func() { go j.tee(in, outs, views) })
	}
	return t
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
	if x.Idx == 0 && g == nil {
		in, err := j.startFlow(x.Input, ri)
		if err != nil {
			return flow{}, err
		}
		// no cut: every Shared of the group has the Input's columns
		g = j.teeTo(in.chs, x.Group.N, make([]shareView, x.Group.N), in.frag, RoleExchange, "")
		g.meters = in.meters
		if j.subplans == nil {
			j.subplans = map[*stream.SharedGroup]*teed{}
		}
		j.subplans[x.Group] = g
	}
	var chs []<-chan stream.Message
	ok := g != nil
	if ok {
		chs, ok = g.take(x.Idx)
	}
	if !ok {
		return flow{}, internalf("dataflow: share %d: copy %d started before the first, or twice", x.Group.ID, x.Idx)
	}
	return flow{chs: chs, meters: g.meters, frag: g.frag}, nil
}

// sharedRead is a shared read: the scan it opens (the share's columns),
// and once started its readers teed to the share's scans (by ShareIdx).
// Owned by the starting job (rt.mu held).
type sharedRead struct {
	scan *stream.Scan
	*teed
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
	sh := &sharedRead{scan: s.Shared()}
	j.shared[s.Share] = sh
	return sh
}

// startShared returns scan x's flow from its share's read, starting the
// read when x is the first of its scans to start; rt.mu is held.
func (j *Job) startShared(x *stream.Scan, ri *resumeInputs) (flow, error) {
	sh := j.sharedOf(x)
	if sh.teed == nil {
		if err := j.startRead(sh, x, ri); err != nil {
			return flow{}, err
		}
	}
	chs, ok := sh.take(x.ShareIdx)
	if !ok {
		return flow{}, internalf("dataflow: scan %d of the shared read of %s started twice", x.ShareIdx, x.Name)
	}
	f := flow{frag: sh.frag}
	for i, ch := range chs {
		f.add(j, j.startMetered(x, nil, i, len(chs), f.frag, j.env, []<-chan stream.Message{ch}))
	}
	return f, nil
}

// startRead opens sh's readers and tees each to the scans of s0's share.
func (j *Job) startRead(sh *sharedRead, s0 *stream.Scan, ri *resumeInputs) error {
	s := sh.scan
	frag := j.newFragment()
	var ins []<-chan stream.Message
	if k := j.rt.readersOf(s); k > 1 {
		chs, err := j.startSplit(s, k, frag, ri)
		if err != nil {
			return err
		}
		ins = chs
	} else {
		var ch <-chan stream.Message
		var err error
		j.labeled(frag, 0, 1, RoleReader, s.Name, func() { ch, err = j.startLeaf(s, ri) })
		if err != nil {
			return err
		}
		ins = []<-chan stream.Message{ch}
	}
	sh.teed = j.teeTo(ins, s0.Share.Scans, shareViews(s0), frag, RoleReader, s.Name)
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
	at := func(c int) int { return c } // relation column -> position in the read
	if sh.Read != nil {
		at = func(c int) int { return slices.Index(sh.Read, c) }
	}
	views := make([]shareView, sh.Scans)
	for m, read := range sh.Reads {
		if slices.Equal(read, sh.Read) {
			continue // the read's own columns: no cut
		}
		if read == nil {
			read = make([]int, len(s.Cols))
			for k := range read {
				read[k] = k
			}
		}
		v := shareView{cols: make([]int, len(read)), wmTo: -1}
		cols := make([]types.Column, len(read))
		for k, c := range read {
			v.cols[k], cols[k] = at(c), s.Cols[c]
		}
		v.schema = types.ArrowSchema(cols)
		if w := sh.Watermark; w != nil {
			v.wmFrom, v.wmTo = w.Col, slices.Index(v.cols, w.Col)
		}
		views[m] = v
	}
	return views
}

// cut returns m as the scan of view v sees it.
func (v *shareView) cut(m stream.Message) stream.Message {
	if v.cols == nil {
		return m
	}
	switch m.Kind {
	case stream.KindChunk:
		return stream.ChunkMsg(&stream.Chunk{Rec: pickColumns(m.Chunk.Rec, v.schema, v.cols), Ops: m.Chunk.Ops})
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
		if m.Kind == stream.KindChunk && m.Chunk.Recycle != nil && len(outs) > 1 {
			c := *m.Chunk // every scan reads the same arrays: none may give them back
			c.Recycle = nil
			m.Chunk = &c
		}
		for k, o := range outs {
			if !j.send(o, views[k].cut(m)) {
				return
			}
		}
	}
}
