package engine

import (
	"context"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Config configures an Engine.
type Config struct {
	// DataDir holds the catalog and the table logs; created when missing.
	DataDir string
	// Cluster, when set, makes this server a cluster node (cluster.go):
	// SHOW NODES and streamsql_nodes list the nodes, and statements
	// that a cluster cannot run yet are refused with 0A000.
	Cluster ClusterNode
	// Logf receives one-line operational messages; nil discards them.
	Logf func(format string, args ...any)
	// BarrierInterval is the streaming epoch length (0: 100 ms; negative:
	// epochs end only at FLUSH and CREATE MATERIALIZED VIEW, for tests).
	BarrierInterval time.Duration
	// StreamingParallelism is the default of streaming_parallelism: the
	// instances of each keyed operator of a new materialized view (0:
	// GOMAXPROCS, the cores the process may use).
	StreamingParallelism int
	// SubscribeBufferBytes bounds the changes one subscriber may leave
	// unread in memory (Arrow buffer sizes; 0: 32 MiB). Past it a
	// subscriber of a materialized view reads on from the view's
	// changelog, one of a table or query spills to a file in
	// <DataDir>/tmp/subscribe.
	SubscribeBufferBytes int64
	// SubscribeMemoryLimit bounds the unread changes of all subscribers
	// together (0: 256 MiB); past it, as above.
	SubscribeMemoryLimit int64
	// SubscribeSpillBytes bounds one subscriber's spill file (0: 1 GiB);
	// past it the subscription ends with 53400.
	SubscribeSpillBytes int64
	// Clock is processing time for the streaming runtime (idle watermarks,
	// EARLY EVERY, EMIT EVERY, PROCTIME()); nil is the wall clock. With a
	// *dataflow.ManualClock (NewManualClock), ADVANCE CLOCK moves it.
	Clock stream.Clock
	// CheckpointInterval is the time between checkpoints of the views'
	// state (0: 1 s; negative: only the CHECKPOINT statement takes one).
	// Checkpoints are taken on the barrier ticker, so with a negative
	// BarrierInterval only CHECKPOINT takes one either.
	CheckpointInterval time.Duration
	// ViewRetryInterval is how often a failed materialized view whose
	// sources open again is restarted by itself (0: 10 s; negative: never,
	// only ALTER MATERIALIZED VIEW ... RESUME restarts it).
	ViewRetryInterval time.Duration
	// RecoverViewsInBackground makes Open return once the tables and the
	// catalog are open: the materialized views recover on a goroutine of
	// their own (engine/recovery.go), reads of a view still recovering
	// return the checkpoint's rows with a NOTICE, and FLUSH and the DDL
	// that starts or stops views wait for the recovery (WaitRecovered).
	// Without it Open returns once every view has recovered.
	RecoverViewsInBackground bool
	// RecoveryGate, if set, is called by the recovery once every view is
	// restored from the checkpoint (or started), before the replay of
	// their inputs begins; the replay waits until it returns. closing is
	// closed when Close begins: the gate must then return. A test hook:
	// it makes "recovering" states last as long as a test needs.
	RecoveryGate func(closing <-chan struct{})
	// NoCheckpoints turns checkpoints off: views are rebuilt from their
	// inputs at every start.
	NoCheckpoints bool
	// ChangelogRetention is how long each materialized view keeps its
	// published changes for SUBSCRIBE ... WITH (since = ...) (0: 1 hour).
	ChangelogRetention time.Duration
	// FileSourceDir, when not "", is the only directory file sources may
	// read from (after resolving links), for every user. Empty: any regular
	// file the process can read, as PostgreSQL's COPY FROM a file.
	FileSourceDir string
	// FileSinkDir, when not "", is the only directory file sinks may write
	// into (after resolving links). Empty: any directory the process can
	// write, except the data directory and FileDenyPaths.
	FileSinkDir string
	// FileDenyPaths are files or directories file sources never read,
	// besides the data directory (the TLS key, a password file).
	FileDenyPaths []string
	// RecoverDamaged starts despite a damaged table log (one whose middle
	// fails its checksums, or that ends before a position a checkpoint
	// recorded): its damaged part is moved to <DataDir>/damaged and the
	// valid prefix kept. Without it Open fails with a *storage.DamagedError.
	RecoverDamaged bool
	// ServerSettings are the values SHOW reports for read-only settings
	// fixed at server start (max_connections, authentication_timeout...),
	// in place of their defaults; names are case-insensitive.
	ServerSettings map[string]string
	// MemoryLimit bounds the memory of all batch statements together, in
	// bytes (0: 75% of the machine's or cgroup's memory; negative: none).
	MemoryLimit int64
	// QueryMemoryLimit bounds one statement's memory, in bytes (0: 1 GiB;
	// negative: none but MemoryLimit). statement_mem_limit can lower it.
	QueryMemoryLimit int64
}

// ManualClockStart is where a manual clock made by NewManualClock starts.
var ManualClockStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// NewManualClock returns a manual clock for Config.Clock, reading
// ManualClockStart until ADVANCE CLOCK moves it.
func NewManualClock() *dataflow.ManualClock { return dataflow.NewManualClock(ManualClockStart) }

// Prepared is a statement after binding: what the wire's Describe reports.
// It is immutable and may be executed many times.
type Prepared struct {
	Stmt sql.Statement
	// ParamTypes are the types of $1..$n, given by the client or inferred.
	ParamTypes []types.T
	// Columns are the result columns; nil for statements that return no rows.
	Columns []types.Column
	// plan is engine-private.
	plan any
}

// Result is one executed statement. Exactly one of Rows, CopyIn, CopyOut is
// set for statements that stream data; none for plain commands.
type Result struct {
	// Tag is the command tag. For statements that return rows (Rows != nil)
	// it is the verb only ("SELECT", "FETCH") and the wire appends the count
	// of rows it sent.
	Tag string
	// Columns describe Rows (same as Prepared.Columns).
	Columns []types.Column
	// Rows produces the result batches; the wire must Close it. Rows that
	// may wait for input (SUBSCRIBE, FETCH from one) implement TryNexter.
	Rows exec.Iterator
	// Binary asks for Rows in binary format in the simple query protocol
	// (FETCH from a BINARY cursor); with the extended protocol the client's
	// Bind chooses, as in PostgreSQL.
	Binary bool
	// CopyIn is set for COPY ... FROM STDIN.
	CopyIn CopyIn
	// CopyOut is set for COPY ... TO STDOUT.
	CopyOut *CopyOut
	// Notices are sent before the result (NoticeResponse).
	Notices []*pgerr.Error
	// ParamStatus lists reportable parameters that changed (SET TimeZone...),
	// to be sent as ParameterStatus.
	ParamStatus map[string]string
}

// CopyIn receives COPY FROM STDIN data. The wire calls Write for each
// CopyData message, then Finish on CopyDone or Abort on CopyFail.
type CopyIn interface {
	// Columns is the number of columns the data rows have.
	Columns() int
	// Binary reports FORMAT binary (the wire's CopyInResponse format).
	Binary() bool
	Write(data []byte) error
	// Finish loads what was written (durably) and returns the tag "COPY n".
	Finish() (tag string, err error)
	Abort(reason string)
}

// CopyOut describes COPY ... TO STDOUT: the wire encodes Rows in Format.
type CopyOut struct {
	Columns   []types.Column
	Rows      exec.Iterator
	Format    string // "text", "csv" or "binary"
	Delimiter string // default "\t" (text) or "," (csv)
	Null      string // default `\N` (text) or "" (csv)
	Header    bool
	Quote     string // csv quote, default `"`
	Escape    string // csv escape, default = Quote
	// ForceQuote (csv, FORCE_QUOTE) quotes every non-NULL value of the
	// columns it flags; nil flags none.
	ForceQuote []bool
}

// TxStatus is ReadyForQuery's status byte: 'I' idle, 'T' in a transaction
// block, 'E' in a failed transaction block.
type TxStatus byte

// SessionAPI is what the wire needs from a session. One session serves one
// connection; its methods are called from that connection's goroutine only.
// The wire cancels a running statement by canceling the ctx it passed.
type SessionAPI interface {
	// Prepare binds one parsed statement. paramTypes may be shorter than the
	// statement's parameters or hold zeros (unspecified): those are inferred.
	Prepare(ctx context.Context, stmt sql.Statement, paramOIDs []uint32) (*Prepared, error)
	// Execute runs a prepared statement with parameter values in Go form.
	Execute(ctx context.Context, p *Prepared, params []types.Value) (*Result, error)
	// TxStatus is the current transaction status.
	TxStatus() TxStatus
	// Format is the session's current text formatting (TimeZone, DateStyle,
	// IntervalStyle, extra_float_digits).
	Format() types.FormatOptions
	// ParamStatus returns every reportable parameter for the startup
	// ParameterStatus messages.
	ParamStatus() map[string]string
	// Close ends the session (rolls back an open transaction).
	Close()
}
