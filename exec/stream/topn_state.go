package stream

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// A TopN's checkpointed state (issue 5) is one pair per distinct row of a
// partition, so that a checkpoint writes the rows that changed, not the
// partitions they are in:
//
//	'r' uvarint(len(enc)) enc appendKey(row) -> uvarint(copies) appendKey(keys)
//
// where enc is the partition's encoding ("" for the one partition without
// PARTITION BY), row the input row (appendKey keeps its values' identity,
// decodeIdentityRow reads it back) and keys the sort keys that are not
// columns of the row. One more pair, "m", holds the watermark
// that closed partitions (TopNClose). What a partition emitted is not
// stored: at a barrier it is the rows at its ranks (nothing under EOWC),
// and a partition's closing value is its rows' time column.
//
// The running state tracks the entries added, retracted, trimmed or freed
// since the previous snapshot (tnEntry.ck, topnRun.ckDirty) once a
// snapshot was taken; a snapshot resolves each against the partition that
// now has its encoding.

func (t *TopN) checkpoints() {}

const (
	tnKeyRow  = 'r'
	tnKeyMeta = 'm'
)

// tnRef is an entry changed since the last snapshot and the partition it
// changed in (possibly freed since): p, or when p is nil a dedup slot's
// partition, whose encoding is topnRun.ckEnc[off:off+n] (slots move).
type tnRef struct {
	p      *tnPart
	e      *tnEntry
	off, n int32
}

// ckMark records that e's copies in p changed.
func (r *topnRun) ckMark(p *tnPart, e *tnEntry) {
	if !e.ck {
		e.ck = true
		r.ckDirty = append(r.ckDirty, tnRef{p: p, e: e})
	}
}

// ckMarkEnc is ckMark for the dedup partition of encoding enc.
func (r *topnRun) ckMarkEnc(enc []byte, e *tnEntry) {
	if !e.ck {
		e.ck = true
		r.ckDirty = append(r.ckDirty, tnRef{e: e, off: int32(len(r.ckEnc)), n: int32(len(enc))})
		r.ckEnc = append(r.ckEnc, enc...)
	}
}

// ckFree records that every row of p goes (p is freed by a watermark).
func (r *topnRun) ckFree(p *tnPart) {
	for bi := range p.rows.blocks {
		for _, e := range p.rows.blocks[bi].es {
			r.ckMark(p, e)
		}
	}
}

// ckSetup finds the sort keys that are not row columns (they are stored).
func (r *topnRun) ckSetup() {
	r.ckKeys = []int{}
	for k, sk := range r.t.Order {
		if ref, ok := sk.E.(*expr.ColRef); ok && ref.Idx < len(r.in) {
			continue
		}
		r.ckKeys = append(r.ckKeys, k)
	}
}

// Snapshot implements Stateful; it runs on the operator's goroutine at a
// checkpoint barrier, after the epoch's output.
func (r *topnRun) Snapshot(w StateWriter, full bool) error {
	var key, val []byte
	put := func(enc string, e *tnEntry, n int64) error {
		key = r.rowKey(key[:0], enc, e)
		val = binary.AppendUvarint(val[:0], uint64(n))
		r.vals = r.order.keyVals(r.vals[:0], e)
		val = appendKey(val, r.vals, r.ckKeys)
		w.Put(key, val)
		return nil
	}
	if full || !r.ckBased {
		w.Reset()
		var err error
		r.eachPart(func(p *tnPart) {
			for bi := range p.rows.blocks {
				b := &p.rows.blocks[bi]
				for j, e := range b.es {
					if err == nil {
						err = put(p.enc, e, b.ns[j])
					}
				}
			}
		})
		r.dedup.eachSlot(func(s *tnDedupSlot) {
			if err == nil {
				err = put(string(s.key()), s.cur, 1)
			}
		})
		if err != nil {
			return err
		}
	} else {
		for _, d := range r.ckDirty {
			if d.p == nil { // a dedup slot's
				enc := r.ckEnc[d.off : d.off+d.n]
				if r.dedup.holds(&r.order, enc, d.e) {
					if err := put(string(enc), d.e, 1); err != nil {
						return err
					}
				} else {
					w.Delete(r.rowKey(key[:0], string(enc), d.e))
				}
				continue
			}
			cur := r.global
			if cur == nil {
				cur = r.parts.get([]byte(d.p.enc))
			}
			var n int64
			if cur != nil {
				n = cur.rows.count(&r.order, d.e)
			}
			if n > 0 {
				if err := put(d.p.enc, d.e, n); err != nil {
					return err
				}
			} else {
				w.Delete(r.rowKey(key[:0], d.p.enc, d.e))
			}
		}
	}
	clear(r.vals)
	for _, d := range r.ckDirty {
		d.e.ck = false
		r.pool.snapshotted(d.e)
	}
	clear(r.ckDirty)
	r.ckDirty, r.ckEnc = r.ckDirty[:0], r.ckEnc[:0]
	w.Put([]byte{tnKeyMeta}, binary.AppendVarint(val[:0], r.closedWM))
	r.ckBased, r.ck = true, r.env.Checkpoints != nil
	return nil
}

