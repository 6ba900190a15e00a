// Package sink is the contract between the streaming runtime and the sink
// connectors (CREATE SINK): Spec, Sink, Writer and the registry. It is a
// leaf package so that connectors (connector/kafka, connector/file) can
// implement it and register themselves without import cycles.
package sink

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
	"sort"
	"strings"
	"sync"
)

// This file is the contract between the streaming runtime and the sink
// connectors (CREATE SINK; user options in docs/sinks.md, design in
// docs/contributing/sinks.md). A sink is exactly-once by two-phase commit
// over the runtime's aligned checkpoints:
//
//  1. Rows of epoch e reach Writer.Write in order, between barriers.
//  2. At a checkpoint barrier for epoch e the runtime calls PreCommit(e):
//     the writer makes everything it received so far durable enough to be
//     committed later (a Kafka writer ends its batch of the epoch and
//     returns what it needs to commit or redo it; a file writer closes its
//     in-progress files) and returns that as Pending, which the runtime
//     stores in checkpoint e with the job's other state. Pending must
//     cover every epoch pre-committed and not yet committed (a checkpoint
//     may fail; only the last durable one's pending reaches Recover).
//  3. When checkpoint e is durable, the runtime calls Commit(e, pending):
//     the epoch's output becomes visible (Kafka: the transaction that holds
//     the epoch's rows and its progress record commits; files: renamed
//     into place). Commit runs on the job's sink goroutine, in epoch order,
//     once for every pre-committed epoch up to the durable checkpoint.
//  4. After a crash the runtime restores checkpoint e, opens the writer with
//     Recover(e, pending) before any Write: the writer must make epoch e
//     (and nothing after it) visible exactly once, whether or not the
//     Commit before the crash happened (a Kafka writer fences the old
//     producers and reads its progress record; a file writer renames what
//     is left), and discard what was written after e (aborted
//     transactions, stray in-progress files).
//
// Non-checkpoint barriers call Barrier(e): an at-least-once writer may
// flush there (lower latency); an exactly-once writer keeps buffering or
// sends rows into its open transaction.
//
// Errors: a writer that cannot reach its destination retries with backoff
// inside the call (the job waits, so backpressure reaches the sources) and
// reports what it is waiting for through Status; it returns an error
// only when it gives up or ctx ends, which fails the sink's job (restarted
// from its last checkpoint like a failed view).

// OpenFunc validates a sink connector's options at CREATE SINK (and when
// the catalog is loaded at start) and returns a Sink kept for the sink's
// life. cols are the output columns of the sink's query; key is the
// output's key (primary_key, or the view's stream key; nil when none);
// appendOnly says the query never retracts; opts are the WITH options except
// connector, keys lower case; format and encode come from FORMAT f ENCODE e,
// upper-cased ("" when absent). Errors are pgerr errors naming the option.
type OpenFunc func(spec Spec) (Sink, error)

// Spec is what CREATE SINK tells a sink connector.
type Spec struct {
	Name       string // the sink's name (for transactional ids, file names)
	ID         uint32 // the sink's catalog OID, stable across restarts
	Cols       []types.Column
	Key        []int // indexes into Cols; nil when the output has none
	AppendOnly bool
	Options    map[string]string
	Format     string // PLAIN, UPSERT, DEBEZIUM, JSON, CSV, PARQUET or ""
	Encode     string // JSON, CSV, AVRO or ""
	// AllowPath, when not nil, says whether the server lets the sink
	// write under path (file sinks: --file-sink-dir and the fixed rules);
	// a refusal is a *pgerr.Error to return as is.
	AllowPath func(path string) error
}

// Sink is a configured sink connector; immutable and safe for concurrent
// use.
type Sink interface {
	// NewWriter opens writer number `writer` (0 for a sink that runs in
	// one instance) for a fresh start: nothing restored.
	NewWriter(ctx context.Context, writer int) (Writer, error)
	// Recover opens writer number `writer` after a restart from checkpoint
	// epoch with the Pending that PreCommit returned for that epoch (nil
	// if the writer had nothing pending); see step 4 above.
	Recover(ctx context.Context, writer int, epoch uint64, pending []byte) (Writer, error)
}

// Writer delivers one sink instance's rows. It is owned by one
// goroutine (the job's sink goroutine); Status may be called from any.
type Writer interface {
	// Write takes rows of the open epoch. rec's schema is
	// types.ArrowSchema(Cols); ops is nil when every row is an insert.
	// rec and ops are immutable and may be kept.
	Write(ctx context.Context, rec arrow.RecordBatch, ops []stream.Op) error
	// Barrier ends epoch e without a checkpoint.
	Barrier(ctx context.Context, epoch uint64) error
	// PreCommit ends epoch e at a checkpoint and returns what must be kept
	// to commit it after a crash (small: names, ids, counts; or the
	// epoch's encoded rows when the writer keeps them to redo the epoch).
	PreCommit(ctx context.Context, epoch uint64) (pending []byte, err error)
	// Commit makes every epoch up to e visible, once checkpoint e is
	// durable; pending is what PreCommit(e) returned.
	Commit(ctx context.Context, epoch uint64, pending []byte) error
	// Status reports the writer's progress and trouble (streamsql_sinks).
	Status() Status
	// Close releases the writer; uncommitted output is abandoned (a later
	// Recover discards it).
	Close() error
}

// Status is one writer's row in streamsql_sinks.
type Status struct {
	Rows           int64  // rows made visible (committed)
	CommittedEpoch uint64 // the last epoch committed
	OpenTxnAgeMs   int64  // how long the open transaction or file has been open (0: none)
	Errors         int64  // errors met (retried or not)
	LastError      string // the last one, "" if none
	Status         string // "running", "retrying: <why>", "failed"
}

var registry = struct {
	sync.RWMutex
	m map[string]OpenFunc
}{m: map[string]OpenFunc{}}

// Register makes a sink connector available to Lookup under name (matched
// without regard to case). Safe for concurrent use; built-in sinks register
// at init.
func Register(name string, open OpenFunc) {
	registry.Lock()
	defer registry.Unlock()
	registry.m[strings.ToLower(name)] = open
}

// Lookup returns the sink connector registered under name, or nil.
func Lookup(name string) OpenFunc {
	registry.RLock()
	defer registry.RUnlock()
	return registry.m[strings.ToLower(name)]
}

// Names lists the registered sink connectors, sorted.
func Names() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, 0, len(registry.m))
	for n := range registry.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
