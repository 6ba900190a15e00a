package storage

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// Retained writes on disk (lsn.go has the design). Compaction writes the
// retained writes after the table's snapshot as history records: each
// write (feed step) is a chain of recHist frames (recMore), one frame per
// batch of its deltas' rows, recJoin linking the frames of one delta. So
// a retained write survives compaction with its old rows although the
// state they were deleted from is gone. Recovery rebuilds the feed chain
// from the history, then from the writes after the snapshot, building
// their deltas against the replayed state as the live writers did.

// recHist flags.
const (
	histDeleted uint64 = 1 << iota // the batch holds old rows (Delta.Deleted), else new ones
	histUpdate                     // the delta is an UPDATE (Delta.Update)
	histRows                       // a batch follows; without it, the delta is empty
)

// encodeHist encodes one batch (nil: none) of a history delta. join says
// that the next frame continues the delta, more that it continues the write.
func encodeHist(flags uint64, rec arrow.RecordBatch, join, more bool) ([]byte, error) {
	kind := recHist
	if more {
		kind |= recMore
	}
	if join {
		kind |= recJoin
	}
	var size int
	if rec != nil {
		if err := checkBatchSize(rec, 8); err != nil {
			return nil, err
		}
		flags |= histRows
		size = 24 + int(recordBytes(rec))
	}
	e := newFrame(kind, 8+size)
	e.u64(flags)
	var err error
	if rec != nil {
		err = encodeRows(e, 0, rec)
	}
	return sealFrame(e), err
}

// histItem is one frame's worth of a history write.
type histItem struct {
	flags uint64
	rec   arrow.RecordBatch // nil for an empty delta
	join  bool              // the next item belongs to the same delta
}

// writeHistory writes the steps from position from up to position to (on
// one chain, to published) as history records. Nothing when from is nil.
func writeHistory(from, to *feedPos, write func([]byte) error) error {
	for p := from; p != nil && p != to; {
		s := p.next.Load()
		if s == nil || s.err != nil {
			return fmt.Errorf("storage: retained changes end at LSN %d before %d", p.seq, to.seq)
		}
		items, err := stepItems(s)
		if err != nil {
			return err
		}
		for i, it := range items {
			fr, err := encodeHist(it.flags, it.rec, it.join, i < len(items)-1)
			if err != nil {
				return err
			}
			if err := write(fr); err != nil {
				return err
			}
		}
		p = s.to
	}
	return nil
}

// stepItems exports a step's deltas as history items (at least one).
func stepItems(s *feedStep) ([]histItem, error) {
	var items []histItem
	for i := range s.deltas {
		d, err := s.deltas[i].export()
		if err != nil {
			return nil, err
		}
		var fl uint64
		if d.Update {
			fl = histUpdate
		}
		start := len(items)
		for _, b := range d.Deleted {
			items = append(items, histItem{flags: fl | histDeleted, rec: b, join: true})
		}
		for _, b := range d.Inserted {
			items = append(items, histItem{flags: fl, rec: b, join: true})
		}
		if len(items) == start {
			items = append(items, histItem{flags: fl})
		}
		items[len(items)-1].join = false
	}
	if len(items) == 0 { // a step without deltas (none is written today)
		items = append(items, histItem{})
	}
	return items, nil
}

// histDeltas rebuilds a history write's deltas from its records: old rows
// are kept as whole chunks of a TRUNCATE-like delta, which exports them as
// they are.
func histDeltas(rs []record) []delta {
	var out []delta
	var d delta
	for _, r := range rs {
		if r.flags&histUpdate != 0 {
			d.update = true
		}
		if r.rec != nil {
			if r.flags&histDeleted != 0 {
				d.trunc = append(d.trunc, Chunk{Rec: r.rec})
			} else {
				d.ins = append(d.ins, r.rec)
			}
			d.rows += r.rec.NumRows()
			d.bytes += recordBytes(r.rec)
		}
		if !r.join {
			out = append(out, d)
			d = delta{}
		}
	}
	return out
}

