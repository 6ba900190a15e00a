package storage

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
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
	histPacked                     // a packed frame: whole deltas of small writes (below)
)

// A history write is written as packed frames, each holding whole deltas
// of up to packBytes: the deltas' old rows concatenated into one batch and
// their new rows into another, with each delta's flags and row counts:
//
//	u64 histPacked, u64 n, n x (u64 flags, u64 old rows, u64 new rows),
//	u64 has-old, [u64 0, u64 rows, u64 columns, the columns], the same for new
//
// A delta bigger than packBytes gets frames of its own, one per batch
// (histRows, recJoin linking them). So a write of many small statements
// (a transaction of single-row updates) costs a few frames and objects,
// not two per statement.
var packBytes int64 = 4 << 20

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

// encodePacked encodes whole deltas as one packed frame.
func encodePacked(ds []Delta, more bool) ([]byte, error) {
	kind := recHist
	if more {
		kind |= recMore
	}
	var olds, news []arrow.RecordBatch
	counts := make([]uint64, 0, 3*len(ds))
	for _, d := range ds {
		var fl, no, nn uint64
		if d.Update {
			fl = histUpdate
		}
		for _, b := range d.Deleted {
			no += uint64(b.NumRows())
		}
		for _, b := range d.Inserted {
			nn += uint64(b.NumRows())
		}
		olds, news = append(olds, d.Deleted...), append(news, d.Inserted...)
		counts = append(counts, fl, no, nn)
	}
	old, err := concatBatches(olds)
	if err != nil {
		return nil, err
	}
	nw, err := concatBatches(news)
	if err != nil {
		return nil, err
	}
	size := 16 + 8*len(counts) + 64
	for _, b := range []arrow.RecordBatch{old, nw} {
		if b != nil {
			if err := checkBatchSize(b, size); err != nil {
				return nil, err
			}
			size += int(recordBytes(b))
		}
	}
	e := newFrame(kind, size)
	e.u64(histPacked)
	e.u64(uint64(len(ds)))
	for _, c := range counts {
		e.u64(c)
	}
	for _, b := range []arrow.RecordBatch{old, nw} {
		if b == nil {
			e.u64(0)
			continue
		}
		e.u64(1)
		if err := encodeRows(e, 0, b); err != nil {
			return nil, err
		}
	}
	return sealFrame(e), nil
}

// decodePacked decodes a packed frame's body (after its flags) into r.
func decodePacked(d *decoder, schema *arrow.Schema, r *record) {
	n := d.count(len(d.buf) / 24)
	r.pack = make([]uint64, 3*n)
	for i := range r.pack {
		r.pack[i] = d.u64()
	}
	for k := 0; k < 2 && d.err == nil; k++ {
		if d.u64() == 0 {
			continue
		}
		_, b := decodeRows(d, schema)
		if b == nil {
			d.fail()
			return
		}
		if k == 0 {
			r.rec = b
		} else {
			r.rec2 = b
		}
	}
	var no, nn uint64
	for i := 0; i < n; i++ {
		no, nn = no+r.pack[3*i+1], nn+r.pack[3*i+2]
	}
	if d.err == nil && (no != packRows(r.rec) || nn != packRows(r.rec2)) {
		d.fail()
	}
}

func packRows(b arrow.RecordBatch) uint64 {
	if b == nil {
		return 0
	}
	return uint64(b.NumRows())
}

// concatBatches returns the rows of recs as one batch (nil for none).
func concatBatches(recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	switch len(recs) {
	case 0:
		return nil, nil
	case 1:
		return recs[0], nil
	}
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	cols := make([]arrow.Array, recs[0].NumCols())
	parts := make([]arrow.Array, len(recs))
	for c := range cols {
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, fmt.Errorf("storage: pack retained rows: %w", err)
		}
		cols[c] = a
	}
	return array.NewRecordBatch(recs[0].Schema(), cols, rows), nil
}

// packedRows holds a packed frame's rows; its deltas export slices of them.
type packedRows struct {
	old, new arrow.RecordBatch
}

// exportPacked is export for a delta of a packed frame: d.pOld and d.pNew
// are its row ranges.
func (d *delta) exportPacked() Delta {
	out := Delta{Update: d.update}
	if d.pOld[1] > d.pOld[0] {
		out.Deleted = []arrow.RecordBatch{sliceRows(d.packed.old, d.pOld)}
	}
	if d.pNew[1] > d.pNew[0] {
		out.Inserted = []arrow.RecordBatch{sliceRows(d.packed.new, d.pNew)}
	}
	return out
}

