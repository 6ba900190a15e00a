package catalog

import (
	"github.com/streamsql/streamsql/types"
)

// streamsql_sources: one row per partition of each running source reader
// (a view reading a Kafka source has one reader; each reads every
// partition), set by the engine (SetSourceStatus). Readers of connectors
// without partitions have no rows.

// SourceStatus is one row of streamsql_sources.
type SourceStatus struct {
	Source, View  string
	Partition     int32
	Offset        int64 // the next offset to read; -1: not known
	HighWatermark int64 // -1: not known
	Lag           int64 // -1: not known
	Watermark     types.TimestampValue
	HasWatermark  bool
	Idle          bool
	Rows, BadRows int64
	LastError     string
	Status        string
}

// SetSourceStatus installs the function streamsql_sources reads.
func (c *Catalog) SetSourceStatus(f func() []SourceStatus) { c.sourceStatus.Store(&f) }

var streamSourcesDef = sysDef{12310, "pg_catalog", "streamsql_sources", []Column{
	{Name: "source_name", Type: tText},
	{Name: "view_name", Type: tText},
	{Name: "partition", Type: tInt4},
	{Name: "offset", Type: tInt8},
	{Name: "high_watermark", Type: tInt8},
	{Name: "lag", Type: tInt8},
	{Name: "watermark", Type: types.TTimestampTZ},
	{Name: "idle", Type: tBool},
	{Name: "rows", Type: tInt8},
	{Name: "bad_rows", Type: tInt8},
	{Name: "last_error", Type: tText},
	{Name: "status", Type: tText},
}}

func init() {
	pgCatalogDefs = append(pgCatalogDefs, streamSourcesDef)
	registerRows("pg_catalog.streamsql_sources", streamSourcesRows)
}

func streamSourcesRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	p := c.sourceStatus.Load()
	if p == nil {
		return nil
	}
	known := func(v int64) any {
		if v < 0 {
			return nil
		}
		return v
	}
	for _, st := range (*p)() {
		var wm any
		if st.HasWatermark {
			wm = st.Watermark
		}
		err := b.add(row{
			"source_name": st.Source, "view_name": st.View, "partition": st.Partition,
			"offset": known(st.Offset), "high_watermark": known(st.HighWatermark), "lag": known(st.Lag),
			"watermark": wm, "idle": st.Idle, "rows": st.Rows, "bad_rows": st.BadRows,
			"last_error": nullIfEmpty(st.LastError), "status": st.Status,
		})
		if err != nil {
			return err
		}
	}
	return nil
}
