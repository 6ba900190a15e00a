package stream

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// WindowAgg checkpoints (issue 5, docs/contributing/checkpoints.md). The
// state is written as records named by what they hold, never by the run's
// ids, which a restored run hands out anew:
//
//	'M'                     meta: format, watermark, output watermark, late
//	                        rows, the next key serial, the arrival counters
//	                        of string_agg and array_agg (aggcollect.go;
//	                        none without them)
//	'S'                     EMIT EVERY: the chunks freed windows owe until
//	                        the tick (absent when none)
//	'K' serial              a GROUP BY key: session flags and its values
//	'G' serial t            a group (key, pane start or session time): its
//	                        live rows and aggregate states (aggCol.appendState)
//	'E' serial wid          an entry (key, window id): its window, whether
//	                        emitted and marked, its emitted values
//
// A key gets a serial (uvarint, from 1, never reused within a chain of
// snapshots) when a snapshot first writes a record of it; its group and
// entry records name it by that serial. Serials, window times and ids are
// varints.
//
// Incremental snapshots: the run marks the groups, entries and keys it
// changes (a flag per id and a list; for fixed windows only when a group is
// first changed since the last translate, so a bool test per row is all
// the hot path pays for sessions and less for panes), and when it frees one
// that a snapshot wrote it queues that record's Delete. A snapshot writes
// the Deletes, then the changed records that are still live.
//
// What is not state: everything a barrier leaves empty (changed groups not
// yet translated, rebuilds of sessions, the output buffer, the processing
// time tick, which a barrier consumes), caches (a group's last entry, the
// last pane) and everything derived (panes, window lists, a key's sessions
// from its times, the watermark schedule of sessions). Processing time is
// not checkpointed: after a restore EARLY EVERY and EMIT EVERY tick a
// period after Start on the restored run's clock, as the design says for
// every processing-time behaviour; what a tick would emit is still owed
// (the changed keys and the EVERY stash are in the state), only its time
// moves. Rows within an output chunk may come in another order after a
// restore (ids differ); the chunks, their rows and ops are the same.

const waggStateFormat = 1

// waggCk is a run's change tracking, owned by the run's goroutine.
type waggCk struct {
	based   bool   // a snapshot was taken or restored: deltas are meaningful
	nextSer uint64 // the next key serial

	gchg        []int32 // groups changed since the last snapshot
	gck, gsaved []bool  // per group: in gchg; its record is in the checkpoint
	echg        []int32
	eck, esaved []bool // per entry
	kchg        []int32
	kck         []bool   // per key: in kchg
	kser        []uint64 // per key: its serial (0: no record yet)

	dels   []byte // queued Deletes, concatenated
	delEnd []int  // their ends in dels

	stashChg bool // the EVERY stash changed
	buf, key []byte
}

func (c *waggCk) touchGroup(g int32) {
	if !c.gck[g] {
		c.gck[g] = true
		c.gchg = append(c.gchg, g)
	}
}

func (c *waggCk) touchEntry(e int32) {
	if !c.eck[e] {
		c.eck[e] = true
		c.echg = append(c.echg, e)
	}
}

func (c *waggCk) touchKey(k int32) {
	if !c.kck[k] {
		c.kck[k] = true
		c.kchg = append(c.kchg, k)
	}
}

// keyFlagged notes a change of key k's session flags when they outlive a
// barrier (EMIT EVERY: dirty until the tick; EARLY EVERY: early).
func (r *waggRun) keyFlagged(k int32) {
	if r.ck != nil && (r.w.Emit.Mode == EmitEvery || r.w.Emit.EarlyEvery > 0) {
		r.ck.touchKey(k)
	}
}

// stashed adds c to the rows EMIT EVERY owes at its tick.
func (r *waggRun) stashed(c *Chunk) {
	r.stash = append(r.stash, c)
	if r.ck != nil {
		r.ck.stashChg = true
	}
}

// recKey builds record key tag, serial, t in c.key.
func (c *waggCk) recKey(tag byte, ser uint64, t int64) []byte {
	c.key = binary.AppendVarint(binary.AppendUvarint(append(c.key[:0], tag), ser), t)
	return c.key
}

