package planner

import (
	"slices"

	"github.com/streamsql/streamsql/exec/stream"
)

// Shared source reads (docs/contributing/streaming.md, "Shared source
// reads"): a plan that scans one source or table more than once (a
// UNION ALL of two filters, a self-join, rows compared with an aggregate
// of the same rows) reads it once. The scans keep their own columns and
// their place in the plan; shareSources marks them with one
// stream.ScanShare, over the union of their columns, and the runtime
// opens one reader (or one set of split readers) for all of them and
// passes each batch on to every scan (exec/dataflow/share.go). Two
// readers of one generator would each build every event (a fifth of
// Nexmark q5's CPU, before its windowed count was computed once:
// stream_subshare.go), a Kafka topic would be fetched twice, and two
// readers of any source run apart, so the operators above them hold
// state for the gap.

// The exception: an interval join (or one that frees its rows by the
// watermark) whose one input is a source's rows as read (through
// stateless operators only) and whose other input is computed from the
// same source by a stateful operator (q7: the bids against the maximum
// of their window). The join must keep every row of the first input
// until the other's result for its time arrives, a window later. Read
// apart, the first input's reader runs behind the other (its consumer,
// the join, is the slower), so the rows arrive when the result they meet
// is there and are matched and dropped at once: the generator or the
// Kafka log is the buffer, at no cost. Read once, the join stores and
// frees each row: q7 at one core took 1.28-1.40 s against 0.94-1.40 s,
// at two 0.91-1.02 s against 0.45-0.53 s (8M events). Such a source is
// read once per scan, as before.

