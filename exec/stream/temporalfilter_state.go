package stream

import (
	"container/heap"
	"encoding/binary"
	"fmt"
)

// A TemporalFilter's checkpointed state is its kept rows, one pair per
// distinct row, and its bound:
//
//	'r' appendKey(row) -> varint(Lhs) uvarint(count)
//	'b'                -> varint(bound)
//
// A snapshot after the first writes the rows whose count changed since
// the previous one (deleting those gone). The restored bound is a floor:
// the bound never moves back, so a row expired before the checkpoint is
// not let in again by a clock that restarts behind it.

func (f *TemporalFilter) checkpoints() {}

const (
	tfKeyRow   = 'r'
	tfKeyBound = 'b'
)

// Snapshot implements Stateful; it runs on the operator's goroutine at a
// checkpoint barrier.
func (r *tfRun) Snapshot(w StateWriter, full bool) error {
	var key, val []byte
	put := func(k string, e *tfRow) {
		key = append(append(key[:0], tfKeyRow), k...)
		val = binary.AppendVarint(val[:0], e.t)
		val = binary.AppendUvarint(val, uint64(e.n))
		w.Put(key, val)
	}
	if full || !r.ck {
		w.Reset()
		for k, e := range r.rows {
			put(k, e)
		}
	} else {
		for k := range r.dirty {
			if e := r.rows[k]; e != nil {
				put(k, e)
			} else {
				w.Delete(append(append(key[:0], tfKeyRow), k...))
			}
		}
	}
	if r.hasB {
		w.Put([]byte{tfKeyBound}, binary.AppendVarint(val[:0], r.bound))
	}
	clear(r.dirty)
	r.ck = true
	return nil
}

// Restore implements Stateful.
func (r *tfRun) Restore(sr StateReader) error {
	err := sr.Range(func(key, value []byte) error {
		switch {
		case len(key) == 1 && key[0] == tfKeyBound:
			b, k := binary.Varint(value)
			if k <= 0 {
				return fmt.Errorf("temporal filter: bad checkpointed bound")
			}
			if !r.hasB || b > r.bound {
				r.bound, r.hasB = b, true
			}
		case len(key) > 1 && key[0] == tfKeyRow:
			t, k := binary.Varint(value)
			if k <= 0 {
				return fmt.Errorf("temporal filter: bad checkpointed row time")
			}
			n, k2 := binary.Uvarint(value[k:])
			if k2 <= 0 || n == 0 {
				return fmt.Errorf("temporal filter: bad checkpointed row count")
			}
			row, rest, err := decodeIdentityRow(key[1:], len(r.cols))
			if err == nil && len(rest) != 0 {
				err = fmt.Errorf("%d bytes after a row", len(rest))
			}
			if err != nil {
				return fmt.Errorf("temporal filter: checkpointed row: %w", err)
			}
			ks := string(key[1:])
			r.rows[ks] = &tfRow{t: t, n: int64(n), row: row}
			r.order = append(r.order, tfItem{t: t, key: ks})
		default:
			return fmt.Errorf("temporal filter: unknown checkpoint key %q", key)
		}
		return nil
	})
	if err != nil {
		return err
	}
	heap.Init(&r.order)
	r.ck = true
	return nil
}
