// Package connector turns a source's connector settings (CREATE SOURCE ...
// WITH (connector = '...', ...) FORMAT ...) into streaming readers.
//
// Open validates a connector's options once, at CREATE SOURCE (and when the
// catalog is loaded at start), and returns a Source kept for the source's
// life. The streaming runtime calls NewReader once per job that scans the
// source; each Reader reads from the beginning on its own goroutine and
// pushes Arrow record batches to the runtime (schema
// types.ArrowSchema(Source.Columns())).
//
// Sources that can restart where an earlier reader was (Resumable) let the
// runtime record each reader's position at a checkpoint (Positioner) and,
// after a crash, start a reader there (NewReaderAt): the rows after the
// position, added to the state restored from the checkpoint, equal an
// uninterrupted run. Positions are small opaque byte strings, each starting
// with a byte that names its connector and layout version.
//
// Built in: datagen (connector/datagen), nexmark (connector/nexmark),
// file (connector/file) and kafka (connector/kafka). Register adds others. The user-facing options are
// in docs/connectors.md.
package connector

import (
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/connector/file"
	"github.com/streamsql/streamsql/connector/internal/position"
	"github.com/streamsql/streamsql/connector/kafka"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Source is a configured connector, created at CREATE SOURCE and kept for
// the source's life; it validated its options up front. A Source is
// immutable and safe for concurrent use.
type Source interface {
	// Columns are the source's columns (nexmark defines its own; datagen
	// and file take the declared ones). The caller must not modify them.
	Columns() []types.Column
	// NewReader starts reading from the beginning. Each call is independent.
	NewReader() (Reader, error)
}

// Reader produces record batches (schema types.ArrowSchema(Columns())). A
// Reader is owned by one goroutine, which calls Run once.
type Reader interface {
	// Run sends batches to emit until the input ends (bounded sources:
	// return nil), ctx is canceled (return ctx.Err()), or an error. emit
	// blocks while the consumer is busy (backpressure); it returns an error
	// when the consumer is gone, which Run returns. A batch passed to emit
	// belongs to the consumer; Run never touches it again. Batches are
	// never empty.
	Run(ctx context.Context, emit func(arrow.RecordBatch) error) error
}

// Finite is implemented by sources that may end by themselves: Finite
// reports whether this one does, without waiting for wall-clock time or
// for more input (a datagen or nexmark source with a row or event count and
// no pacing, a file without follow). FLUSH waits for such a source to be
// read to its end, so tests and examples over them are deterministic.
type Finite interface {
	Finite() bool
}

// IsFinite reports whether s is a Finite source that ends by itself.
func IsFinite(s Source) bool {
	f, ok := s.(Finite)
	return ok && f.Finite()
}

// Ender is implemented by readers of unbounded inputs that can tell where
// their input ends at a moment (kafka: each partition's last stable
// offset). FLUSH holds its barrier until such a reader's position has
// reached (PositionReached) the end the input had when FLUSH began, so
// that what was in the input then is in the views when FLUSH returns.
type Ender interface {
	// InputEnd returns the position the reader will have reported once it
	// has emitted everything in its input now, or nil when there is
	// nothing to wait for. Safe from any goroutine; it may ask the
	// network (bounded by ctx).
	InputEnd(ctx context.Context) ([]byte, error)
}

// ReaderOptions are a reader's settings that come from the runtime rather
// than from the source's options.
type ReaderOptions struct {
	// Progress tells a Positioner reader that emit(nil) is welcome: a
	// report that its position moved without rows (skipped messages,
	// transaction markers), which an Ender sends so that a FLUSH waiting
	// for its input's end can end. Without it emit never gets nil.
	Progress bool

	// Errors, if not nil, is called on the reader's goroutine for each
	// input record the reader skipped because it could not be read (a
	// file's malformed line: a *pgerr.Error naming the file, line and
	// column). The runtime counts and logs them; Run goes on.
	Errors func(err error)

	// Split and Splits make the reader one of Splits readers of the
	// source (Splits <= 1: the only one), reading its share, Split (0 <=
	// Split < Splits), for sources that split (SplitsReaders). The shares
	// of 0..Splits-1 are disjoint and together the whole input; each
	// reader's rows keep the input's order. A position is the reader's
	// own: resume reader i of N with a position reader i of N reported.
	Split, Splits int

	// Columns, when not nil, are the only columns the reader builds
	// (projection pushdown): ascending indexes into Source.Columns(); its
	// batches hold those, in that order (schema
	// types.ArrowSchema of them). Only sources of connectors that prune
	// (PrunesColumns) take it; their rows, values and positions are those
	// of a reader of every column, so positions resume either.
	Columns []int

	// Route, when not nil, asks a split reader to build its batches
	// already routed among Route.N instances (PartsReader). Readers that
	// cannot route that column ignore it.
	Route *Route
}

// Route is how a reader routes its rows (ReaderOptions.Route): row r
// belongs to instance Owner(v), v being r's value in column Col (an index
// into Source.Columns(), an integer column the reader generates, never
// NULL). Owner is safe from any goroutine.
type Route struct {
	Col   int
	N     int
	Owner func(v int64) int
	// Owner2, when set, routes by two columns instead: row r belongs to
	// instance Owner2(a, b), a and b being its values in Col and Col2.
	Owner2 func(a, b int64) int
	Col2   int
}

// PartsReader is implemented by readers that can build their batches
// routed (ReaderOptions.Route: the generators, for some columns). When
// Routes reports true, the runtime calls RunParts instead of Run.
type PartsReader interface {
	// Routes reports whether the reader routes its rows (it was given a
	// Route for a column it can route).
	Routes() bool
	// RunParts is Run, except that each step emits one batch per instance
	// in one call: parts[k] holds the step's rows that instance k owns, in
	// their order (nil when none), the position after the step being the
	// same for all. The parts belong to the consumer.
	RunParts(ctx context.Context, emit func(parts []arrow.RecordBatch) error) error
}

// Recycler is implemented by readers that lend their batches' buffers
// (the nexmark generator, docs/contributing/parallel.md, "Recycled
// parts"). The one consumer of a batch that Run or RunParts emitted may,
// once it is done with it and holds none of its arrays, pass it to
// Recycle: the reader may then overwrite its buffers. A batch never
// recycled is left to the garbage collector. Recycle is safe from any
// goroutine and is called at most once per batch.
type Recycler interface {
	Recycle(rec arrow.RecordBatch)
}

// PrunesColumns tells whether the readers of a connector build only the
// columns ReaderOptions.Columns names (the planner then tells them which
// a plan reads, stream.Scan.Read): the generators, whose columns are
// computed rather than decoded. Docs: docs/contributing/streaming.md,
// "Projection pushdown into the generators".
func PrunesColumns(connector string) bool {
	switch strings.ToLower(connector) {
	case "nexmark", "datagen":
		return true
	}
	return false
}

// pruner is implemented by the sources whose readers take
// ReaderOptions.Columns.
type pruner interface{ prunesColumns() }

// checkColumns refuses ReaderOptions.Columns for a source that does not
// prune (an internal error: the planner asks only those that do).
func checkColumns(s Source, o ReaderOptions) error {
	if _, ok := s.(pruner); o.Columns != nil && !ok {
		return pgerr.Internal("source %T cannot build only some of its columns", s)
	}
	return nil
}

// SplitsReaders tells whether the sources of a connector honour
// ReaderOptions.Split (the runtime then reads a source of a view at
// parallelism N with N readers): the generators, whose rows are a
// function of their number, and Kafka, whose partitions are spread over
// the readers (partition p to reader p mod N). Docs: docs/contributing/parallel.md, "Sources".
func SplitsReaders(connector string) bool {
	switch connector {
	case "nexmark", "datagen", "kafka":
		return true
	}
	return false
}

// SplitsInTimeOrder tells whether each split reader of a connector's
// sources (SplitsReaders) delivers its rows in the order of their event
// time, so that a row behind its own reader's watermark is behind every
// reader's: the Nexmark generator's events, numbered in time order. A
// Kafka partition's messages may come in any order of time, and datagen's
// random timestamps do. The planner aggregates windows per reader first
// (two-phase) only over sources that do.
func SplitsInTimeOrder(connector string) bool { return connector == "nexmark" }

// OptionsSource is implemented by sources whose readers take ReaderOptions
// (file). Use NewReader rather than calling it directly.
type OptionsSource interface {
	Source
	NewReaderWith(o ReaderOptions) (Reader, error)
}

// NewReader starts a reader of s with the runtime's options: s's
// NewReaderWith when it has one, else s.NewReader (which has no records to
// skip).
func NewReader(s Source, o ReaderOptions) (Reader, error) {
	if err := checkColumns(s, o); err != nil {
		return nil, err
	}
	if os, ok := s.(OptionsSource); ok {
		return os.NewReaderWith(o)
	}
	return s.NewReader()
}

// Resumable is implemented by sources whose readers can start at a
// position one of their readers reported (all built-in connectors).
type Resumable interface {
	Source
	// NewReaderAt returns a reader that starts at pos (nil: the start), as
	// if a reader from the start had already emitted everything up to pos.
	// Its Reader implements Positioner. pos must come from a reader of an
	// equal source; a malformed one is an XX001 error, one the input no
	// longer reaches (a shorter file, a position past a generator's end)
	// is a 55000 error, from here or from Run.
	NewReaderAt(pos []byte, o ReaderOptions) (Reader, error)
}

// Positioner is implemented by the readers of Resumable sources.
type Positioner interface {
	// Position is the reader's position just after the last batch it
	// passed to emit (the start, before the first). Call it on the Run
	// goroutine, from inside emit (the runtime pairs it with the batch) or
	// after Run returned; the caller owns the result.
	Position() []byte
}

// ComparePositions orders two positions reported by readers of one source
// (-1, 0, 1); ok is false when they cannot be compared. Recovery uses it
// to tell when a resumed reader has read as far as it had before a crash.
func ComparePositions(a, b []byte) (c int, ok bool) { return position.Compare(a, b) }

// PositionReached reports whether a reader at a has read at least as far
// as one at b (both of one source): for partitioned positions (Kafka), in
// every partition; positions that cannot be compared at all count as
// reached.
func PositionReached(a, b []byte) bool { return position.Reached(a, b) }

// NewReaderAt starts a reader of s at pos (nil: the start, as NewReader)
// with the runtime's options. When s is Resumable the reader implements
// Positioner. A position for a source that is not Resumable is a 55000
// error.
func NewReaderAt(s Source, pos []byte, o ReaderOptions) (Reader, error) {
	if err := checkColumns(s, o); err != nil {
		return nil, err
	}
	if rs, ok := s.(Resumable); ok {
		return rs.NewReaderAt(pos, o)
	}
	if pos != nil {
		return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "this source cannot resume at a position (%T)", s).
			WithHint("Its connector does not support restarting from a checkpoint.")
	}
	return NewReader(s, o)
}

