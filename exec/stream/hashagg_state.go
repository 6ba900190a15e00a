package stream

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
)

// A HashAgg's checkpointed state (issue 5) is one record per group id ever
// handed out (ids [0, next)) and a meta record:
//
//   - "g" + the id (4 bytes, big-endian): a live group is 1, its input row
//     count (varint), whether its row is live downstream (a byte), its key
//     cells, the results it last emitted (cells, only when its row is
//     live downstream), then each aggregate's
//     state (aggCol.appendState); a free id is 0 and its position in the
//     table's free list (uvarint), so that ids are handed out again in the
//     same order and the output (ordered by group id) is the same.
//   - "m": a version byte, whether the global group was emitted, next, the
//     watermarks last sent per output column, with AggClean the key's
//     input and output watermarks and the late row count, and the arrival
//     counters of string_agg and array_agg (aggcollect.go; none without
//     them).
//
// Group ids change only through the groups an epoch touched and the groups
// freed (closed by AggClean or emptied), so a Snapshot after the first
// writes only those ids (a dirty set kept while the job checkpoints) and
// the meta record. A restored AggClean rebuilds its heap from the live
// groups: it pops (key, group id) in order, so the groups a watermark
// closes go out in the same order as the original's.

func (h *HashAgg) checkpoints() {}

// hashAggState is an aggRun's Stateful, called on the HashAgg's goroutine
// (at a checkpoint barrier after the epoch's output went out, and at Start).
type hashAggState struct{ r *aggRun }

const hashAggStateVersion = 1

var hashAggMetaKey = []byte("m")

// markDirty notes that group g changed since the last Snapshot.
func (r *aggRun) markDirty(g int32) {
	if r.ckpt && !r.dirty.get(g) {
		r.dirty.set(g, true)
		r.dirtyIDs = append(r.dirtyIDs, g)
	}
}

// nextID bounds the group ids handed out.
func (r *aggRun) nextID() int {
	if r.table == nil {
		return 1
	}
	return r.table.cap()
}

// live reports whether group id g holds a group (at a barrier, when every
// emptied group was freed): the global group always does.
func (r *aggRun) live(g int32) bool { return r.table == nil || r.rows[g] > 0 }

// Snapshot implements Stateful.
func (s hashAggState) Snapshot(w StateWriter, full bool) error {
	r := s.r
	var key [5]byte
	key[0] = 'g'
	var buf []byte
	put := func(g int32) {
		binary.BigEndian.PutUint32(key[1:], uint32(g))
		buf = r.appendGroupState(buf[:0], g)
		w.Put(key[:], buf)
	}
	if full || !r.based || !r.ckpt {
		w.Reset()
		for g := range int32(r.nextID()) {
			put(g)
		}
	} else {
		for _, g := range r.dirtyIDs {
			put(g)
		}
	}
	for _, g := range r.dirtyIDs {
		r.dirty.set(g, false)
	}
	r.dirtyIDs = r.dirtyIDs[:0]
	w.Put(hashAggMetaKey, r.appendMeta(buf[:0]))
	r.based = true
	return nil
}

// appendGroupState appends group id g's record.
func (r *aggRun) appendGroupState(dst []byte, g int32) []byte {
	if !r.live(g) {
		return binary.AppendUvarint(append(dst, 0), uint64(r.freeAt[g]))
	}
	dst = binary.AppendVarint(append(dst, 1), r.rows[g])
	if r.emitted[g] {
		dst = append(dst, 1)
	} else {
		dst = append(dst, 0)
	}
	for _, k := range r.keys {
		dst = appendCellState(dst, k.get(g), k.st, k.t)
	}
	if r.emitted[g] { // the last results are read only then
		for _, p := range r.prev {
			dst = appendCellState(dst, p.get(g), p.st, p.t)
		}
	}
	for _, a := range r.aggs {
		dst = a.appendState(dst, g)
	}
	return dst
}

func (r *aggRun) appendMeta(dst []byte) []byte {
	m := aggMeta{started: r.started, next: r.nextID(), sent: r.marks.sent, seqs: collectSeqs(r.aggs)}
	if c := r.clean; c != nil {
		m.wm, m.outWM, m.late = c.wm, c.outWM, c.late
	}
	return appendAggMeta(dst, m, r.clean != nil)
}

// aggMeta is a HashAgg's meta record, decoded.
type aggMeta struct {
	started         bool
	next            int
	sent            map[int]int64
	wm, outWM, late int64   // with AggClean
	seqs            []int64 // string_agg and array_agg's arrival counters
}

