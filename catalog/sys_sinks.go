package catalog

import (
	"sort"
	"strings"

	"github.com/streamsql/streamsql/types"
)

// streamsql_sinks: one row per sink (CREATE SINK) with its definition and
// its writer's state, which the engine reports through SetSinkStatus.
// Sinks are relations of kind KindSink that pg_class leaves out.

// SinkStatus is a sink's running state (connector/sink.Status, summed over
// its writers, plus the job's state).
type SinkStatus struct {
	Status string // "running", "retrying: ...", "failed", "not started"
	Rows   int64  // rows committed (visible downstream)
	// CommittedEpoch is the time of the last committed epoch (0: none).
	CommittedEpoch types.TimestampValue
	// OpenTxnMicros is the age of the open transaction or file (0: none).
	OpenTxnMicros int64
	Errors        int64
	LastError     string
}

// SetSinkStatus installs the function streamsql_sinks reads.
func (c *Catalog) SetSinkStatus(f func(oid uint32) (SinkStatus, bool)) {
	c.sinkStatus.Store(&f)
}

var streamSinksDef = sysDef{12311, "pg_catalog", "streamsql_sinks", []Column{
	{Name: "schemaname", Type: tName},
	{Name: "sink_name", Type: tName},
	{Name: "owner", Type: tName},
	{Name: "connector", Type: tText},
	{Name: "format", Type: tText},
	{Name: "definition", Type: tText},
	{Name: "status", Type: tText},
	{Name: "rows", Type: tInt8},
	{Name: "committed_epoch", Type: types.TTimestampTZ},
	{Name: "open_transaction_age", Type: types.TInterval},
	{Name: "errors", Type: tInt8},
	{Name: "last_error", Type: tText},
}}

func init() {
	pgCatalogDefs = append(pgCatalogDefs, streamSinksDef)
	registerRows("pg_catalog.streamsql_sinks", streamSinksRows)
}

// sortedSinks returns the sinks of s in OID order.
func (s *snapshot) sortedSinks() []*Relation {
	var out []*Relation
	for _, r := range s.byOID {
		if r.Kind == KindSink {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].OID < out[j].OID })
	return out
}

// SinkFormat renders a sink's FORMAT clause words: "JSON",
// "UPSERT ENCODE JSON", "" when none was given.
func SinkFormat(r *Relation) string {
	if r.Encode != "" {
		return r.Format + " ENCODE " + r.Encode
	}
	return r.Format
}

// sinkFormatShown is the format streamsql_sinks shows: the FORMAT
// clause, or else the option format (a file sink's other way to give
// it) in capitals.
func sinkFormatShown(r *Relation) string {
	if f := SinkFormat(r); f != "" {
		return f
	}
	return strings.ToUpper(strings.TrimSpace(r.Options["format"]))
}

func streamSinksRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	var status func(uint32) (SinkStatus, bool)
	if p := c.sinkStatus.Load(); p != nil {
		status = *p
	}
	for _, r := range s.sortedSinks() {
		st := SinkStatus{Status: "not started"}
		if status != nil {
			if x, ok := status(r.OID); ok {
				st = x
			}
		}
		var epoch any
		if st.CommittedEpoch != 0 {
			epoch = st.CommittedEpoch
		}
		var age any
		if st.OpenTxnMicros > 0 {
			age = types.IntervalValue{Micros: st.OpenTxnMicros}
		}
		err := b.add(row{
			"schemaname": r.Schema, "sink_name": r.Name, "owner": ownerName(c, r, ctx),
			"connector": r.Connector, "format": nullIfEmpty(sinkFormatShown(r)), "definition": nullIfEmpty(r.ViewQuery),
			"status": st.Status, "rows": st.Rows, "committed_epoch": epoch, "open_transaction_age": age,
			"errors": st.Errors, "last_error": nullIfEmpty(st.LastError),
		})
		if err != nil {
			return err
		}
	}
	return nil
}