// replayer rebuilds a table's state and the feed chain of its retained
// writes from its log (recover.go reads the frames).
type replayer struct {
	st   *state
	hdr  headerDef
	cur  *feedPos // the position of st
	hist bool     // history records may still come (none after a write)

	retaining bool
	keep      uint64   // writes after keep are retained (when retaining)
	root      *feedPos // the position at keep (or the oldest kept after it)
}

func newReplayer(hdr headerDef, marks retainMarks) *replayer {
	rp := &replayer{st: &state{}, hdr: hdr, hist: true}
	rp.cur = &feedPos{seq: hdr.Hist}
	if hdr.Hist > hdr.LSN || hdr.Hist < hdr.Base {
		rp.cur.seq = hdr.LSN // not a history this reader understands
	}
	rp.retaining = marks.n > 0
	rp.keep = max(marks.older, hdr.Base)
	return rp
}

// wantDeltas reports whether the next write is retained.
func (rp *replayer) wantDeltas() bool { return rp.retaining && rp.cur.seq >= rp.keep }

// step moves past one write with deltas ds (nil when not retained).
func (rp *replayer) step(ds []delta) {
	from := rp.cur
	if rp.retaining && rp.root == nil && from.seq >= rp.keep {
		rp.root = from
	}
	to := &feedPos{seq: from.seq + 1, rows: from.rows, bytes: from.bytes}
	if rp.root != nil {
		for i := range ds {
			to.rows += ds[i].rows
			to.bytes += ds[i].bytes
		}
		from.next.Store(&feedStep{deltas: ds, to: to})
	}
	rp.cur = to
}

// endHistory is called before the first write after the snapshot part: the
// history must have led to the snapshot's LSN, else it is dropped.
func (rp *replayer) endHistory() {
	if !rp.hist {
		return
	}
	rp.hist = false
	if rp.cur.seq != rp.hdr.LSN {
		rp.cur, rp.root = &feedPos{seq: rp.hdr.LSN}, nil
	}
}

// write replays one complete write (its frames, in order).
func (rp *replayer) write(rs []record) error {
	switch rs[0].kind {
	case recChunk:
		for _, r := range rs {
			if r.kind != recChunk {
				return fmt.Errorf("record kind %d chained to a chunk", r.kind)
			}
			rp.st = rp.st.withChunk(Chunk{Rec: r.rec, FirstRowID: r.first, Deleted: r.deleted})
		}
		return nil
	case recHist:
		if !rp.hist {
			return fmt.Errorf("history record after the log's writes")
		}
		for _, r := range rs {
			if r.kind != recHist {
				return fmt.Errorf("record kind %d chained to a history record", r.kind)
			}
		}
		var ds []delta
		if rp.wantDeltas() {
			ds = histDeltas(rs)
		}
		rp.step(ds)
		return nil
	}
	rp.endHistory()
	build := rp.wantDeltas()
	var ds []delta
	var ins []arrow.RecordBatch // the batches of a joined insert so far
	st := rp.st
	for _, r := range rs {
		switch r.kind {
		case recInsert:
			st = st.withInsert(r.first, r.rec)
			if build {
				ins = append(ins, r.rec)
				if !r.join {
					ds = append(ds, insertDelta(ins))
					ins = nil
				}
			}
		case recDelete:
			var refs []rowRef
			st, refs = st.withDelete(r.ids)
			if build {
				ds = append(ds, deleteDelta(refs))
			}
		case recUpdate:
			var olds []rowRef
			st, olds = st.withDelete(r.ids)
			st = st.withInsert(r.first, r.rec)
			if build {
				ds = append(ds, updateDelta(olds, r.rec))
			}
		case recTruncate:
			if build {
				ds = append(ds, truncateDelta(st))
			}
			st = st.truncated()
		default:
			return fmt.Errorf("unexpected record kind %d", r.kind)
		}
	}
	if len(ins) > 0 { // a joined insert whose last frame had the flag (not written today)
		ds = append(ds, insertDelta(ins))
	}
	rp.st = st
	rp.step(ds)
	return nil
}

// finish returns the replayed state (at its position) and the retained root.
func (rp *replayer) finish() (*state, *feedPos) {
	rp.endHistory()
	if rp.retaining && rp.root == nil {
		rp.root = rp.cur
	}
	rp.st.pos = rp.cur
	return rp.st, rp.root
}