// Checker is implemented by sources that can check, by connecting, that
// their input exists (kafka: the brokers answer, the topic exists). CREATE
// SOURCE calls Check so that a typo fails there; loading the catalog at
// start does not (readers wait for their input instead).
type Checker interface {
	Check(ctx context.Context) error
}

// Partitioned is implemented by readers whose input has partitions, each
// with its own order of event time (kafka). Every batch such a reader
// emits holds rows of one partition; the runtime keeps a watermark per
// partition and merges them by minimum (docs/contributing/streaming.md).
type Partitioned interface {
	// Partition is the partition of the batch being emitted. Call it on
	// the Run goroutine from inside emit, as Position.
	Partition() int32
	// Partitions are the partitions the reader reads now, from any
	// goroutine; nil while it does not know them yet (starting), empty
	// when it has none. A partition is listed before its first batch.
	Partitions() []int32
}

// Reporter is implemented by readers that report their progress per
// partition (streamsql_sources). Report is safe from any goroutine.
type Reporter interface {
	Report() Report
}

// Report is a reader's progress.
type Report struct {
	State      string // e.g. starting, running, retrying, waiting for topic
	LastError  string // the last error met (retried), "" if none
	Partitions []PartitionReport
}

// PartitionReport is one partition's progress; -1 is "not known".
type PartitionReport struct {
	Partition                  int32
	Offset, HighWatermark, Lag int64
	Rows, BadRows              int64
	LastError                  string // the partition's last skipped message, and why ("": none)
}

