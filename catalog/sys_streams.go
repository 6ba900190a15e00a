package catalog

import (
	"sort"

	"github.com/streamsql/streamsql/types"
)

// Sources appear to clients as foreign tables (pg_class relkind 'f'): one
// foreign-data wrapper and one foreign server, both named "streamsql",
// hold them all, and a source's WITH options are its ftoptions
// ("connector=nexmark", the other options sorted by name, then "format=...").
// psql's \det and \d show them; pgjdbc's getTables reports FOREIGN TABLE.
const (
	sourceFDWOID    uint32 = 16380 // below FirstUserOID, never assigned to anything else
	sourceServerOID uint32 = 16381
)

func init() {
	registerRows("pg_catalog.pg_foreign_data_wrapper", func(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
		return b.add(row{"oid": sourceFDWOID, "fdwname": "streamsql", "fdwowner": SuperuserOID,
			"fdwhandler": uint32(0), "fdwvalidator": uint32(0)})
	})
	registerRows("pg_catalog.pg_foreign_server", func(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
		return b.add(row{"oid": sourceServerOID, "srvname": "streamsql", "srvowner": SuperuserOID, "srvfdw": sourceFDWOID})
	})
}

// sourceOptions renders a source's WITH options as PostgreSQL's
// name=value option array.
func sourceOptions(r *Relation) []string {
	out := []string{"connector=" + r.Connector}
	var rest []string
	for k, v := range r.Options {
		if k != "connector" {
			rest = append(rest, k+"="+v)
		}
	}
	sort.Strings(rest)
	out = append(out, rest...)
	if r.Format != "" {
		out = append(out, "format="+r.Format)
	}
	return out
}

// streamsql_views: one row per materialized view with its running state,
// what the engine's streaming runtime reports through SetStreamStatus.

// StreamStatus is a materialized view's running state.
type StreamStatus struct {
	Status    string               // "running", "recovering", "failed" or "not started"
	Recovery  string               // while "recovering": what it is doing (streamsql_views.recovery)
	Epoch     types.TimestampValue // time of the last completed epoch (0: none)
	RowErrors int64                // rows that failed at run time (made NULL or dropped)
	LastError string               // the last row error, or why the view failed
	RowsIn    int64                // rows the view's inputs delivered (backfills included)
	RowsOut   int64                // rows the view emitted: its net changes, epoch by epoch
	LateRows  int64                // rows dropped as late (their window's state was freed)
	LateLost  int64                // late rows LATE ROWS INTO could not store (queue full, write failed)
	// Watermark is the highest watermark the view's output saw, if HasWatermark.
	Watermark    types.TimestampValue
	HasWatermark bool
	ViewRows     int64 // rows in the view now: the cheap measure of its state
	// ChangesSince is the epoch time after which the view keeps the
	// changes it sent to subscribers (SUBSCRIBE ... since), if HasChanges;
	// ChangesBytes is their size on disk.
	ChangesSince types.TimestampValue
	HasChanges   bool
	ChangesBytes int64
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
	{Name: "rows_in", Type: tInt8},
	{Name: "rows_out", Type: tInt8},
	{Name: "late_rows", Type: tInt8},
	{Name: "late_rows_lost", Type: tInt8},
	{Name: "watermark", Type: types.TTimestampTZ},
	{Name: "view_rows", Type: tInt8},
	{Name: "changes_kept_since", Type: types.TTimestampTZ},
	{Name: "changes_kept_bytes", Type: tInt8},
	{Name: "recovery", Type: tText},
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
		var mark any
		if st.HasWatermark {
			mark = st.Watermark
		}
		var since any
		if st.HasChanges {
			since = st.ChangesSince
		}
		err := b.add(row{
			"schemaname": r.Schema, "viewname": r.Name, "status": st.Status, "epoch_time": epoch,
			"row_errors": st.RowErrors, "last_error": nullIfEmpty(st.LastError),
			"rows_in": st.RowsIn, "rows_out": st.RowsOut, "late_rows": st.LateRows, "late_rows_lost": st.LateLost,
			"watermark": mark, "view_rows": st.ViewRows,
			"changes_kept_since": since, "changes_kept_bytes": st.ChangesBytes,
			"recovery": nullIfEmpty(st.Recovery),
		})
		if err != nil {
			return err
		}
	}
	return nil
}
