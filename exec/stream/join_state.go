package stream

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// A HashJoin's checkpointed state (issue 5) is one pair per held entry (a
// distinct held row, several copies once the side has an identity index):
//
//	'r' side seq(8 bytes, big endian) -> uvarint(count) varint(matches) appendKey(row)
//
// where seq is the entry's stable identity (joinSide.seqs, given in the
// order rows were added), and one pair "m" holding the rest: per side the
// next seq and whether it has an identity index, the inputs' watermarks
// (alignMarks, or an interval join's marks and sent output watermarks).
// Everything else is derived from the rows at a restore: the groups and
// their row counts, a window join's cleaning heap (JoinClean) and an
// interval join's time queues. A restore adds each side's rows in seq
// order, so that groups list their rows in the original order and the
// restored join emits exactly what the original would have.
//
// Between snapshots a side lists the entries it added or changed (dirty,
// each once: ckDirtyBit in its seq) and the seqs of those written before
// that went (deleted): a snapshot costs the rows that changed.

func (j *HashJoin) checkpoints() {}

const (
	jkRow  = 'r'
	jkMeta = 'm'
	// ckDirtyBit marks an entry's seq while it is in its side's dirty list.
	ckDirtyBit = 1 << 63
	// jkRestoreRows bounds the rows of a restored segment.
	jkRestoreRows = 4096
)

// touch records that entry e was added or its count or matches changed.
func (sd *joinSide) touch(e int32) {
	if !sd.ck {
		return
	}
	if seq := sd.seqs.at(e); *seq&ckDirtyBit == 0 {
		*seq |= ckDirtyBit
		sd.dirty = append(sd.dirty, e)
	}
}

// gone records that entry e is freed (before it is cleared).
func (sd *joinSide) gone(e int32) {
	p := sd.seqs.at(e)
	if seq := *p &^ ckDirtyBit; sd.ck && seq < sd.seqBase {
		sd.deleted = append(sd.deleted, seq)
	}
	*p &^= ckDirtyBit
}

// remapDirty follows a compaction of the entries.
func (sd *joinSide) remapDirty(renum []int32) {
	k := 0
	for _, e := range sd.dirty {
		if n := renum[e]; n >= 0 {
			sd.dirty[k] = n
			k++
		}
	}
	sd.dirty = sd.dirty[:k]
}

// Snapshot implements Stateful; it runs on the join's goroutine at a
// checkpoint barrier, after the epoch's output was sent.
func (r *joinRun) Snapshot(w StateWriter, full bool) error {
	var key, val []byte
	put := func(s int, e int32) error {
		sd := r.sides[s]
		en := sd.entries.at(e)
		key = append(append(key[:0], jkRow, byte(s)), 0, 0, 0, 0, 0, 0, 0, 0)
		binary.BigEndian.PutUint64(key[2:], *sd.seqs.at(e)&^ckDirtyBit)
		val = binary.AppendUvarint(val[:0], uint64(en.count))
		val = binary.AppendVarint(val, en.matches)
		rec := sd.recs[en.seg]
		for c := range sd.cols {
			val = appendArrowKey(val, rec.Column(c), int(en.row), sd.cols[c].Type)
		}
		w.Put(key, val)
		return nil
	}
	full = full || !r.based
	if full {
		w.Reset()
	}
	for s, sd := range r.sides {
		if full {
			for e := int32(0); e < sd.entries.len(); e++ {
				if sd.entries.at(e).count > 0 {
					if err := put(s, e); err != nil {
						return err
					}
				}
			}
			for _, e := range sd.dirty {
				*sd.seqs.at(e) &^= ckDirtyBit
			}
		} else {
			for _, seq := range sd.deleted {
				key = append(append(key[:0], jkRow, byte(s)), 0, 0, 0, 0, 0, 0, 0, 0)
				binary.BigEndian.PutUint64(key[2:], seq)
				w.Delete(key)
			}
			for _, e := range sd.dirty {
				seq := sd.seqs.at(e)
				if sd.entries.at(e).count == 0 || *seq&ckDirtyBit == 0 {
					continue // freed, or listed twice (freed and reused)
				}
				*seq &^= ckDirtyBit
				if err := put(s, e); err != nil {
					return err
				}
			}
		}
		sd.dirty, sd.deleted = sd.dirty[:0], sd.deleted[:0]
		sd.ck, sd.seqBase = true, sd.seqNext
	}
	w.Put([]byte{jkMeta}, r.appendMeta(val[:0]))
	r.based = true
	return nil
}