// IncludeColumn is the column that "INCLUDE what [AS name]" adds to a
// source of the connector (name "" for the connector's default name), and
// the WITH option that records it for Open (the connector's own key, set
// to the column's name). Only kafka has INCLUDE columns; for another
// connector, or an unknown what, it is a 0A000 or 22023 error.
func IncludeColumn(connector, what, name string) (col types.Column, optKey string, err error) {
	if !strings.EqualFold(connector, "kafka") {
		return col, "", pgerr.Unsupported("a %s source has no INCLUDE columns", connector).
			WithHint("INCLUDE adds Kafka metadata (partition, offset, timestamp, key) to a kafka source.")
	}
	return kafka.IncludeColumn(what, name)
}

// OpenFunc validates and configures one connector; see Open.
type OpenFunc func(cols []types.Column, opts map[string]string, format string) (Source, error)

// Env is what the server, not the statement, decides about sources.
type Env struct {
	// Files says which files the file connector may read (the server's
	// --file-source-dir and its data directory); the zero value applies
	// only the fixed rules (file.Access).
	Files file.Access
}

// envOpenFunc is an OpenFunc that is told the server's Env.
type envOpenFunc func(cols []types.Column, opts map[string]string, format string, env Env) (Source, error)

var registry = struct {
	sync.RWMutex
	m map[string]envOpenFunc
}{m: map[string]envOpenFunc{}}

