package dataflow

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// CheckpointedRows returns the rows view id had in the recovered
// checkpoint (its Materialize's state) and the checkpoint's epoch, for a
// view whose job could not start at recovery: the engine serves them as
// the failed view's last rows. ok is false when the checkpoint does not
// have the view. cols are the view's columns. Call it before EndRecovery.
func (rt *Runtime) CheckpointedRows(id uint32, cols []types.Column) (epoch uint64, rows []arrow.RecordBatch, ok bool, err error) {
	if rt.ck == nil {
		return 0, nil, false, nil
	}
	rt.ck.mu.Lock()
	rec, meta := rt.ck.rec, rt.ck.resume[id]
	rt.ck.mu.Unlock()
	if rec == nil || meta == nil {
		return 0, nil, false, nil
	}
	var r stream.StateReader = emptyState{}
	m := &stream.Materialize{Cols: cols}
	if st := rec.Op(fmt.Sprintf("%d/v", id)); st != nil {
		r = st
		// A keyed view's value holds the row after its count; an unkeyed
		// view's key is the row (view_state.go). Which one only changes
		// where the rows are decoded from.
		errSeen := errors.New("seen")
		_ = st.Range(func(_, v []byte) error {
			if _, w := binary.Uvarint(v); w > 0 && len(v) > w {
				m.Key = []int{0}
			}
			return errSeen
		})
	}
	v := m.NewView()
	if err := v.RestoreAt(r, rec.Manifest.Epoch); err != nil {
		return 0, nil, false, fmt.Errorf("materialized view %s: restoring its checkpointed rows: %w", meta.Name, err)
	}
	epoch, rows, err = v.SnapshotEpoch()
	if err != nil {
		return 0, nil, false, err
	}
	return epoch, rows, true, nil
}