// keyKey builds key record ser's key in c.key.
func (c *waggCk) keyKey(ser uint64) []byte {
	c.key = binary.AppendUvarint(append(c.key[:0], 'K'), ser)
	return c.key
}

func (c *waggCk) queueDelete(k []byte) {
	c.dels = append(c.dels, k...)
	c.delEnd = append(c.delEnd, len(c.dels))
}

// groupFreed queues the Delete of group g's record, if written.
func (c *waggCk) groupFreed(r *waggRun, g int32) {
	if c.gsaved[g] {
		c.gsaved[g] = false
		c.queueDelete(c.recKey('G', c.kser[r.gkey[g]], r.gt[g]))
	}
}

// entryFreed queues the Delete of entry e's record, if written.
func (c *waggCk) entryFreed(r *waggRun, e int32) {
	if c.esaved[e] {
		c.esaved[e] = false
		c.queueDelete(c.recKey('E', c.kser[r.ekey[e]], r.ewid[e]))
	}
}

// keyFreed queues the Delete of key k's record, if written.
func (c *waggCk) keyFreed(k int32) {
	if c.kser[k] != 0 {
		c.queueDelete(c.keyKey(c.kser[k]))
		c.kser[k] = 0
	}
}

// serial returns key k's serial, giving it one (and a record) if needed.
func (c *waggCk) serial(k int32) uint64 {
	if c.kser[k] == 0 {
		c.kser[k] = c.nextSer
		c.nextSer++
		c.touchKey(k)
	}
	return c.kser[k]
}

// waggState is a running WindowAgg's Stateful; its methods run on the
// operator's goroutine (Restore before the first message).
type waggState struct{ r *waggRun }

func (w *WindowAgg) checkpoints() {}

// Snapshot implements Stateful.
func (s waggState) Snapshot(w StateWriter, full bool) error {
	r, c := s.r, s.r.ck
	if c == nil {
		return fmt.Errorf("windowagg: snapshot of a run started without checkpoints")
	}
	if full || !c.based {
		w.Reset()
		c.dels, c.delEnd = c.dels[:0], c.delEnd[:0]
		c.clearChanges()
		clear(c.gsaved)
		clear(c.esaved)
		clear(c.kser)
		if err := s.putAll(w); err != nil {
			return err
		}
		c.stashChg = true
	} else {
		from := 0
		for _, end := range c.delEnd {
			w.Delete(c.dels[from:end])
			from = end
		}
		c.dels, c.delEnd = c.dels[:0], c.delEnd[:0]
		slices.Sort(c.gchg) // in memory order: fewer cache misses
		for _, g := range c.gchg {
			c.gck[g] = false
			if r.rows[g] > 0 {
				s.putGroup(w, g)
			}
		}
		c.gchg = c.gchg[:0]
		slices.Sort(c.echg)
		for _, e := range c.echg {
			c.eck[e] = false
			if r.elive[e] {
				s.putEntry(w, e)
			}
		}
		c.echg = c.echg[:0]
	}
	for _, k := range c.kchg { // after the records that gave keys serials
		c.kck[k] = false
		if c.kser[k] != 0 && r.keyRefs[k] > 0 {
			s.putKey(w, k)
		}
	}
	c.kchg = c.kchg[:0]
	c.buf = appendWaggMeta(c.buf[:0], waggMeta{na: uint64(len(r.aggs)), nk: uint64(r.nk), wm: r.wm, outWM: r.outWM, late: r.late, nextSer: c.nextSer, seqs: collectSeqs(r.aggs)})
	w.Put([]byte{'M'}, c.buf)
	if c.stashChg {
		c.stashChg = false
		if len(r.stash) == 0 {
			w.Delete([]byte{'S'})
		} else {
			b, err := s.appendStash(c.buf[:0])
			if err != nil {
				return err
			}
			c.buf = b
			w.Put([]byte{'S'}, b)
		}
	}
	c.based = true
	return nil
}

// clearChanges empties the change lists.
func (c *waggCk) clearChanges() {
	for _, g := range c.gchg {
		c.gck[g] = false
	}
	for _, e := range c.echg {
		c.eck[e] = false
	}
	for _, k := range c.kchg {
		c.kck[k] = false
	}
	c.gchg, c.echg, c.kchg = c.gchg[:0], c.echg[:0], c.kchg[:0]
}