// shareSources marks the source scans under root that read the same
// source alike (the same readers and watermark) as one shared read. A
// scan that appears twice in the tree (one node with two parents) is
// left alone. Run last, after parallelize has set the readers. Without
// share (planner.Env.NoSharedReads) it only ties the scans read apart.
func shareSources(root stream.Node, share bool) {
	apart := readApart(root)
	if !share {
		return
	}
	seen := map[*stream.Scan]int{}
	byRel := map[uint32][]*stream.Scan{}
	var rels []uint32
	var walk func(n stream.Node)
	walk = func(n stream.Node) {
		if s, ok := n.(*stream.Shared); ok && s.Idx > 0 {
			return // not computed (stream_subshare.go)
		}
		if s, ok := n.(*stream.Scan); ok {
			seen[s]++
			if seen[s] == 1 && readOnce(s) && s.Share == nil {
				if byRel[s.Rel] == nil {
					rels = append(rels, s.Rel)
				}
				byRel[s.Rel] = append(byRel[s.Rel], s)
			}
			return
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(root)
	for _, rel := range rels {
		if apart[rel] {
			continue
		}
		var g []*stream.Scan
		for _, s := range byRel[rel] {
			if seen[s] == 1 {
				g = append(g, s)
			}
		}
		if len(g) < 2 {
			continue
		}
		if !alike(g) {
			continue
		}
		sh := &stream.ScanShare{Scans: len(g), Read: unionRead(g)}
		wm, ok := sharedWatermark(g, sh.Read)
		if !ok {
			continue
		}
		sh.Watermark = wm
		for i, s := range g {
			s.Share, s.ShareIdx = sh, i
			sh.Reads = append(sh.Reads, s.Read)
		}
	}
}

// alike reports whether the scans read their relation alike: the same
// readers, append-only and relation columns.
func alike(g []*stream.Scan) bool {
	for _, s := range g {
		if s.Readers != g[0].Readers || s.AppendOnly != g[0].AppendOnly || s.Splittable != g[0].Splittable || len(s.Cols) != len(g[0].Cols) {
			return false
		}
	}
	return true
}

// unionRead is the union of the scans' columns (Scan.Read, ascending),
// nil when that is every column.
func unionRead(g []*stream.Scan) []int {
	var read []int
	for _, s := range g {
		if s.Read == nil {
			return nil
		}
		for _, c := range s.Read {
			if !slices.Contains(read, c) {
				read = append(read, c)
			}
		}
	}
	slices.Sort(read)
	if len(read) == len(g[0].Cols) {
		return nil
	}
	return read
}

// sharedWatermark returns the scans' watermark over the columns read
// (nil when they have none), or false when they do not agree on it.
func sharedWatermark(g []*stream.Scan, read []int) (*stream.ScanWatermark, bool) {
	var out *stream.ScanWatermark
	var text string
	for i, s := range g {
		w := s.Watermark
		if (w == nil) != (g[0].Watermark == nil) {
			return nil, false
		}
		if w == nil {
			continue
		}
		sw := rebindWatermark(w, func(c int) int { // s's column c -> the read's
			if s.Read != nil {
				c = s.Read[c]
			}
			if read != nil {
				c = slices.Index(read, c)
			}
			return c
		})
		if i == 0 {
			out, text = sw, sw.String()
		} else if sw.String() != text || sw.Col != out.Col {
			return nil, false
		}
	}
	return out, true
}

// readApart returns the sources that a join reads apart (above): one
// input their rows as read, the other computed from them by a stateful
// operator. Where the other input reads the source once, the two scans
// get a stream.ScanLead and the raw one is kept behind the other
// (Scan.Behind): read apart, the raw rows' reader usually falls behind
// (the join is the slower consumer), but at four and eight instances on
// two cores it ran ahead in most runs, and the join then held 57-395 MiB
// of bids instead of about 30 (q7, 8M events).
func readApart(root stream.Node) map[uint32]bool {
	apart := map[uint32]bool{}
	var walk func(n stream.Node)
	walk = func(n stream.Node) {
		if s, ok := n.(*stream.Shared); ok && s.Idx > 0 {
			return // not computed (stream_subshare.go)
		}
		if j, ok := n.(*stream.HashJoin); ok && (j.Interval != nil || j.Clean != nil) {
			ins := j.Inputs()
			for i := range ins {
				raw := rawScan(ins[i])
				if raw == nil || !readOnce(raw) {
					continue
				}
				other := ins[1-i]
				if r := rawScan(other); r != nil && r.Rel == raw.Rel {
					continue // both sides as read: a self-join stores both either way
				}
				if leads, dead := scansOf(other, raw.Rel); len(leads) > 0 {
					apart[raw.Rel] = true
					if len(leads) == 1 && !dead && raw.Lead == nil && leads[0].Lead == nil && raw.Readers == leads[0].Readers {
						lead := &stream.ScanLead{Rel: raw.Rel}
						raw.Lead, raw.Behind, leads[0].Lead = lead, true, lead
					}
				}
			}
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(root)
	return apart
}

// rawScan is the scan under n through stateless operators only
// (stream.Fused), nil when a stateful operator is in between.
func rawScan(n stream.Node) *stream.Scan {
	for stream.Fused(n) {
		n = n.Inputs()[0]
	}
	s, _ := n.(*stream.Scan)
	return s
}

// scansOf returns the scans under n that read relation rel, and whether
// one of them is under a Shared that is not computed (its rows come from
// the group's first: stream_subshare.go).
func scansOf(n stream.Node, rel uint32) (scans []*stream.Scan, dead bool) {
	if s, ok := n.(*stream.Scan); ok {
		if s.Rel == rel {
			return []*stream.Scan{s}, false
		}
		return nil, false
	}
	for _, in := range n.Inputs() {
		got, d := scansOf(in, rel)
		scans, dead = append(scans, got...), dead || d || len(got) > 0 && isCopy(n)
	}
	return scans, dead
}

// isCopy reports whether n is a Shared that is not computed.
func isCopy(n stream.Node) bool {
	s, ok := n.(*stream.Shared)
	return ok && s.Idx > 0
}

// readOnce reports whether scans of s's kind may share a read: every
// kind (a source's reader, a table's feed, a view's changelog send the
// same rows to every scan of the share).
func readOnce(s *stream.Scan) bool {
	switch s.Kind {
	case stream.ScanSource, stream.ScanTable, stream.ScanView:
		return true
	}
	return false
}