// appendMeta encodes the "m" pair's value.
func (r *joinRun) appendMeta(b []byte) []byte {
	for _, sd := range r.sides {
		b = binary.AppendUvarint(b, sd.seqNext)
		b = append(b, byte(btoiJ(sd.index != nil)))
	}
	if r.iv != nil {
		for s := range 2 {
			b = binary.AppendVarint(b, r.iv.mark[s])
			b = binary.AppendVarint(b, r.iv.sent[s])
		}
		return b
	}
	cols := make([]int, 0, len(r.marks.marks))
	for c := range r.marks.marks {
		cols = append(cols, c)
	}
	slices.Sort(cols)
	b = binary.AppendUvarint(b, uint64(len(cols)))
	for _, c := range cols {
		b = binary.AppendVarint(b, int64(c))
		ms := r.marks.marks[c]
		b = binary.AppendUvarint(b, uint64(len(ms)))
		for _, m := range ms {
			b = binary.AppendVarint(b, m)
		}
		e, ok := r.marks.emitted[c]
		b = append(b, byte(btoiJ(ok)))
		if ok {
			b = binary.AppendVarint(b, e)
		}
	}
	return b
}

func btoiJ(b bool) int {
	if b {
		return 1
	}
	return 0
}

// jkHeld is one restored entry.
type jkHeld struct {
	side    uint8
	seq     uint64
	count   int32
	matches int64
	enc     []byte // the row, appendKey-encoded
}

// Restore implements Stateful: it loads a checkpoint's rows and marks
// before the first message (on the join's goroutine, nothing held yet).
func (r *joinRun) Restore(rd StateReader) error {
	if rs := rescaled(rd); rs != nil {
		return r.restoreRescaled(rs)
	}
	return r.restore(rd)
}