// putAll writes every group and entry (the keys follow, in kchg).
func (s waggState) putAll(w StateWriter) error {
	r := s.r
	if r.fix != nil {
		for _, pn := range r.fix.panes {
			for _, g := range pn.gids {
				if r.rows[g] > 0 {
					s.putGroup(w, g)
				}
			}
		}
	} else {
		for _, sk := range r.ses.keys {
			if sk != nil {
				sk.settle()
				for _, p := range sk.pts {
					s.putGroup(w, p.g)
				}
			}
		}
	}
	for e, live := range r.elive {
		if live {
			s.putEntry(w, int32(e))
		}
	}
	return nil
}

func (s waggState) putGroup(w StateWriter, g int32) {
	r, c := s.r, s.r.ck
	b := binary.AppendUvarint(c.buf[:0], uint64(r.rows[g]))
	for _, a := range r.aggs {
		b = a.appendState(b, g)
	}
	c.buf = b
	w.Put(c.recKey('G', c.serial(r.gkey[g]), r.gt[g]), b)
	c.gsaved[g] = true
}

// Entry flags.
const (
	entEmitted = 1
	entMarked  = 2
)

func (s waggState) putEntry(w StateWriter, e int32) {
	r, c := s.r, s.r.ck
	var fl byte
	if r.emitted[e] {
		fl |= entEmitted
	}
	if r.emark[e] {
		fl |= entMarked
	}
	b := appendVarints(append(c.buf[:0], fl), r.estart[e], r.eend[e])
	if r.emitted[e] {
		for _, p := range r.prev {
			b = appendCellState(b, p.get(e), p.st, p.t)
		}
	}
	c.buf = b
	w.Put(c.recKey('E', c.serial(r.ekey[e]), r.ewid[e]), b)
	c.esaved[e] = true
}

// Key flags (sessions).
const (
	keyDirty = 1
	keyEarly = 2
)

func (s waggState) putKey(w StateWriter, k int32) {
	r, c := s.r, s.r.ck
	var fl byte
	if r.ses != nil {
		if sk := r.ses.keys[k]; sk != nil {
			if sk.dirty {
				fl |= keyDirty
			}
			if sk.early {
				fl |= keyEarly
			}
		}
	}
	b := append(c.buf[:0], fl)
	for _, kc := range r.keyCells {
		b = appendCellState(b, kc.get(k), kc.st, kc.t)
	}
	c.buf = b
	w.Put(c.keyKey(c.kser[k]), b)
}

// appendStash encodes the EVERY stash: per chunk its rows, each an op and
// the row (appendStateRow).
func (s waggState) appendStash(b []byte) ([]byte, error) {
	r := s.r
	cols := r.w.Cols
	row := make([]types.Value, len(cols))
	b = binary.AppendUvarint(b, uint64(len(r.stash)))
	for _, ch := range r.stash {
		n := ch.Len()
		b = binary.AppendUvarint(b, uint64(n))
		for i := 0; i < n; i++ {
			for j, col := range cols {
				row[j] = types.ValueAt(ch.Rec.Column(j), i, col.Type)
			}
			b = append(b, byte(ch.Op(i)))
			var err error
			if b, err = appendStateRow(b, row, cols); err != nil {
				return nil, fmt.Errorf("windowagg: %w", err)
			}
		}
	}
	return b, nil
}

// waggRec is a group or entry record read at a restore.
type waggRec struct {
	ser uint64
	t   int64
	val []byte
}

// Restore implements Stateful: it rebuilds the run from the records, before
// the first message (from the vnodes it owns of every old instance's
// records after a change of parallelism: windowagg_rescale.go).
func (s waggState) Restore(rd StateReader) error {
	if rs := rescaled(rd); rs != nil {
		if err := s.restoreRescaled(rs); err != nil {
			return fmt.Errorf("windowagg: rescaling: %w", err)
		}
		return nil
	}
	return s.restore(rd)
}

