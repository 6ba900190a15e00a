package stream

import (
	"cmp"
	"container/heap"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// An EOWC's checkpointed state (issue 5) is its held rows, one pair each,
// and its watermark:
//
//	'r' seq (8 bytes, big-endian) -> appendKey(row)
//	'm'                           -> varint(watermark) uvarint(seq)
//
// seq is the row's arrival number, which orders rows of the same time; a
// row keeps it across a restore, so the restored operator releases rows in
// the original's order. A snapshot after the first writes the rows held
// and deletes the rows released or canceled since the previous one.

func (e *EOWC) checkpoints() {}

const (
	eowcKeyRow  = 'r'
	eowcKeyMeta = 'm'
)

func eowcRowKey(dst []byte, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, eowcKeyRow), seq)
}

// Snapshot implements Stateful; it runs on the operator's goroutine at a
// checkpoint barrier.
func (r *eowcRun) Snapshot(w StateWriter, full bool) error {
	var key, val []byte
	put := func(it eowcItem) {
		val = appendKey(val[:0], rowValues(r.segs[it.ref.seg], int(it.ref.row), r.cols), nil)
		w.Put(eowcRowKey(key[:0], it.seq), val)
	}
	if full || !r.ck {
		w.Reset()
		for _, it := range r.pending {
			if _, dead := r.dead[it.ref]; !dead {
				put(it)
			}
		}
	} else {
		// Rows that came and went since the last snapshot were never written.
		var gone map[uint64]struct{}
		for _, seq := range r.ckGone {
			if seq <= r.ckSeq {
				w.Delete(eowcRowKey(key[:0], seq))
				continue
			}
			if gone == nil {
				gone = map[uint64]struct{}{}
			}
			gone[seq] = struct{}{}
		}
		for _, it := range r.ckAdded {
			if _, ok := gone[it.seq]; !ok {
				put(it)
			}
		}
	}
	val = binary.AppendVarint(val[:0], r.wm)
	val = binary.AppendUvarint(val, r.seq)
	w.Put([]byte{eowcKeyMeta}, val)
	clear(r.ckAdded)
	r.ckAdded, r.ckGone = r.ckAdded[:0], r.ckGone[:0]
	r.ck, r.ckSeq = true, r.seq
	return nil
}

// Restore implements Stateful: the held rows come back as one segment.
func (r *eowcRun) Restore(sr StateReader) error {
	type held struct {
		seq uint64
		row []types.Value
	}
	var rows []held
	err := sr.Range(func(key, value []byte) error {
		switch {
		case len(key) == 1 && key[0] == eowcKeyMeta:
			wm, k := binary.Varint(value)
			if k <= 0 {
				return fmt.Errorf("eowc: bad checkpointed watermark")
			}
			seq, k2 := binary.Uvarint(value[k:])
			if k2 <= 0 {
				return fmt.Errorf("eowc: bad checkpointed sequence")
			}
			r.wm, r.seq = wm, seq
		case len(key) == 9 && key[0] == eowcKeyRow:
			row, rest, err := decodeIdentityRow(value, len(r.cols))
			if err == nil && len(rest) != 0 {
				err = fmt.Errorf("%d bytes after a row", len(rest))
			}
			if err != nil {
				return fmt.Errorf("eowc: checkpointed row: %w", err)
			}
			rows = append(rows, held{binary.BigEndian.Uint64(key[1:]), row})
		default:
			return fmt.Errorf("eowc: unknown checkpoint key %q", key)
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.ck, r.ckSeq = true, r.seq
	if len(rows) == 0 {
		return nil
	}
	slices.SortFunc(rows, func(a, b held) int { return cmp.Compare(a.seq, b.seq) })
	bs := make([]array.Builder, len(r.cols))
	arrs := make([]arrow.Array, len(r.cols))
	for j, c := range r.cols {
		bs[j] = types.NewBuilder(memory.DefaultAllocator, c.Type)
		for _, h := range rows {
			if err := types.AppendValue(bs[j], h.row[j], c.Type); err != nil {
				return fmt.Errorf("eowc: checkpointed row: %w", err)
			}
		}
		arrs[j] = bs[j].NewArray()
		bs[j].Release()
	}
	rec := array.NewRecordBatch(r.schema, arrs, int64(len(rows)))
	for _, a := range arrs {
		a.Release()
	}
	r.hashes = rowHashes(rec, r.cols, r.hashes)
	for i, h := range rows {
		t, ok := h.row[r.e.TimeCol].(types.TimestampValue)
		if !ok {
			rec.Release()
			return fmt.Errorf("eowc: checkpointed row without a time")
		}
		it := eowcItem{t: int64(t), seq: h.seq, h: r.hashes[i], ref: ref{seg: 0, row: int32(i)}}
		r.pending = append(r.pending, it)
		r.byHash[it.h] = append(r.byHash[it.h], eowcHeld{it.ref, it.seq})
	}
	heap.Init(&r.pending)
	r.segs, r.live, r.nlive = []arrow.RecordBatch{rec}, []int32{int32(len(rows))}, 1
	return nil
}