// restore is Restore from one state.
func (r *joinRun) restore(rd StateReader) error {
	all := make([]jkHeld, 0, rd.Len()) // both sides, split below
	var meta []byte
	err := rd.Range(func(k, v []byte) error {
		switch {
		case len(k) == 1 && k[0] == jkMeta:
			meta = append([]byte(nil), v...)
		case len(k) == 10 && k[0] == jkRow && k[1] < 2:
			n, w := binary.Uvarint(v)
			if w <= 0 || n == 0 || n > math.MaxInt32 {
				return fmt.Errorf("hash join: bad checkpointed row count")
			}
			m, w2 := binary.Varint(v[w:])
			if w2 <= 0 {
				return fmt.Errorf("hash join: bad checkpointed match count")
			}
			s := int(k[1])
			// The row is decoded in seq order by restoreSide, a segment
			// at a time, from the checkpoint's bytes (read-only, kept
			// until the restore ends).
			all = append(all, jkHeld{side: uint8(s), seq: binary.BigEndian.Uint64(k[2:]), count: int32(n), matches: m, enc: v[w+w2:]})
		default:
			return fmt.Errorf("hash join: unknown checkpointed key %q", k)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if meta == nil {
		return fmt.Errorf("hash join: checkpoint without its marks")
	}
	indexed, seqs, err := r.restoreMeta(meta)
	if err != nil {
		return err
	}
	slices.SortFunc(all, func(a, b jkHeld) int {
		if a.side != b.side {
			return cmp.Compare(a.side, b.side)
		}
		return cmp.Compare(a.seq, b.seq)
	})
	split := sort.Search(len(all), func(i int) bool { return all[i].side == 1 })
	held := [2][]jkHeld{all[:split], all[split:]}
	for s := range 2 {
		if n := len(held[s]); n > 0 && held[s][n-1].seq >= seqs[s] {
			return fmt.Errorf("hash join: a checkpointed row's seq %d is not below the next one, %d", held[s][n-1].seq, seqs[s])
		}
		if err := r.restoreSide(s, held[s]); err != nil {
			return err
		}
		if indexed[s] {
			r.sides[s].buildIndex()
		}
	}
	for s, sd := range r.sides {
		sd.seqNext = seqs[s]
		sd.ck, sd.seqBase = true, sd.seqNext
	}
	r.based = true
	return nil
}

// restoreMeta decodes the "m" pair; it returns which sides had an index
// and their next seqs.
func (r *joinRun) restoreMeta(b []byte) (indexed [2]bool, seqs [2]uint64, err error) {
	bad := fmt.Errorf("hash join: bad checkpointed marks")
	uv := func() uint64 {
		x, k := binary.Uvarint(b)
		if k <= 0 {
			err = bad
			return 0
		}
		b = b[k:]
		return x
	}
	sv := func() int64 {
		x, k := binary.Varint(b)
		if k <= 0 {
			err = bad
			return 0
		}
		b = b[k:]
		return x
	}
	flag := func() bool {
		if len(b) == 0 {
			err = bad
			return false
		}
		f := b[0] != 0
		b = b[1:]
		return f
	}
	for s := range 2 {
		seqs[s] = uv()
		indexed[s] = flag()
	}
	if r.iv != nil {
		for s := range 2 {
			r.iv.mark[s], r.iv.sent[s] = sv(), sv()
		}
	} else {
		n := uv()
		for c := uint64(0); c < n && err == nil; c++ {
			col := int(sv())
			if uv() != 2 {
				return indexed, seqs, bad
			}
			ms := make([]int64, 2)
			for i := range ms {
				ms[i] = sv()
			}
			r.marks.marks[col] = ms
			if flag() {
				r.marks.emitted[col] = sv()
			}
		}
	}
	if err == nil && len(b) != 0 {
		err = bad
	}
	return indexed, seqs, err
}

// restoreSide holds side s's restored rows (in seq order) as the join
// would: in segments, grouped by key, queued by time for interval joins.
func (r *joinRun) restoreSide(s int, held []jkHeld) error {
	sd := r.sides[s]
	exprs := r.j.LeftKeys
	if s == 1 {
		exprs = r.j.RightKeys
	}
	schema := types.ArrowSchema(sd.cols)
	cols := make([][]types.Value, len(sd.cols)) // a segment's values, column by column
	for c := range cols {
		cols[c] = make([]types.Value, 0, jkRestoreRows)
	}
	for from := 0; from < len(held); from += jkRestoreRows {
		part := held[from:min(from+jkRestoreRows, len(held))]
		for c := range cols {
			cols[c] = cols[c][:0]
		}
		for _, h := range part {
			b := h.enc
			for c := range cols {
				v, rest, err := decodeIdentityValue(b)
				if err != nil {
					return fmt.Errorf("hash join: %w", err)
				}
				cols[c], b = append(cols[c], v), rest
			}
			if len(b) != 0 {
				return fmt.Errorf("hash join: %d bytes after a checkpointed row", len(b))
			}
		}
		arrs := make([]arrow.Array, len(sd.cols))
		for c, col := range sd.cols {
			a, err := types.MakeArray(memory.DefaultAllocator, col.Type, cols[c])
			if err != nil {
				releaseAll(arrs[:c])
				return fmt.Errorf("hash join: restoring column %q: %w", col.Name, err)
			}
			arrs[c] = a
		}
		rec := array.NewRecordBatch(schema, arrs, int64(len(part)))
		releaseAll(arrs)
		err := r.restoreRecord(s, exprs, rec, part)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *joinRun) restoreRecord(s int, exprs []expr.Expr, rec arrow.RecordBatch, part []jkHeld) error {
	sd := r.sides[s]
	keys := make([]arrow.Array, 0, len(exprs))
	defer func() { releaseAll(keys) }()
	for _, e := range exprs {
		a, err := evalOrNull(r.env, r.ectx, e, rec)
		if err != nil {
			return fmt.Errorf("hash join: restoring key %s: %w", e, err)
		}
		keys = append(keys, a)
	}
	gids := r.keys.lookup(s, keys, len(part))
	if r.clean != nil {
		r.clean.note(r.keys, keys, gids)
	}
	if r.iv != nil {
		ts, ok := rec.Column(r.iv.timeCol[s]).(*array.Timestamp)
		if !ok {
			return fmt.Errorf("hash join: restored time column is %s", rec.Column(r.iv.timeCol[s]).DataType())
		}
		r.iv.cur = ts
	}
	sd.beginChunk(rec)
	for i, h := range part {
		g := gids[i]
		if g < 0 {
			return fmt.Errorf("hash join: a checkpointed row has a NULL key")
		}
		e := sd.add(&r.keys.groups, s, g, i, 0, h.matches)
		sd.entries.at(e).count, *sd.seqs.at(e) = h.count, h.seq
		r.keys.groups.at(g).rows[s] += int64(h.count) - 1
		if r.iv != nil {
			r.iv.added(s, e, i)
		}
	}
	sd.endChunk(&r.keys.groups, s)
	if r.iv != nil {
		r.iv.cur = nil
	}
	return nil
}

// appendArrowKey appends row i of a (of type t) as appendValueKey appends
// types.ValueAt(a, i, t), without making the Value for the common types.
func appendArrowKey(dst []byte, a arrow.Array, i int, t types.T) []byte {
	if a.IsNull(i) {
		return append(dst, 0)
	}
	u64 := func(tag byte, x uint64) []byte {
		return binary.LittleEndian.AppendUint64(append(dst, tag), x)
	}
	switch t.Kind {
	case types.Int8:
		if x, ok := a.(*array.Int64); ok {
			return u64(2, uint64(x.Value(i)))
		}
	case types.Int4:
		if x, ok := a.(*array.Int32); ok {
			return u64(2, uint64(int64(x.Value(i))))
		}
	case types.Int2:
		if x, ok := a.(*array.Int16); ok {
			return u64(2, uint64(int64(x.Value(i))))
		}
	case types.Float8, types.Enum: // an enum is its float64 sort position
		if x, ok := a.(*array.Float64); ok {
			return u64(3, math.Float64bits(x.Value(i)))
		}
	case types.Timestamp, types.TimestampTZ:
		if x, ok := a.(*array.Timestamp); ok {
			return u64(9, uint64(types.TimestampValue(x.Value(i))))
		}
	case types.Bool, types.Float4, types.Numeric, types.Bytea, types.Date, types.Time,
		types.Interval, types.Oid, types.RegClass, types.RegType, types.RegProc, types.Void, types.Array:
	default: // text-likes: ValueAt reads them as strings
		if x, ok := a.(*array.String); ok {
			s := x.Value(i)
			dst = binary.AppendUvarint(append(dst, 5), uint64(len(s)))
			return append(dst, s...)
		}
	}
	return appendValueKey(dst, types.ValueAt(a, i, t))
}