// eachPart calls fn for every live partition.
func (r *topnRun) eachPart(fn func(p *tnPart)) {
	if r.global != nil {
		fn(r.global)
		return
	}
	for _, p := range r.parts.short {
		fn(p)
	}
	for _, p := range r.parts.long {
		fn(p)
	}
}

// rowKey appends the state key of e in the partition encoded as enc.
func (r *topnRun) rowKey(dst []byte, enc string, e *tnEntry) []byte {
	dst = append(dst, tnKeyRow)
	dst = binary.AppendUvarint(dst, uint64(len(enc)))
	dst = append(dst, enc...)
	r.vals = r.order.rowVals(r.vals[:0], e)
	return appendKey(dst, r.vals, nil)
}

// Restore implements Stateful: it rebuilds the partitions, what each
// emitted at the checkpoint's barrier and the closing heap.
func (r *topnRun) Restore(sr StateReader) error {
	if rs := rescaled(sr); rs != nil {
		return r.restoreRescaled(rs)
	}
	return r.restore(sr)
}

// restore is Restore from one state.
func (r *topnRun) restore(sr StateReader) error {
	err := sr.Range(func(key, value []byte) error {
		if len(key) == 1 && key[0] == tnKeyMeta {
			wm, k := binary.Varint(value)
			if k <= 0 {
				return fmt.Errorf("top-n: bad checkpointed watermark")
			}
			r.closedWM = wm
			return nil
		}
		if len(key) == 0 || key[0] != tnKeyRow {
			return fmt.Errorf("top-n: unknown checkpoint key %q", key)
		}
		l, k := binary.Uvarint(key[1:])
		if k <= 0 || l > uint64(len(key)-1-k) {
			return fmt.Errorf("top-n: bad checkpoint key %q", key)
		}
		enc := key[1+k : 1+k+int(l)]
		e, n, err := r.decodeEntry(key[1+k+int(l):], value)
		if err != nil {
			return err
		}
		if r.dedup != nil && len(enc) <= tnDedupEnc {
			if !r.restoreSlot(enc, e, n) {
				return fmt.Errorf("top-n: a second checkpointed row of a top-1 partition, or %d copies", n)
			}
			return nil
		}
		p := r.global
		if p == nil {
			if p = r.parts.get(enc); p == nil {
				p = r.newPart(enc, math.MaxInt64)
				if cl := r.t.Close; cl != nil {
					if ts, ok := r.order.rowVal(e, cl.Col).(types.TimestampValue); ok {
						p.closeAt = addSat(addSat(int64(ts), cl.Slack), cl.Delay)
						heap.Push(&r.closing, p)
					}
				}
				r.parts.put(p)
			}
		}
		if !p.rows.add(&r.order, e, n) {
			return fmt.Errorf("top-n: bad checkpointed row")
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.eachPart(func(p *tnPart) {
		if r.t.Close == nil || !r.t.Close.EOWC {
			p.emitted = r.ranked(p.emitted[:0], p)
		}
		if r.keep > 0 && p.rows.rows >= r.keep {
			p.last = p.rows.last()
			p.lastNorm = p.last.norm
		}
	})
	r.ckBased = true
	r.ck = r.env.Checkpoints != nil
	return nil
}

// decodeEntry decodes a checkpointed row (from its key) and value: its
// entry and copies.
func (r *topnRun) decodeEntry(rowKey, b []byte) (*tnEntry, int64, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n == 0 || n > math.MaxInt64 {
		return nil, 0, fmt.Errorf("top-n: bad checkpointed row count")
	}
	row, rest, err := decodeIdentityRow(rowKey, len(r.in))
	if err == nil && len(rest) != 0 {
		err = fmt.Errorf("%d bytes after a checkpointed row", len(rest))
	}
	if err != nil {
		return nil, 0, fmt.Errorf("top-n: %w", err)
	}
	rest = b[k:]
	key := make([]types.Value, len(r.t.Order))
	for k, sk := range r.t.Order {
		if ref, ok := sk.E.(*expr.ColRef); ok && ref.Idx < len(row) {
			key[k] = row[ref.Idx]
		}
	}
	for _, k := range r.ckKeys {
		if key[k], rest, err = decodeIdentityValue(rest); err != nil {
			return nil, 0, fmt.Errorf("top-n: %w", err)
		}
	}
	if len(rest) != 0 {
		return nil, 0, fmt.Errorf("top-n: %d bytes after a checkpointed row", len(rest))
	}
	var first types.Value
	if len(key) > 0 {
		first = key[0]
	}
	if r.order.lay != nil {
		e, err := r.order.packValues(row, key)
		if err != nil {
			return nil, 0, fmt.Errorf("top-n: checkpointed row: %w", err)
		}
		return e, int64(n), nil
	}
	return newTnBoxed(r.order.normOf(first), key, row), int64(n), nil
}