// appendAggMeta encodes m (clean: the operator has an AggClean).
func appendAggMeta(dst []byte, m aggMeta, clean bool) []byte {
	dst = append(dst, hashAggStateVersion)
	if m.started {
		dst = append(dst, 1)
	} else {
		dst = append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(m.next))
	cols := make([]int, 0, len(m.sent))
	for c := range m.sent {
		cols = append(cols, c)
	}
	sort.Ints(cols)
	dst = binary.AppendUvarint(dst, uint64(len(cols)))
	for _, c := range cols {
		dst = binary.AppendUvarint(dst, uint64(c))
		dst = binary.AppendVarint(dst, m.sent[c])
	}
	if clean {
		dst = appendVarints(dst, m.wm, m.outWM, m.late)
	}
	return appendCollectSeqs(dst, m.seqs)
}

// decodeAggMeta decodes a meta record (clean: the operator has an
// AggClean; nseq: its string_agg and array_agg aggregates).
func decodeAggMeta(b []byte, clean bool, nseq int) (aggMeta, error) {
	m := aggMeta{sent: map[int]int64{}}
	if len(b) < 2 || b[0] != hashAggStateVersion {
		return m, errors.New("missing or unknown checkpoint meta record")
	}
	m.started = b[1] == 1
	next, b, err := getUvarint(b[2:])
	if err != nil {
		return m, err
	}
	m.next = int(min(next, 1<<31))
	n, b, err := getUvarint(b)
	if err != nil {
		return m, err
	}
	for ; n > 0; n-- {
		var c uint64
		var v int64
		if c, b, err = getUvarint(b); err != nil {
			return m, err
		}
		if v, b, err = getVarint(b); err != nil {
			return m, err
		}
		m.sent[int(c)] = v
	}
	if clean {
		if b, err = getVarints(b, &m.wm, &m.outWM, &m.late); err != nil {
			return m, err
		}
	}
	if m.seqs, b, err = getCollectSeqs(b, nseq); err != nil {
		return m, err
	}
	if len(b) != 0 {
		return m, errors.New("bad checkpoint meta record")
	}
	return m, nil
}

// Restore implements Stateful: r is new, nothing consumed yet.
func (s hashAggState) Restore(rd StateReader) error {
	r := s.r
	if rs := rescaled(rd); rs != nil {
		if err := r.restoreRescaled(rs); err != nil {
			return fmt.Errorf("hashagg: rescaling: %w", err)
		}
		return nil
	}
	var meta []byte
	var recs stateRecords
	// Sized first (one cheap pass): copying a large state into buffers
	// grown by append copied it over and over.
	var size, maxID int
	_ = rd.Range(func(k, v []byte) error {
		if len(k) == 5 && k[0] == 'g' {
			size += len(v)
			maxID = max(maxID, int(binary.BigEndian.Uint32(k[1:])))
		}
		return nil
	})
	recs.buf = make([]byte, 0, size)
	if maxID < 1<<31-1 {
		recs.spans = make([]recSpan, 0, maxID+1)
	}
	err := rd.Range(func(k, v []byte) error {
		switch {
		case string(k) == string(hashAggMetaKey):
			meta = slices.Clone(v)
		case len(k) == 5 && k[0] == 'g':
			recs.add(binary.BigEndian.Uint32(k[1:]), v)
		default:
			return fmt.Errorf("unknown checkpoint key %q", k)
		}
		return nil
	})
	if err == nil {
		err = r.restore(meta, &recs)
	}
	if err != nil {
		return fmt.Errorf("hashagg: %w", err)
	}
	return nil
}

// stateRecords holds checkpoint records by dense id, their bytes copied
// into one buffer.
type stateRecords struct {
	buf   []byte
	spans []recSpan // per id
	n     int       // ids present
}

type recSpan struct {
	off int
	len int32 // +1; 0: absent
}

func (s *stateRecords) add(id uint32, v []byte) {
	if id >= 1<<31-1 {
		return // get reports it missing
	}
	s.spans = growSlice(s.spans, int(id)+1)
	if s.spans[id].len == 0 {
		s.n++
	}
	s.spans[id] = recSpan{off: len(s.buf), len: int32(len(v)) + 1}
	s.buf = append(s.buf, v...)
}

// get returns id's record, or nil when it is absent.
func (s *stateRecords) get(id int32) []byte {
	if int(id) >= len(s.spans) || s.spans[id].len == 0 {
		return nil
	}
	sp := s.spans[id]
	return s.buf[sp.off : sp.off+int(sp.len)-1 : sp.off+int(sp.len)-1]
}

