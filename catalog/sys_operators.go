package catalog

import (
	"github.com/streamsql/streamsql/types"
)

// streamsql_operators: one row per operator of each running materialized
// view and sink, with the counters the HTTP /metrics also reports
// (docs/observability.md), set by the engine (SetOperatorStatus).

// OperatorStatus is one row of streamsql_operators.
type OperatorStatus struct {
	View        string // the view or sink
	ID          int32  // place in the plan, inputs first; -1 the view itself
	Name        string // kind: Scan, Filter, HashAgg, ..., Materialize, Sink
	Explain     string
	Inputs      string // ids of the operators feeding it, comma-separated
	RowsIn      int64
	RowsOut     int64
	Batches     int64
	BackpressUS int64 // µs waited on a full output queue
	Watermark   types.TimestampValue
	HasWM       bool
	BusyUS      int64 // µs spent handling messages (not waiting on input or output)
	StateBytes  int64 // estimated bytes of its state, as of its last barrier
	HasState    bool  // it keeps state (else state_bytes is NULL)
}

// SetOperatorStatus installs the function streamsql_operators reads.
func (c *Catalog) SetOperatorStatus(f func() []OperatorStatus) { c.operatorStatus.Store(&f) }

var streamOperatorsDef = sysDef{12330, "pg_catalog", "streamsql_operators", []Column{
	{Name: "view_name", Type: tText},
	{Name: "operator_id", Type: tInt4},
	{Name: "operator", Type: tText},
	{Name: "explain", Type: tText},
	{Name: "inputs", Type: tText},
	{Name: "rows_in", Type: tInt8},
	{Name: "rows_out", Type: tInt8},
	{Name: "batches", Type: tInt8},
	{Name: "backpressure_us", Type: tInt8},
	{Name: "watermark", Type: types.TTimestampTZ},
	{Name: "busy_us", Type: tInt8},
	{Name: "state_bytes", Type: tInt8},
}}

func init() {
	pgCatalogDefs = append(pgCatalogDefs, streamOperatorsDef)
	registerRows("pg_catalog.streamsql_operators", streamOperatorsRows)
}

func streamOperatorsRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	p := c.operatorStatus.Load()
	if p == nil {
		return nil
	}
	for _, o := range (*p)() {
		var wm, st any
		if o.HasWM {
			wm = o.Watermark
		}
		if o.HasState {
			st = o.StateBytes
		}
		err := b.add(row{"view_name": o.View, "operator_id": o.ID, "operator": o.Name, "explain": o.Explain,
			"inputs": nullIfEmpty(o.Inputs), "rows_in": o.RowsIn, "rows_out": o.RowsOut, "batches": o.Batches,
			"backpressure_us": o.BackpressUS, "watermark": wm,
			"busy_us": o.BusyUS, "state_bytes": st})
		if err != nil {
			return err
		}
	}
	return nil
}