func sliceRows(b arrow.RecordBatch, r [2]int64) arrow.RecordBatch {
	if r[0] == 0 && r[1] == b.NumRows() {
		return b
	}
	return b.NewSlice(r[0], r[1])
}

// writeHistory writes the steps from position from up to position to (on
// one chain, to published) as history records. Nothing when from is nil.
func writeHistory(from, to *feedPos, write func([]byte) error) error {
	for p := from; p != nil && p != to; {
		s := p.next.Load()
		if s == nil || s.err != nil {
			return fmt.Errorf("storage: retained changes end at LSN %d before %d", p.seq, to.seq)
		}
		frames, err := stepFrames(s)
		if err != nil {
			return err
		}
		for i, fr := range frames {
			b, err := fr(i < len(frames)-1)
			if err != nil {
				return err
			}
			if err := write(b); err != nil {
				return err
			}
		}
		p = s.to
	}
	return nil
}

// stepFrames returns the encoders of a step's history frames (at least
// one), each given whether more frames follow.
func stepFrames(s *feedStep) ([]func(more bool) ([]byte, error), error) {
	var frames []func(bool) ([]byte, error)
	var pack []Delta
	var packed int64
	flush := func() {
		if len(pack) > 0 {
			ds := pack
			frames = append(frames, func(more bool) ([]byte, error) { return encodePacked(ds, more) })
			pack, packed = nil, 0
		}
	}
	for i := range s.deltas {
		d, err := s.deltas[i].export()
		if err != nil {
			return nil, err
		}
		if b := s.deltas[i].bytes; b <= packBytes {
			if packed+b > packBytes {
				flush()
			}
			pack, packed = append(pack, d), packed+b
			continue
		}
		flush()
		var fl uint64
		if d.Update {
			fl = histUpdate
		}
		var items []histItem
		for _, b := range d.Deleted {
			items = append(items, histItem{flags: fl | histDeleted, rec: b, join: true})
		}
		for _, b := range d.Inserted {
			items = append(items, histItem{flags: fl, rec: b, join: true})
		}
		if len(items) == 0 {
			items = append(items, histItem{flags: fl})
		}
		items[len(items)-1].join = false
		for _, it := range items {
			frames = append(frames, func(more bool) ([]byte, error) { return encodeHist(it.flags, it.rec, it.join, more) })
		}
	}
	flush()
	if len(frames) == 0 { // a step without deltas (none is written today)
		frames = append(frames, func(more bool) ([]byte, error) { return encodePacked(nil, more) })
	}
	return frames, nil
}

// histItem is one batch frame of a big history delta.
type histItem struct {
	flags uint64
	rec   arrow.RecordBatch // nil for an empty delta
	join  bool              // the next item belongs to the same delta
}

// histDeltas rebuilds a history write's deltas from its records: old rows
// of a big delta are kept as whole chunks of a TRUNCATE-like delta, which
// exports them as they are; a packed frame's deltas share its batches.
func histDeltas(rs []record) []delta {
	var out []delta
	var d delta
	for _, r := range rs {
		if r.flags&histPacked != 0 {
			pk := &packedRows{old: r.rec, new: r.rec2}
			var o, n int64
			for i := 0; i < len(r.pack); i += 3 {
				pd := delta{packed: pk, update: r.pack[i]&histUpdate != 0}
				pd.pOld = [2]int64{o, o + int64(r.pack[i+1])}
				pd.pNew = [2]int64{n, n + int64(r.pack[i+2])}
				o, n = pd.pOld[1], pd.pNew[1]
				pd.rows = (pd.pOld[1] - pd.pOld[0]) + (pd.pNew[1] - pd.pNew[0])
				pd.bytes = packedBytes(pk.old, pd.pOld) + packedBytes(pk.new, pd.pNew)
				out = append(out, pd)
			}
			continue
		}
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

// packedBytes estimates the bytes of rows r of b (at b's average row size).
func packedBytes(b arrow.RecordBatch, r [2]int64) int64 {
	if b == nil || b.NumRows() == 0 {
		return 0
	}
	return recordBytes(b) * (r[1] - r[0]) / b.NumRows()
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
	rp := &replayer{st: &state{meta: hdr.Meta}, hdr: hdr, hist: true}
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
		case recMeta:
			if st == rp.st {
				st = st.clone()
			}
			st.meta = r.meta
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
