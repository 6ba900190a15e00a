package connector

import (
	"context"

	"github.com/streamsql/streamsql/connector/pgcdc"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// The postgres-cdc connector (connector/pgcdc) keeps a table equal to an
// upstream PostgreSQL table; only CREATE TABLE ... WITH (connector =
// 'postgres-cdc') reads it (engine/ingest_cdc.go).
var (
	_ Resumable  = pgcdcSource{}
	_ Positioner = pgcdcReader{}
	_ Reporter   = pgcdcReader{}
)

func init() { Register("postgres-cdc", openPgCDC) }

// pgcdcSource adapts a pgcdc.Source.
type pgcdcSource struct{ src *pgcdc.Source }

func openPgCDC(cols []types.Column, opts map[string]string, format string) (Source, error) {
	src, err := pgcdc.Open(cols, opts, format)
	if err != nil {
		return nil, err
	}
	return pgcdcSource{src}, nil
}

func (s pgcdcSource) Columns() []types.Column    { return s.src.Columns() }
func (s pgcdcSource) NewReader() (Reader, error) { return s.NewReaderAt(nil, ReaderOptions{}) }

// NewReaderAt implements Resumable: the position is an upstream LSN.
func (s pgcdcSource) NewReaderAt(pos []byte, o ReaderOptions) (Reader, error) {
	if s.src.Shared() {
		return nil, pgerr.Unsupported("a postgres-cdc source is read through its tables").
			WithHint("CREATE TABLE t (...) FROM source TABLE 'schema.table'.")
	}
	r := s.src.NewReader(pgcdc.ReaderOptions{Errors: o.Errors})
	if err := r.Seek(pos); err != nil {
		return nil, err
	}
	return pgcdcReader{r}, nil
}

// Check implements Checker for a shared source (CREATE SOURCE): the
// server answers with wal_level = logical. A table's source is checked
// by CheckTable instead.
func (s pgcdcSource) Check(ctx context.Context) error {
	if s.src.Shared() {
		return s.src.CheckShared(ctx)
	}
	return nil
}

// CheckTable checks the upstream table against the declared columns and
// primary key (pk: column names) and prepares the publication.
func (s pgcdcSource) CheckTable(ctx context.Context, pk []string) error { return s.src.Check(ctx, pk) }

// NeedsSnapshot reports whether a reader at pos starts with a snapshot
// (the table must be emptied first).
func (s pgcdcSource) NeedsSnapshot(pos []byte) bool { return pgcdc.NeedsSnapshot(pos) }

// DropSlot drops the upstream replication slot (the table was dropped).
func (s pgcdcSource) DropSlot(ctx context.Context) error { return s.src.DropSlot(ctx) }

// pgcdcReader adds Report to a pgcdc.Reader: one partition (0) whose
// offset is the LSN confirmed upstream and whose high watermark is the
// upstream WAL end (lag in bytes of WAL).
type pgcdcReader struct{ *pgcdc.Reader }

// Report implements Reporter.
func (r pgcdcReader) Report() Report {
	st := r.Status()
	p := PartitionReport{Partition: 0, Offset: int64(st.Confirmed), HighWatermark: int64(st.WALEnd), Lag: -1,
		Rows: st.Rows, BadRows: st.BadRows}
	if st.WALEnd > 0 {
		p.HighWatermark = int64(st.WALEnd)
		p.Lag = max(0, int64(st.WALEnd)-int64(st.Confirmed))
	} else {
		p.HighWatermark = -1
	}
	return Report{State: st.State, LastError: st.LastError, Partitions: []PartitionReport{p}}
}

// PgCDCColumns reads the columns and primary key (column names) of the
// upstream table a postgres-cdc table's options name, for CREATE TABLE
// without a column list (pgcdc.UpstreamColumns).
func PgCDCColumns(ctx context.Context, opts map[string]string) ([]types.Column, []string, error) {
	return pgcdc.UpstreamColumns(ctx, opts)
}
