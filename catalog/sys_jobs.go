package catalog

import (
	"github.com/streamsql/streamsql/types"
)

// streamsql_jobs: one row per running job (today: the backfill of a view or
// sink being built), with its progress, set by the engine (SetJobStatus);
// SHOW JOBS shows the same rows (docs/observability.md).

// JobStatus is one row of streamsql_jobs.
type JobStatus struct {
	Name        string // the view or sink
	Kind        string // "materialized view" or "sink"
	Job         string // "backfill"
	RowsDone    int64
	RowsTotal   int64
	Progress    float64 // 0..1
	Started     types.TimestampValue
	Elapsed     float64 // seconds
	Remaining   float64 // seconds, an estimate; valid when HasEstimate
	HasEstimate bool
}

// SetJobStatus installs the function streamsql_jobs reads.
func (c *Catalog) SetJobStatus(f func() []JobStatus) { c.jobStatus.Store(&f) }

var streamJobsDef = sysDef{12331, "pg_catalog", "streamsql_jobs", []Column{
	{Name: "name", Type: tText},
	{Name: "kind", Type: tText},
	{Name: "job", Type: tText},
	{Name: "rows_done", Type: tInt8},
	{Name: "rows_total", Type: tInt8},
	{Name: "progress", Type: types.TFloat8},
	{Name: "started", Type: types.TTimestampTZ},
	{Name: "elapsed_seconds", Type: types.TFloat8},
	{Name: "remaining_seconds", Type: types.TFloat8},
}}

func init() {
	pgCatalogDefs = append(pgCatalogDefs, streamJobsDef)
	registerRows("pg_catalog.streamsql_jobs", streamJobsRows)
}

func streamJobsRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	p := c.jobStatus.Load()
	if p == nil {
		return nil
	}
	for _, j := range (*p)() {
		var rem any
		if j.HasEstimate {
			rem = j.Remaining
		}
		err := b.add(row{"name": j.Name, "kind": j.Kind, "job": j.Job, "rows_done": j.RowsDone, "rows_total": j.RowsTotal,
			"progress": j.Progress, "started": j.Started, "elapsed_seconds": j.Elapsed, "remaining_seconds": rem})
		if err != nil {
			return err
		}
	}
	return nil
}

// streamsql_subscriptions: one row per SUBSCRIBE client of a materialized
// view, with how far behind it is, set by the engine (SetSubscriptionStatus).

// SubscriptionStatus is one row of streamsql_subscriptions.
type SubscriptionStatus struct {
	View      string
	ID        int64
	Started   types.TimestampValue
	RowsSent  int64 // change rows the view handed it
	RowsRead  int64 // change rows its client read
	LagRows   int64
	LagEpochs int64
}

// SetSubscriptionStatus installs the function streamsql_subscriptions reads.
func (c *Catalog) SetSubscriptionStatus(f func() []SubscriptionStatus) { c.subStatus.Store(&f) }

var streamSubsDef = sysDef{12332, "pg_catalog", "streamsql_subscriptions", []Column{
	{Name: "view_name", Type: tText},
	{Name: "subscription_id", Type: tInt8},
	{Name: "started", Type: types.TTimestampTZ},
	{Name: "rows_sent", Type: tInt8},
	{Name: "rows_read", Type: tInt8},
	{Name: "lag_rows", Type: tInt8},
	{Name: "lag_epochs", Type: tInt8},
}}

func init() {
	pgCatalogDefs = append(pgCatalogDefs, streamSubsDef)
	registerRows("pg_catalog.streamsql_subscriptions", streamSubsRows)
}

func streamSubsRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	p := c.subStatus.Load()
	if p == nil {
		return nil
	}
	for _, x := range (*p)() {
		err := b.add(row{"view_name": x.View, "subscription_id": x.ID, "started": x.Started, "rows_sent": x.RowsSent,
			"rows_read": x.RowsRead, "lag_rows": x.LagRows, "lag_epochs": x.LagEpochs})
		if err != nil {
			return err
		}
	}
	return nil
}
