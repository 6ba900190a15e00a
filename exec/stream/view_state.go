package stream

import (
	"encoding/binary"
	"fmt"
)

// A view's checkpointed state is its rows: key -> uvarint multiplicity and
// (for a keyed view; an unkeyed view's key is the whole row) the row in the
// identity encoding (appendKey / decodeIdentityRow: exact,
// NaN payloads included, so a restored row still equals the retraction of
// it). Snapshots after the first write the keys that changed since the
// previous one.

func (m *Materialize) checkpoints() {}

// viewState is a View's Stateful (View.Snapshot is the readers' method).
type viewState struct{ v *View }

// Snapshot implements Stateful; it runs on the view's goroutine after the
// checkpoint epoch was published.
func (s viewState) Snapshot(w StateWriter, full bool) error {
	v := s.v
	var buf []byte
	put := func(k string, e entry) error {
		buf = binary.AppendUvarint(buf[:0], uint64(e.n))
		if v.keyed { // an unkeyed view's key is the whole row already
			buf = appendKey(buf, e.row, nil)
		}
		w.Put([]byte(k), buf)
		return nil
	}
	if full || !v.based {
		w.Reset()
		for k, e := range v.base {
			if err := put(k, e); err != nil {
				return err
			}
		}
	} else {
		for k := range v.dirty {
			if e, ok := v.base[k]; ok {
				if err := put(k, e); err != nil {
					return err
				}
			} else {
				w.Delete([]byte(k))
			}
		}
	}
	clear(v.dirty)
	v.based = true
	return nil
}

// Restore implements Stateful: the rows come back as the snapshot of epoch
// 0 (the runtime calls RestoreAt with the checkpoint's epoch instead).
func (s viewState) Restore(r StateReader) error {
	return s.v.RestoreAt(r, 0)
}

// RestoreAt loads a checkpoint's rows (before Run) and publishes them as
// the snapshot of epoch, so reads see the checkpoint's state at once.
func (v *View) RestoreAt(r StateReader, epoch uint64) error {
	base := make(map[string]entry, r.Len())
	err := r.Range(func(key, value []byte) error {
		n, k := binary.Uvarint(value)
		if k <= 0 || n == 0 {
			return fmt.Errorf("materialize: bad checkpointed row count")
		}
		enc := value[k:]
		if !v.keyed {
			enc = key
		}
		row, rest, err := decodeIdentityRow(enc, len(v.m.Cols))
		if err != nil {
			return fmt.Errorf("materialize: %w", err)
		}
		if len(rest) != 0 {
			return fmt.Errorf("materialize: %d bytes after a checkpointed row", len(rest))
		}
		base[string(key)] = entry{row: row, n: int64(n)}
		return nil
	})
	if err != nil {
		return err
	}
	v.mu.Lock()
	v.base = base
	v.cur.Store(&snapshot{epoch: epoch, data: &snapshotData{}})
	v.mu.Unlock()
	v.based = true
	return nil
}

// Rows is the number of rows in the view's committed state (for counters
// after a restore). Call it on the writer's goroutine or before Run.
func (v *View) Rows() int64 {
	var n int64
	for _, e := range v.base {
		n += e.n
	}
	return n
}