func (r *aggRun) restore(meta []byte, recs *stateRecords) error {
	next, err := r.loadMeta(meta)
	if err != nil {
		return err
	}
	if recs.n != next || len(recs.spans) > next || (r.table == nil && next != 1) {
		return fmt.Errorf("checkpoint has %d groups of %d", recs.n, next)
	}
	r.grow(next)
	var liveIDs []int32
	var frees []freeSlot
	keyCells := make([][]cell, len(r.keys))
	for g := range int32(next) {
		b := recs.get(g)
		if len(b) == 0 {
			return fmt.Errorf("checkpoint lacks group %d", g)
		}
		if b[0] == 0 {
			at, rest, err := getUvarint(b[1:])
			if err != nil {
				return err
			}
			if len(rest) != 0 || r.table == nil {
				return fmt.Errorf("bad free group %d", g)
			}
			frees = append(frees, freeSlot{at: at, g: g})
			continue
		}
		if err := r.loadGroup(g, b, keyCells); err != nil {
			return fmt.Errorf("group %d: %w", g, err)
		}
		liveIDs = append(liveIDs, g)
	}
	if r.table != nil {
		if err := r.restoreTable(liveIDs, frees, keyCells); err != nil {
			return err
		}
	}
	if c := r.clean; c != nil {
		kc := r.keys[c.key]
		c.heap = c.heap[:0]
		for _, g := range liveIDs {
			k := kc.get(g)
			if k.null {
				return fmt.Errorf("group %d: NULL key under emit on window close", g)
			}
			c.heap = append(c.heap, cleanItem{v: k.a, g: g})
		}
		heap.Init(&c.heap)
	}
	r.based = true
	return nil
}

type freeSlot struct {
	at uint64
	g  int32
}

// loadMeta reads the meta record and returns next.
func (r *aggRun) loadMeta(b []byte) (int, error) {
	m, err := decodeAggMeta(b, r.clean != nil, len(collectSeqs(r.aggs)))
	if err != nil {
		return 0, err
	}
	if err := setCollectSeqs(r.aggs, m.seqs); err != nil {
		return 0, err
	}
	r.started = m.started
	for c, v := range m.sent {
		r.marks.sent[c] = v
	}
	if c := r.clean; c != nil {
		c.wm, c.outWM, c.late = m.wm, m.outWM, m.late
	}
	return m.next, nil
}

// loadGroup loads live group g's record and adds its key cells to
// keyCells.
func (r *aggRun) loadGroup(g int32, b []byte, keyCells [][]cell) error {
	rows, b, err := getVarint(b[1:])
	if err != nil {
		return err
	}
	if rows < 0 || (r.table != nil && rows == 0) || len(b) == 0 {
		return fmt.Errorf("bad row count %d", rows)
	}
	r.rows[g], r.emitted[g] = rows, b[0] == 1
	b = b[1:]
	for k, kc := range r.keys {
		var c cell
		if c, b, err = getCellState(b, kc.st, kc.t); err != nil {
			return err
		}
		kc.set(g, c)
		keyCells[k] = append(keyCells[k], c)
	}
	for _, p := range r.prev {
		c := nullCell
		if r.emitted[g] {
			if c, b, err = getCellState(b, p.st, p.t); err != nil {
				return err
			}
		}
		p.set(g, c)
	}
	for j, a := range r.aggs {
		if b, err = a.loadState(g, b); err != nil {
			return fmt.Errorf("%s: %w", r.h.Aggs[j], err)
		}
	}
	if len(b) != 0 {
		return fmt.Errorf("%d bytes after the state", len(b))
	}
	return nil
}

// restoreTable puts the live groups' keys into the group table at their
// ids and sets its free list.
func (r *aggRun) restoreTable(liveIDs []int32, frees []freeSlot, keyCells [][]cell) error {
	t := r.table
	sort.Slice(frees, func(i, j int) bool { return frees[i].at < frees[j].at })
	free := make([]int32, len(frees))
	for i, f := range frees {
		if f.at != uint64(i) {
			return errors.New("checkpoint's free group list has holes")
		}
		free[i] = f.g
		r.freeAt[f.g] = int32(i)
	}
	if len(liveIDs) > 0 {
		keys := make([]arrow.Array, len(r.keys))
		for k, kc := range r.keys {
			a, err := buildCells(r.ectx.Allocator(), kc.t, keyCells[k])
			if err != nil {
				return err
			}
			defer a.Release()
			keys[k] = a
		}
		// newID pops the free list: hand out the live ids in row order.
		t.next = int32(len(liveIDs) + len(frees))
		t.free = make([]int32, len(liveIDs))
		for i, g := range liveIDs {
			t.free[len(liveIDs)-1-i] = g
		}
		t.reserve(len(liveIDs))
		ids := t.probe(keys, nil, len(liveIDs), false)
		if len(t.newRows) != len(liveIDs) || !slices.Equal(ids, liveIDs) {
			return errors.New("checkpoint has two groups with one key")
		}
	}
	t.next = int32(len(liveIDs) + len(frees))
	t.free = free
	return nil
}