// restore rebuilds the run from one instance's records.
func (s waggState) restore(rd StateReader) error {
	r := s.r
	c := r.ck
	if c == nil {
		return fmt.Errorf("windowagg: restore of a run started without checkpoints")
	}
	var meta, stash []byte
	var groups, ents []waggRec
	type keyRec struct {
		ser   uint64
		flags byte
		cells []cell
	}
	var keys []keyRec
	err := rd.Range(func(k, v []byte) error {
		if len(k) == 0 {
			return fmt.Errorf("windowagg: empty checkpoint key")
		}
		tag := k[0]
		switch tag {
		case 'M':
			meta = slices.Clone(v)
			return nil
		case 'S':
			stash = slices.Clone(v)
			return nil
		}
		ser, rest, err := getUvarint(k[1:])
		if err != nil {
			return fmt.Errorf("windowagg: checkpoint key: %w", err)
		}
		switch tag {
		case 'K':
			if len(v) == 0 {
				return fmt.Errorf("windowagg: empty key record")
			}
			kr := keyRec{ser: ser, flags: v[0], cells: make([]cell, len(r.keyCells))}
			b := v[1:]
			for j, kc := range r.keyCells {
				if kr.cells[j], b, err = getCellState(b, kc.st, kc.t); err != nil {
					return fmt.Errorf("windowagg: key record: %w", err)
				}
			}
			keys = append(keys, kr)
		case 'G', 'E':
			t, _, err := getVarint(rest)
			if err != nil {
				return fmt.Errorf("windowagg: checkpoint key: %w", err)
			}
			rec := waggRec{ser: ser, t: t, val: slices.Clone(v)}
			if tag == 'G' {
				groups = append(groups, rec)
			} else {
				ents = append(ents, rec)
			}
		default:
			return fmt.Errorf("windowagg: checkpoint record %q", tag)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := s.loadMeta(meta); err != nil {
		return err
	}
	// Keys first: their ids, by serial.
	kid := make(map[uint64]int32, len(keys))
	ids, err := s.keyIDs(len(keys), func(i, j int) cell { return keys[i].cells[j] })
	if err != nil {
		return err
	}
	for i, kr := range keys {
		k := ids[i]
		kid[kr.ser] = k
		c.kser[k] = kr.ser
		c.nextSer = max(c.nextSer, kr.ser+1)
		if r.ses != nil && kr.flags != 0 {
			sk := r.ses.key(k)
			sk.dirty, sk.early = kr.flags&keyDirty != 0, kr.flags&keyEarly != 0
			if sk.dirty {
				r.ses.dirty = append(r.ses.dirty, k)
			}
			if sk.early {
				r.ses.early = append(r.ses.early, k)
			}
		}
	}
	keyOf := func(ser uint64) (int32, error) {
		k, ok := kid[ser]
		if !ok {
			return 0, fmt.Errorf("windowagg: checkpointed record of key %d, which has no record", ser)
		}
		return k, nil
	}
	for _, g := range groups {
		k, err := keyOf(g.ser)
		if err != nil {
			return err
		}
		if err := s.loadGroup(k, g); err != nil {
			return err
		}
	}
	for _, e := range ents {
		k, err := keyOf(e.ser)
		if err != nil {
			return err
		}
		if err := s.loadEntry(k, e); err != nil {
			return err
		}
	}
	if r.ses != nil {
		for k, sk := range r.ses.keys {
			if sk == nil {
				continue
			}
			slices.SortFunc(sk.pts, func(a, b spt) int { return cmp.Compare(a.t, b.t) })
			for i := 1; i < len(sk.pts); i++ {
				if sk.pts[i].t == sk.pts[i-1].t {
					return fmt.Errorf("windowagg: two checkpointed records of group (%d, %d)", k, sk.pts[i].t)
				}
			}
			r.ses.rebuildKey(r, sk) // the sessions of its times
			slices.SortFunc(sk.out, func(a, b int32) int { return cmp.Compare(r.estart[a], r.estart[b]) })
			r.ses.reschedule(r, int32(k), sk)
		}
	}
	for _, k := range ids {
		if r.keyRefs[k] == 0 { // a key without state (its record's Delete is queued)
			r.freeKey(k)
		}
	}
	if len(stash) > 0 {
		if err := s.loadStash(stash); err != nil {
			return err
		}
	}
	c.clearChanges()
	c.based = true
	return nil
}

func (s waggState) loadMeta(b []byte) error {
	r := s.r
	m, err := decodeWaggMeta(b)
	if err != nil {
		return err
	}
	if m.na != uint64(len(r.aggs)) || m.nk != uint64(r.nk) {
		return fmt.Errorf("windowagg: checkpoint of %d aggregates and %d keys, the plan has %d and %d", m.na, m.nk, len(r.aggs), r.nk)
	}
	r.wm, r.outWM, r.late = m.wm, m.outWM, m.late
	r.ck.nextSer = max(m.nextSer, 1)
	if err := setCollectSeqs(r.aggs, m.seqs); err != nil {
		return fmt.Errorf("windowagg: %w", err)
	}
	return nil
}

// waggMeta is the meta record: the plan's shape (aggregates, keys), the
// watermarks, the late rows, the next key serial and the arrival counters
// of string_agg and array_agg.
type waggMeta struct {
	na, nk          uint64
	wm, outWM, late int64
	nextSer         uint64
	seqs            []int64
}

func decodeWaggMeta(b []byte) (waggMeta, error) {
	var m waggMeta
	if len(b) == 0 || b[0] != waggStateFormat {
		return m, fmt.Errorf("windowagg: checkpoint without its meta record or of another format")
	}
	var err error
	if m.na, b, err = getUvarint(b[1:]); err != nil {
		return m, fmt.Errorf("windowagg: meta: %w", err)
	}
	if m.nk, b, err = getUvarint(b); err != nil {
		return m, fmt.Errorf("windowagg: meta: %w", err)
	}
	if b, err = getVarints(b, &m.wm, &m.outWM, &m.late); err != nil {
		return m, fmt.Errorf("windowagg: meta: %w", err)
	}
	if m.nextSer, b, err = getUvarint(b); err != nil {
		return m, fmt.Errorf("windowagg: meta: %w", err)
	}
	// The counters run to the end; loadMeta checks their number.
	if m.seqs, _, err = getCollectSeqs(b, countUvarints(b)); err != nil {
		return m, fmt.Errorf("windowagg: meta: %w", err)
	}
	return m, nil
}

// appendWaggMeta encodes m as Snapshot writes it.
func appendWaggMeta(b []byte, m waggMeta) []byte {
	b = binary.AppendUvarint(append(b, waggStateFormat), m.na)
	b = binary.AppendUvarint(b, m.nk)
	b = appendVarints(b, m.wm, m.outWM, m.late)
	return appendCollectSeqs(binary.AppendUvarint(b, m.nextSer), m.seqs)
}

// countUvarints counts the uvarints b holds (a last one cut short counts,
// for its reader to report).
func countUvarints(b []byte) int {
	n := 0
	for _, c := range b {
		if c < 0x80 {
			n++
		}
	}
	if len(b) > 0 && b[len(b)-1] >= 0x80 {
		n++
	}
	return n
}

// keyIDs gives ids to n keys, key i's column j being cellOf(i, j).
func (s waggState) keyIDs(n int, cellOf func(i, j int) cell) ([]int32, error) {
	r := s.r
	ids := make([]int32, n)
	if n == 0 {
		return ids, nil
	}
	if r.keyTab == nil {
		if n > 1 {
			return nil, fmt.Errorf("windowagg: %d checkpointed keys without GROUP BY", n)
		}
		return ids, nil // key 0
	}
	mem := r.ectx.Allocator()
	cols := make([]arrow.Array, len(r.keyCells))
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	for j, kc := range r.keyCells {
		b := types.NewBuilder(mem, kc.t)
		for i := 0; i < n; i++ {
			if err := appendCell(b, cellOf(i, j), kc.t); err != nil {
				b.Release()
				return nil, fmt.Errorf("windowagg: key record: %w", err)
			}
		}
		cols[j] = b.NewArray()
		b.Release()
	}
	copy(ids, r.keyTab.probe(cols, nil, n, false))
	if len(r.keyTab.newRows) != n {
		return nil, fmt.Errorf("windowagg: checkpoint holds %d keys, %d distinct", n, len(r.keyTab.newRows))
	}
	r.growKeys(r.keyTab.cap())
	for i, k := range ids {
		r.keyRefs[k] = 0
		for j, kc := range r.keyCells {
			kc.set(k, cellOf(i, j))
		}
	}
	return ids, nil
}

func (s waggState) loadGroup(k int32, rec waggRec) error {
	r := s.r
	var g int32
	if r.fix != nil {
		if g = r.fix.lookup(k, rec.t); g >= 0 {
			return fmt.Errorf("windowagg: two checkpointed records of group (%d, %d)", k, rec.t)
		}
		g = r.fix.group(r, k, rec.t)
	} else {
		g = r.ses.newGroup(r, k, rec.t)
		sk := r.ses.key(k)
		sk.pts = append(sk.pts, spt{rec.t, g}) // sorted, and checked for twins, after the load
	}
	n, b, err := getUvarint(rec.val)
	if err != nil || n == 0 {
		return fmt.Errorf("windowagg: group record: bad row count")
	}
	r.rows[g] = int64(n)
	for j, a := range r.aggs {
		if b, err = a.loadState(g, b); err != nil {
			return fmt.Errorf("windowagg: aggregate %d: %w", j, err)
		}
	}
	if len(b) != 0 {
		return fmt.Errorf("windowagg: %d bytes after a group record", len(b))
	}
	r.ck.gsaved[g] = true
	return nil
}

func (s waggState) loadEntry(k int32, rec waggRec) error {
	r := s.r
	e, created := r.entry(k, rec.t)
	if !created {
		return fmt.Errorf("windowagg: two checkpointed records of entry (%d, %d)", k, rec.t)
	}
	b := rec.val
	if len(b) == 0 {
		return fmt.Errorf("windowagg: empty entry record")
	}
	fl := b[0]
	b, err := getVarints(b[1:], &r.estart[e], &r.eend[e])
	if err != nil {
		return fmt.Errorf("windowagg: entry record: %w", err)
	}
	if fl&entEmitted != 0 {
		r.emitted[e] = true
		for _, p := range r.prev {
			var x cell
			if x, b, err = getCellState(b, p.st, p.t); err != nil {
				return fmt.Errorf("windowagg: entry record: %w", err)
			}
			p.set(e, x)
		}
	}
	if len(b) != 0 {
		return fmt.Errorf("windowagg: %d bytes after an entry record", len(b))
	}
	if fl&entMarked != 0 {
		r.emark[e] = true
		r.edirty = append(r.edirty, e)
	}
	if f := r.fix; f != nil {
		es := f.wins[rec.t]
		r.epos[e] = int32(len(es))
		f.wins[rec.t] = append(es, e)
	} else {
		sk := r.ses.key(k)
		sk.out = append(sk.out, e)
	}
	r.ck.esaved[e] = true
	return nil
}

// loadStash decodes what appendStash wrote.
func (s waggState) loadStash(b []byte) error {
	r := s.r
	cols := r.w.Cols
	nc, b, err := getUvarint(b)
	if err != nil {
		return fmt.Errorf("windowagg: stash: %w", err)
	}
	mem := r.ectx.Allocator()
	for ; nc > 0; nc-- {
		var n uint64
		if n, b, err = getUvarint(b); err != nil {
			return fmt.Errorf("windowagg: stash: %w", err)
		}
		bs := make([]array.Builder, len(cols))
		for j, col := range cols {
			bs[j] = types.NewBuilder(mem, col.Type)
		}
		release := func() {
			for _, x := range bs {
				x.Release()
			}
		}
		ops := make([]Op, 0, n)
		for i := uint64(0); i < n; i++ {
			if len(b) == 0 {
				release()
				return fmt.Errorf("windowagg: stash: truncated")
			}
			ops = append(ops, Op(b[0]))
			var row []types.Value
			if row, b, err = decodeStateRow(b[1:], cols); err != nil {
				release()
				return fmt.Errorf("windowagg: stash: %w", err)
			}
			for j, v := range row {
				if v == nil {
					bs[j].AppendNull()
				} else if err := types.AppendValue(bs[j], v, cols[j].Type); err != nil {
					release()
					return fmt.Errorf("windowagg: stash: %w", err)
				}
			}
		}
		arrs := make([]arrow.Array, len(cols))
		for j, x := range bs {
			arrs[j] = x.NewArray()
		}
		release()
		r.stash = append(r.stash, &Chunk{Rec: array.NewRecordBatch(r.schema, arrs, int64(n)), Ops: ops})
	}
	if len(b) != 0 {
		return fmt.Errorf("windowagg: %d bytes after the stash", len(b))
	}
	return nil
}
