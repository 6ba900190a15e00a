package dataflow

import "github.com/streamsql/streamsql/types"

// Lookup returns the row of the job's keyed view whose key equals key, as
// of its last completed epoch (View.Lookup); keyed is false when the view
// has no key or the job has no view. A failed job's view answers from its
// last rows. Safe for concurrent use.
func (j *Job) Lookup(key []types.Value) (row []types.Value, found, keyed bool, err error) {
	if j.view == nil {
		return nil, false, false, nil
	}
	row, found, keyed = j.view.Lookup(key)
	return row, found, keyed, nil
}
