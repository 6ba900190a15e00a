package stream

import (
	"fmt"
	"github.com/apache/arrow-go/v18/arrow"
	"strings"
	"time"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// ScanKind tells what a Scan reads.
type ScanKind uint8

// Scan kinds.
const (
	ScanTable  ScanKind = iota // a table's changelog (backfilled from its rows)
	ScanSource                 // a connector's rows (insert only)
	ScanView                   // a materialized view's changelog (backfilled from its snapshot)
	ScanValues                 // constant rows (Values), sent once when the job starts
)

func (k ScanKind) String() string {
	switch k {
	case ScanTable:
		return "table"
	case ScanSource:
		return "source"
	case ScanView:
		return "materialized view"
	case ScanValues:
		return "constant rows"
	}
	return "?"
}

// Scan is a leaf of a streaming plan: every column of a table, a source or a
// materialized view (or, for a source scan with Read, those columns), as a
// changelog. The runtime (exec/dataflow) supplies
// its single input channel, already carrying the backfill, the live changes,
// the watermarks and the barriers; Scan passes it on unchanged.
type Scan struct {
	Rel  uint32 // catalog OID of the relation
	Name string // the relation's name, for EXPLAIN
	Kind ScanKind
	Cols []types.Column // every column of the relation, in order
	// Read, when not nil, are the only columns of a source scan the plan
	// reads (ascending indexes into Cols): the scan's rows hold those,
	// in that order (Columns), and its reader builds only those when its
	// connector prunes (connector.PrunesColumns; else the runtime drops
	// the others as the batches leave the reader). Set by the planner
	// (projection pushdown, docs/contributing/streaming.md).
	Read []int
	// Key is the relation's stream key (primary key of a table, the key of
	// a view), or nil when rows are identified by all their values.
	Key []int
	// AppendOnly is set when the changelog never retracts (sources,
	// APPEND ONLY tables), which lets operators keep less state.
	AppendOnly bool
	// Watermark is the relation's WATERMARK FOR clause, bound (nil: none).
	// The runtime's reader computes it; Scan itself only passes messages on.
	Watermark *ScanWatermark
	// Splittable is set on a source scan whose connector splits its input
	// among readers (connector.SplitsReaders); Readers, set by the planner
	// at parallelism N > 1 on such a scan, is how many readers the runtime
	// runs, each its share, merged into this scan's stream (0 or 1: one).
	// docs/contributing/parallel.md, "Sources".
	Splittable bool
	Readers    int
	// SplitsInOrder is set on a Splittable scan whose readers each deliver
	// their rows in event-time order (connector.SplitsInTimeOrder): a row
	// late by its own reader's watermark is late by the minimum too.
	SplitsInOrder bool
	// Share, when not nil, says that this scan and the other scans of the
	// plan with the same Share read their source once: the runtime runs
	// one reader (or one set of split readers) over Share's columns and
	// passes every batch, watermark and barrier on to each of them, each
	// with its own columns (Read). ShareIdx is this scan's index among
	// them. Set by the planner (docs/contributing/streaming.md, "Shared
	// source reads").
	Share    *ScanShare
	ShareIdx int
	// Lead, when not nil, ties this scan to the other scan of the same
	// source with the same Lead, which the plan reads apart (an interval
	// join of the source's rows against an aggregate of it: the planner's
	// readApart); the one with Behind set, the rows the join stores, is
	// kept from running ahead of the other in event time: its split
	// readers wait for the other's (exec/dataflow/splitalign.go).
	Lead   *ScanLead
	Behind bool
	// Values are a ScanValues scan's rows, in Cols' Arrow types: a FROM
	// item that reads no relation (VALUES, SELECT without FROM, a
	// set-returning function of constants, a WITH RECURSIVE over
	// constants), computed once when the query was planned. The runtime
	// sends them as inserts when the job starts from scratch, and nothing
	// when it resumes from a checkpoint (its state holds them). Shared,
	// never written.
	Values []arrow.RecordBatch
}

// ScanLead is what two scans of one source read apart share (Scan.Lead).
type ScanLead struct {
	Rel uint32 // the source (a field, so that two leads are two pointers)
}

// ScanShare is one read of a source shared by several scans of a plan:
// Read is the union of their columns (ascending indexes into the
// relation's columns; nil: every column), Watermark the source's
// watermark over those columns, Scans how many scans share it and Reads
// each one's Read (by ShareIdx). Immutable once planned.
type ScanShare struct {
	Read      []int
	Watermark *ScanWatermark
	Scans     int
	Reads     [][]int
}

// Shared returns the scan the runtime opens for s's shared read: s with
// the share's columns and watermark, and no share. The caller keeps it
// for every scan of the share.
func (s *Scan) Shared() *Scan {
	u := *s
	u.Read, u.Watermark, u.Share, u.ShareIdx = s.Share.Read, s.Share.Watermark, nil, 0
	return &u
}

// ScanWatermark is a table's or source's WATERMARK FOR col AS expr: after
// each batch the reader raises the watermark of column Col to the largest
// value of Expr over the batch's new rows (it never moves back), and sends
// it after the batch when it rose. Col and Expr are over the scan's
// columns (Columns: every column of the relation, or those of Read); Expr
// has Col's type (timestamp or timestamptz). With IdleTimeout
// set, a reader that delivered no rows for that long (processing time)
// moves the watermark on by the processing time elapsed since its last row.
// Immutable.
type ScanWatermark struct {
	Col         int
	Expr        expr.Expr
	IdleTimeout time.Duration
}

// String renders the watermark for EXPLAIN.
func (w *ScanWatermark) String() string {
	s := "watermark " + w.Expr.String()
	if w.IdleTimeout > 0 {
		s += ", idle timeout " + w.IdleTimeout.String()
	}
	return s
}

// Columns implements Node: Cols, or the columns of Read.
func (s *Scan) Columns() []types.Column {
	if s.Read == nil {
		return s.Cols
	}
	out := make([]types.Column, len(s.Read))
	for i, c := range s.Read {
		out[i] = s.Cols[c]
	}
	return out
}

// Inputs implements Node: none, the runtime feeds a Scan.
func (s *Scan) Inputs() []Node { return nil }

// Explain implements Node.
func (s *Scan) Explain() string {
	e := fmt.Sprintf("StreamScan: %s %s", s.Kind, s.Name)
	if s.Kind == ScanValues {
		var n int64
		for _, r := range s.Values {
			n += r.NumRows()
		}
		e += fmt.Sprintf(" (%d rows)", n)
	}
	if s.AppendOnly {
		e += " (append only)"
	}
	if s.Read != nil {
		names := make([]string, len(s.Read))
		for i, c := range s.Read {
			names[i] = s.Cols[c].Name
		}
		e += " (columns: " + strings.Join(names, ", ") + ")"
	}
	if s.Watermark != nil {
		e += " (" + s.Watermark.String() + ")"
	}
	if s.Readers > 1 {
		e += fmt.Sprintf(" (%d readers)", s.Readers)
	}
	if s.Share != nil {
		e += fmt.Sprintf(" (read shared by %d scans)", s.Share.Scans)
	}
	if s.Lead != nil && s.Behind {
		e += " (kept behind the source's other scan)"
	}
	return e
}

// Start implements Node: it returns the runtime-supplied input.
func (s *Scan) Start(env *Env, inputs []<-chan Message) <-chan Message {
	if len(inputs) != 1 {
		env.Fail(fmt.Errorf("stream: scan of %s started without its input", s.Name))
		out := make(chan Message)
		close(out)
		return out
	}
	return inputs[0]
}
