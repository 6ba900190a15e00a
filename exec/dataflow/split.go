package dataflow

import (
	"fmt"
	"math"

	"github.com/streamsql/streamsql/exec/stream"
)

// Split sources (docs/contributing/parallel.md, "Sources"). A source scan
// whose connector splits (stream.Scan.Readers > 1, set by the planner at
// parallelism N for the generators) runs N readers, reader i reading
// share i of N (connector.ReaderOptions.Split). Each is a root of the job
// of its own: barriers are injected into each, each records its own
// position and watermark at a checkpoint (rootMeta.Split, Splits), and a
// resume with the same N gives each its position back. Each reader's
// stream runs through the stateless operators above the scan on its own
// (fragments.go); merge joins the streams where one is needed (an
// instance of the exchange's consumer, a single operator): barriers aligned,
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
// SplitInputs (or ColumnInputs, openScan).
func (j *Job) openSplit(s *stream.Scan, pos []byte, i, k int) (sourceRun, error) {
	return j.openScan(s, pos, i, k, func() (sourceRun, error) {
		sr, err := j.rt.in.(SplitInputs).OpenSourceSplit(j.spec.ID, s.Rel, pos, i, k, j.rowError)
		return readerRun(sr, pos, true), err
	})
}

// startSplit starts the k readers of source scan s and returns their
// streams, one per reader (the stateless operators above the scan run
// once per reader, fragments.go; merge joins them where one stream is
// needed), labeled as fragment frag's instances; rt.mu is held. ri, when the job resumes, holds the readers
// opened at their positions (one source root each, in order).
func (j *Job) startSplit(s *stream.Scan, k, frag int, ri *resumeInputs) ([]<-chan stream.Message, error) {
	outs := make([]<-chan stream.Message, k)
	var sa, lead *splitAlign
	if s.Watermark != nil {
		sa = newSplitAlign(k)
		if s.Lead != nil && j.sharesPlans() { // (in a cluster a scan's readers may run on other nodes)
			if lead = j.leadAlign(s.Lead, k); !s.Behind {
				sa, lead = lead, nil // the lead scan's own alignment, which the other scan follows
			}
		}
	}
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
		r, w := j.newSplitRoot(s, i, k, ri)
		if sa != nil && w != nil && src.partition == nil {
			src.align = &aligner{a: sa, i: i, lead: lead}
		}
		out := make(chan stream.Message, stream.ChannelSize)
		outs[i] = out
		j.wg.Add(1)
		j.labeled(frag, i, k, RoleReader, s.Name, func() { go j.readSource(r, src, w, out) })
	}
	return outs, nil
}

// leadAlign returns the alignment of the readers of the lead scan of
// lead (stream.Scan.Lead), k of them, made by whichever of the two scans
// starts first; nil when the two scans have different reader counts.
// rt.mu is held.
func (j *Job) leadAlign(lead *stream.ScanLead, k int) *splitAlign {
	if sa := j.leads[lead]; sa != nil {
		if len(sa.marks) != k {
			return nil
		}
		return sa
	}
	if j.leads == nil {
		j.leads = map[*stream.ScanLead]*splitAlign{}
	}
	sa := newSplitAlign(k)
	j.leads[lead] = sa
	return sa
}

// newSplitRoot adds the root of reader i of k of source scan s to the
// job, and returns it with its watermark tracker (given the checkpoint's
// watermark when the job resumes); rt.mu is held.
func (j *Job) newSplitRoot(s *stream.Scan, i, k int, ri *resumeInputs) (*root, *wmTracker) {
	r := newRoot()
	r.source, r.idx, r.split, r.splits = s.Rel, len(j.roots), i, k
	j.roots = append(j.roots, r)
	w := j.newWM(s)
	if ri != nil {
		ri.applyWM(w)
	}
	return r, w
}

// readerDone is the column of the watermark a split reader sends once its
// input has ended (value MaxInt64, stream.MarkEnded): merge stops waiting
// for its watermark. It passes the exchanges above the reader unchanged,
// and the fused operators (a partial window aggregate emits what it holds
// first), and never leaves a merge.
const readerDone = stream.MarkEnded

// readerIdle is the column of the watermark a split reader sends when it
// knows it has no input (a Kafka reader without partitions: value 1) and
// when it has some again (value 0): while idle it does not hold the
// merged watermark back. Like readerDone it never leaves a merge.
const readerIdle = stream.MarkIdle

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
