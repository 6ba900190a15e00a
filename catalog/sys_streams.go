package catalog

import (
	"github.com/streamsql/streamsql/types"
)

// streamsql_views: one row per materialized view with its running state,
// what the engine's streaming runtime reports through SetStreamStatus.

// StreamStatus is a materialized view's running state.
type StreamStatus struct {
	Status    string               // "running", "failed" or "not started"
	Epoch     types.TimestampValue // time of the last completed epoch (0: none)
	RowErrors int64                // rows that failed at run time (made NULL or dropped)
	LastError string               // the last row error, or why the view failed
}

// SetStreamStatus installs the function streamsql_views reads.
func (c *Catalog) SetStreamStatus(f func(oid uint32) (StreamStatus, bool)) {
	c.streamStatus.Store(&f)
}

var streamViewsDef = sysDef{12300, "pg_catalog", "streamsql_views", []Column{
	{Name: "schemaname", Type: tName},
	{Name: "viewname", Type: tName},
	{Name: "status", Type: tText},
	{Name: "epoch_time", Type: types.TTimestampTZ},
	{Name: "row_errors", Type: tInt8},
	{Name: "last_error", Type: tText},
}}

func init() {
	pgCatalogDefs = append(pgCatalogDefs, streamViewsDef)
	registerRows("pg_catalog.streamsql_views", streamViewsRows)
}

func streamViewsRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	var status func(uint32) (StreamStatus, bool)
	if p := c.streamStatus.Load(); p != nil {
		status = *p
	}
	for _, r := range s.sortedRelations() {
		if r.Kind != KindMatView {
			continue
		}
		st := StreamStatus{Status: "not started"}
		if status != nil {
			if x, ok := status(r.OID); ok {
				st = x
			}
		}
		var epoch any
		if st.Epoch != 0 {
			epoch = st.Epoch
		}
		err := b.add(row{
			"schemaname": r.Schema, "viewname": r.Name, "status": st.Status, "epoch_time": epoch,
			"row_errors": st.RowErrors, "last_error": nullIfEmpty(st.LastError),
		})
		if err != nil {
			return err
		}
	}
	return nil
}
