package stream

import "github.com/streamsql/streamsql/types"

// Lookup returns the row of a keyed view whose key columns (Materialize.Key,
// in key order) equal key, as of the last completed epoch, without building
// the snapshot's batches: point queries on views. keyed is false for a view
// without a key (a multiset): callers read Snapshot instead. The row is
// shared and immutable. Safe for concurrent use.
func (v *View) Lookup(key []types.Value) (row []types.Value, found, keyed bool) {
	if !v.keyed || len(key) != len(v.m.Key) {
		return nil, false, false
	}
	k := appendKey(nil, key, nil)
	v.mu.RLock()
	e := v.base[string(k)]
	v.mu.RUnlock()
	return e.row, e.n > 0, true
}