// Register makes a connector available to Open under name (matched without
// regard to case), replacing any connector of that name. It is safe for
// concurrent use; built-in connectors are registered at init.
func Register(name string, open OpenFunc) {
	registry.Lock()
	defer registry.Unlock()
	registry.m[strings.ToLower(name)] = func(cols []types.Column, opts map[string]string, format string, _ Env) (Source, error) {
		return open(cols, opts, format)
	}
}

func registerEnv(name string, open envOpenFunc) {
	registry.Lock()
	defer registry.Unlock()
	registry.m[name] = open
}

// Names lists the registered connectors, sorted.
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

// Open validates and configures a connector. cols are the declared columns
// (may be empty for nexmark; a kafka source's INCLUDE columns last); opts
// are the WITH options except connector, keys lower case; format is the
// FORMAT clause: "", "JSON", "CSV", or "F ENCODE E" ("PLAIN ENCODE JSON"). Errors
// are pgerr errors naming the bad option (22023 for a bad or unknown
// option, 42P16 for columns that do not suit the connector, 58P01 for a
// missing file, ...). It opens under the zero Env; the server uses OpenWith.
func Open(name string, cols []types.Column, opts map[string]string, format string) (Source, error) {
	return OpenWith(name, cols, opts, format, Env{})
}

// OpenWith is Open under the server's Env (42501 for a file env.Files
// forbids).
func OpenWith(name string, cols []types.Column, opts map[string]string, format string, env Env) (Source, error) {
	registry.RLock()
	open := registry.m[strings.ToLower(name)]
	registry.RUnlock()
	if open == nil {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "unknown connector %q", name).
			WithHint("Known connectors: %s.", strings.Join(Names(), ", "))
	}
	if opts == nil {
		opts = map[string]string{}
	}
	return open(cols, opts, format, env)
}
