package catalog

import (
	"github.com/streamsql/streamsql/types"
)

// streamsql_checkpoints: one row about the streaming runtime's checkpoints
// (issue 5): the last committed one and the counts since the start. No row
// when checkpoints are off.

// CheckpointStatus is what streamsql_checkpoints shows.
type CheckpointStatus struct {
	Epoch      types.TimestampValue // the last committed checkpoint's epoch time (0: none yet)
	Committed  types.TimestampValue // when it committed
	Bytes      int64                // what it wrote
	ChainBytes int64                // what a recovery reads
	Full       bool                 // it holds every operator's whole state
	DurationUS int64                // from its barrier to its commit, µs
	Views      int64                // jobs it holds
	Count      int64                // checkpoints committed since the start
	Failures   int64                // checkpoints that failed since the start
	LastError  string               // the last failure
	Recovered  types.TimestampValue // epoch time of the checkpoint the start recovered from (0: none)
}

// SetCheckpointStatus installs the function streamsql_checkpoints reads.
func (c *Catalog) SetCheckpointStatus(f func() (CheckpointStatus, bool)) {
	c.checkpointStatus.Store(&f)
}

var streamCheckpointsDef = sysDef{12301, "pg_catalog", "streamsql_checkpoints", []Column{
	{Name: "epoch_time", Type: types.TTimestampTZ},
	{Name: "committed_at", Type: types.TTimestampTZ},
	{Name: "bytes", Type: tInt8},
	{Name: "chain_bytes", Type: tInt8},
	{Name: "is_full", Type: tBool},
	{Name: "duration_us", Type: tInt8},
	{Name: "views", Type: tInt8},
	{Name: "checkpoints", Type: tInt8},
	{Name: "failures", Type: tInt8},
	{Name: "last_error", Type: tText},
	{Name: "recovered_from", Type: types.TTimestampTZ},
}}

func init() {
	pgCatalogDefs = append(pgCatalogDefs, streamCheckpointsDef)
	registerRows("pg_catalog.streamsql_checkpoints", streamCheckpointsRows)
}

func streamCheckpointsRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	p := c.checkpointStatus.Load()
	if p == nil {
		return nil
	}
	st, ok := (*p)()
	if !ok {
		return nil
	}
	ts := func(v types.TimestampValue) any {
		if v == 0 {
			return nil
		}
		return v
	}
	return b.add(row{
		"epoch_time": ts(st.Epoch), "committed_at": ts(st.Committed), "bytes": st.Bytes, "chain_bytes": st.ChainBytes,
		"is_full": st.Full, "duration_us": st.DurationUS, "views": st.Views, "checkpoints": st.Count,
		"failures": st.Failures, "last_error": nullIfEmpty(st.LastError), "recovered_from": ts(st.Recovered),
	})
}
