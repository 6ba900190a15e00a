package engine

import (
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// ViewLookup finds the row of a keyed materialized view whose stream key
// equals key, as of the view's last completed epoch: point queries on
// views (planner, stream_bind.go). keyed is false when the view cannot be
// searched by key (no key, or not running): the caller reads ViewRows.
func (f flowStreams) ViewLookup(oid uint32, key []types.Value) (row []types.Value, found, keyed bool, err error) {
	j := f.e.flow.Job(oid)
	if j == nil {
		return nil, false, false, nil
	}
	row, found, keyed, err = j.Lookup(key)
	if err != nil {
		return nil, false, false, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" failed: %v", j.Spec().Name, err)
	}
	return row, found, keyed, nil
}
