package bench

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/connector/file"
	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/connector/sink/blackhole"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/storage/checkpoint"
	"github.com/streamsql/streamsql/types"
)

//go:embed nexmark/*.sql
var queryFiles embed.FS

// Queries lists the benchmark's queries ("q0", "q1", ...) in numeric order.
func Queries() []string {
	ents, _ := queryFiles.ReadDir("nexmark")
	var names []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".sql"); ok {
			names = append(names, n)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return queryNumber(a) - queryNumber(b) })
	return names
}

func queryNumber(name string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(name, "q"))
	return n
}

// QuerySQL returns the text of a query of Queries.
func QuerySQL(name string) (string, error) {
	b, err := queryFiles.ReadFile("nexmark/" + name + ".sql")
	if err != nil {
		return "", pgerr.New(pgerr.InvalidParameterValue, "unknown nexmark query %q", name).
			WithHint("queries: %s", strings.Join(Queries(), ", "))
	}
	return string(b), nil
}

// DefaultEvents is the number of events Run generates unless told.
const DefaultEvents = 1_000_000

// Options configure one Run.
type Options struct {
	// Query names a query of Queries ("q3"); SQL, if set, is run instead
	// (a SELECT over the sources bid, auction and person).
	Query string
	SQL   string
	// Events counts the events of all three kinds (46 of 50 are bids);
	// 0 means DefaultEvents.
	Events int64
	// Seed is the generator's seed.
	Seed uint64
	// Materialize ends the query in a Materialize (a materialized view's
	// state) instead of the counting discard sink.
	Materialize bool
	// GeneratorOnly runs the query's sources into discard sinks without
	// any operator: the cost of generating its input.
	GeneratorOnly bool
	// BarrierInterval is the epoch length (0: dataflow's default, 100 ms).
	BarrierInterval time.Duration
	// NoOperatorStats turns the per-operator counters off
	// (dataflow.Config.NoOperatorStats), to measure their cost.
	NoOperatorStats bool
	// HeapProfile, if set, receives a pprof heap profile taken at the end,
	// after a GC, while the job still holds its state.
	HeapProfile io.Writer
	// OnChunk, if set, also receives every chunk the discard sink gets, on
	// the sink's goroutine (tests check results with it).
	OnChunk func(*stream.Chunk)
	// CheckpointInterval, when positive, checkpoints the job's state that
	// often into a temporary directory (CheckpointDir if set), to measure
	// what checkpoints cost.
	CheckpointInterval time.Duration
	CheckpointDir      string
	// FileSink, if set, sends the query's output to a file sink writing
	// into this directory (FORMAT FileFormat: JSON or PARQUET), partitioned
	// as the query's "-- partition_by: a, b" line says (q10). Files are
	// committed at each checkpoint (CheckpointInterval), else every epoch.
	FileSink   string
	FileFormat string
	// Parallelism is the streaming parallelism the query is planned with
	// (planner.Env.Parallelism; 0 or 1: one instance per operator).
	Parallelism int
	// ParallelismAuto plans it as a view created without SET
	// streaming_parallelism is (planner.Env.ParallelismAuto: fewer
	// instances for a plan with several keyed operators).
	ParallelismAuto bool
	// SplitDistinct is streaming_split_distinct (planner.Env.SplitDistinct:
	// on, off or auto; "" is off).
	SplitDistinct string
	// Unshared plans every scan of a source as a read of its own
	// (planner.Env.NoSharedReads), to measure what sharing one read saves.
	Unshared bool
	// Instances profiles the run's CPU and reports it per fragment and
	// instance (Result.Instances, instances.go). It takes the process's
	// CPU profile: none may be running.
	Instances bool
	// CoreRTT measures a cache line's round trip between two of the
	// process's CPUs before the run (Result.CoreRTT); streamsqld's bench
	// command sets it, tests leave it off (it spins two cores).
	CoreRTT bool
}

// Result is what one Run measured.
type Result struct {
	Query  string
	Events int64
	// Columns are the query's output columns (those of the sink's chunks).
	Columns []types.Column
	// Rows counts the rows the sink received (inserts and retractions);
	// with Materialize, the rows of the view at the end.
	Rows int64
	Wall time.Duration // until the sources ended and the last epoch completed
	CPU  time.Duration // user and system CPU time of the process over Wall
	// Procs is GOMAXPROCS during the run.
	Procs int
	// Parallelism is the instances of each keyed operator of the plan.
	Parallelism int
	// PeakRSS is the process's peak resident set so far (getrusage), so
	// it covers earlier work in the same process too.
	PeakRSS uint64
	// PeakHeap is the highest Go heap (bytes in heap objects, live or not
	// yet collected) sampled every few milliseconds during the run.
	PeakHeap uint64
	// StateHeap is the live heap after a GC at the end, while the job
	// still runs, minus the live heap before it started: the job's state.
	StateHeap int64
	// Checkpoints, with Options.CheckpointInterval: the checkpoints
	// committed during the run and the last one's figures.
	Checkpoints dataflow.CheckpointStats
	// Instances, with Options.Instances, is where the CPU went.
	Instances *InstanceReport
	// CoreRTT is a cache line's round trip between two of the process's
	// CPUs measured just before the run (CoreRoundTrip, Options.CoreRTT),
	// 0 without the option or with fewer than two: where the host placed them, which decides what rows
	// exchanged between cores cost (docs/benchmarks.md).
	CoreRTT time.Duration
}

// coreRTTRounds is CoreRoundTrip's rounds before a run: 10-40 ms.
const coreRTTRounds = 100_000

// EventsPerSec is the throughput in wall-clock time.
func (r Result) EventsPerSec() float64 { return float64(r.Events) / r.Wall.Seconds() }

// EventsPerCoreSec is the throughput per CPU second: events / CPU time.
func (r Result) EventsPerCoreSec() float64 { return float64(r.Events) / r.CPU.Seconds() }

func (r Result) String() string {
	s := fmt.Sprintf("%-4s events=%d rows=%d wall=%.3fs events/s=%.0f cpu=%.3fs events/s/core=%.0f gomaxprocs=%d parallelism=%d peak_rss=%s peak_heap=%s state_heap=%s",
		r.Query, r.Events, r.Rows, r.Wall.Seconds(), r.EventsPerSec(), r.CPU.Seconds(), r.EventsPerCoreSec(), r.Procs, r.Parallelism,
		MiB(int64(r.PeakRSS)), MiB(int64(r.PeakHeap)), MiB(r.StateHeap))
	if r.CoreRTT > 0 {
		s += fmt.Sprintf(" core_rtt=%dns", r.CoreRTT.Nanoseconds())
	}
	if c := r.Checkpoints; c.Count > 0 || c.Failures > 0 {
		s += fmt.Sprintf(" checkpoints=%d failed=%d last_bytes=%s chain=%s last_duration=%s jobs=%d",
			c.Count, c.Failures, MiB(c.Bytes), MiB(c.ChainBytes), c.Duration.Round(time.Microsecond), c.Jobs)
	}
	return s
}

// MiB renders a byte count in MiB.
func MiB(n int64) string { return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20)) }

// Run runs one query over o.Events generated events until the sources are
// exhausted and the last epoch is complete, and reports what it measured.
func Run(ctx context.Context, o Options) (Result, error) {
	text, name := o.SQL, o.Query
	if text == "" {
		var err error
		if text, err = QuerySQL(o.Query); err != nil {
			return Result{}, err
		}
	}
	if name == "" {
		name = "sql"
	}
	if o.Events <= 0 {
		o.Events = DefaultEvents
	}
	s, err := newSetup(o)
	if err != nil {
		return Result{}, err
	}
	defer s.close()
	q, err := s.plan(text)
	if err != nil {
		return Result{}, fmt.Errorf("plan %s: %w", name, err)
	}
	in := &sourceInputs{cat: s.cat, side: s.side, ended: make(chan struct{}, maxReaders)}
	cfg := dataflow.Config{BarrierInterval: o.BarrierInterval, Eval: s.eval, NoOperatorStats: o.NoOperatorStats}
	if o.CheckpointInterval > 0 {
		dir := o.CheckpointDir
		if dir == "" {
			tmp, err := os.MkdirTemp("", "streamsql-bench-ckpt-")
			if err != nil {
				return Result{}, err
			}
			defer os.RemoveAll(tmp)
			dir = tmp
		}
		store, _, err := checkpoint.Open(dir, nil)
		if err != nil {
			return Result{}, err
		}
		cfg.Checkpoints, cfg.CheckpointInterval = store, o.CheckpointInterval
	}
	rt := dataflow.New(cfg, in)
	defer rt.Close()

	var rows atomic.Int64
	sink := blackhole.New(func(rec arrow.RecordBatch, ops []stream.Op) {
		rows.Add(rec.NumRows())
		if o.OnChunk != nil {
			o.OnChunk(&stream.Chunk{Rec: rec, Ops: ops})
		}
	})
	var specs []dataflow.JobSpec
	switch {
	case o.GeneratorOnly:
		for i, sc := range scans(q.Root) {
			specs = append(specs, dataflow.JobSpec{ID: uint32(i + 1), Name: sc.Name, Plan: sc, Cols: sc.Cols, Sink: sink})
		}
	case o.Materialize:
		specs = []dataflow.JobSpec{{ID: 1, Name: name, Plan: q.Root, Key: q.Key, Cols: q.Columns}}
	case o.FileSink != "":
		fs, err := fileSink(o, name, text, q)
		if err != nil {
			return Result{}, err
		}
		specs = []dataflow.JobSpec{{ID: 1, Name: name, Plan: q.Root, Key: q.Key, Cols: q.Columns, Sink: fs}}
	default:
		specs = []dataflow.JobSpec{{ID: 1, Name: name, Plan: q.Root, Key: q.Key, Cols: q.Columns, Sink: sink}}
	}

	res := Result{Query: name, Events: o.Events, Columns: q.Columns, Procs: runtime.GOMAXPROCS(0), Parallelism: q.Parallelism}
	if o.Instances && len(specs) != 1 {
		return Result{}, pgerr.New(pgerr.FeatureNotSupported, "bench: the instances' report takes one job, not %d (no generator-only run)", len(specs))
	}
	if o.CoreRTT {
		res.CoreRTT, _ = CoreRoundTrip(coreRTTRounds) // before the timed span: it spins two cores
	}
	runtime.GC()
	live0 := liveHeap()
	peak := startHeapSampler()
	var prof bytes.Buffer
	if o.Instances {
		if err := startInstanceProfile(&prof); err != nil {
			peak()
			return Result{}, err
		}
		defer stopProfile(&prof) // on an early return; a no-op after the report's
	}
	cpu0, t0 := cpuTime(), time.Now()
	var jobs []*dataflow.Job
	for _, spec := range specs {
		j, err := rt.StartJob(spec)
		if err != nil {
			peak()
			return Result{}, fmt.Errorf("start %s: %w", name, err)
		}
		jobs = append(jobs, j)
	}
	// Epochs end every BarrierInterval while the sources run (a FLUSH now
	// would hold every barrier until they end, making the run one epoch);
	// once they all ended, FLUSH waits for the last epoch.
	for range in.opened {
		select {
		case <-in.ended:
		case <-ctx.Done():
		}
	}
	err = rt.Flush(ctx)
	res.Wall, res.CPU = time.Since(t0), cpuTime()-cpu0
	if o.Instances {
		stopProfile(&prof)
	}
	res.PeakHeap = peak()
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", name, err)
	}
	if o.Instances {
		rep, err := instanceReport(&prof, name, max(o.Parallelism, 1), jobs[0].Operators())
		if err != nil {
			return Result{}, err
		}
		res.Instances = &rep
	}
	for _, j := range jobs {
		if err := j.Err(); err != nil {
			return Result{}, fmt.Errorf("run %s: %w", name, err)
		}
	}
	runtime.GC()
	res.StateHeap = max(int64(liveHeap())-int64(live0), 0) // GC noise can make it negative
	if o.HeapProfile != nil {
		if err := pprof.Lookup("heap").WriteTo(o.HeapProfile, 0); err != nil {
			return Result{}, fmt.Errorf("heap profile: %w", err)
		}
	}
	res.PeakRSS = peakRSS()
	res.Rows = rows.Load()
	if o.FileSink != "" {
		res.Rows = jobs[0].Counters().RowsOut
	}
	res.Checkpoints, _ = rt.CheckpointStats()
	if o.Materialize {
		_, recs, err := jobs[0].Snapshot()
		if err != nil {
			return Result{}, fmt.Errorf("read %s: %w", name, err)
		}
		for _, r := range recs {
			res.Rows += r.NumRows()
		}
	}
	runtime.KeepAlive(jobs)
	return res, nil
}

// Explain returns the streaming plan of a query of Queries (or of sqlText
// when set), as EXPLAIN CREATE MATERIALIZED VIEW shows it.
func Explain(query, sqlText string) ([]string, error) {
	return ExplainAt(query, sqlText, 0)
}

// ExplainAt is Explain with the query planned at the given parallelism.
func ExplainAt(query, sqlText string, parallelism int) ([]string, error) {
	return ExplainOpts(query, sqlText, Options{Parallelism: parallelism})
}

// ExplainOpts is ExplainAt with o's planning options (Parallelism,
// SplitDistinct).
func ExplainOpts(query, sqlText string, o Options) ([]string, error) {
	if sqlText == "" {
		var err error
		if sqlText, err = QuerySQL(query); err != nil {
			return nil, err
		}
	}
	s, err := newSetup(Options{Events: DefaultEvents, Parallelism: o.Parallelism, ParallelismAuto: o.ParallelismAuto, SplitDistinct: o.SplitDistinct, Unshared: o.Unshared})
	if err != nil {
		return nil, err
	}
	defer s.close()
	q, err := s.plan(sqlText)
	if err != nil {
		return nil, err
	}
	return planner.ExplainStream(&stream.Materialize{Input: q.Root, Key: q.Key, Cols: q.Columns}), nil
}

// sourceWatermark is the watermark expression of the three sources' date_time.
const sourceWatermark = "date_time - INTERVAL '4' SECOND"

// SideInputRows is the size of q13's side input: the table side_input
// (key bigint PRIMARY KEY, value text) holds (k, k::text) for k in
// [0, SideInputRows), as RisingWave's q13 fills it. It does not change
// during a run.
const SideInputRows = 10_000

// Functions are the SQL functions the queries call, created before a run
// (q14's count_char, with PostgreSQL's syntax for the Java UDF of
// flink/q14.sql and the body of risingwave/q14.sql). The planner inlines
// them.
var Functions = []string{
	`CREATE FUNCTION count_char(s text, c text) RETURNS bigint LANGUAGE sql IMMUTABLE
  AS $$ SELECT length(s) - length(replace(s, c, '')) $$`,
}

// setup is a private catalog holding the three nexmark sources and the
// side_input table.
type setup struct {
	dir   string
	store *storage.Store
	cat   *catalog.Catalog
	eval  expr.Context
	side  uint32 // side_input's OID
	par   int    // Options.Parallelism
	auto  bool   // Options.ParallelismAuto
	split string // Options.SplitDistinct
	// unshared: Options.Unshared
	unshared bool
}

func newSetup(o Options) (*setup, error) {
	dir, err := os.MkdirTemp("", "streamsql-bench-")
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	s := &setup{dir: dir, par: o.Parallelism, auto: o.ParallelismAuto, split: o.SplitDistinct, unshared: o.Unshared}
	if s.store, err = storage.Open(filepath.Join(dir, "tables")); err != nil {
		s.close()
		return nil, fmt.Errorf("bench: %w", err)
	}
	if s.cat, err = catalog.Open(dir, s.store); err != nil {
		s.close()
		return nil, fmt.Errorf("bench: %w", err)
	}
	s.eval = expr.Context{Catalog: s.cat}
	for _, table := range []string{"person", "auction", "bid"} {
		// As CREATE SOURCE <table> WITH (connector = 'nexmark', table =
		// '<table>', events = '<n>', seed = '<seed>') does.
		opts := map[string]string{"table": table, "events": strconv.FormatInt(o.Events, 10), "seed": strconv.FormatUint(o.Seed, 10)}
		src, err := connector.Open("nexmark", nil, opts, "")
		if err != nil {
			s.close()
			return nil, err
		}
		// Every source carries the watermark of the windowed queries
		// (WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND);
		// queries without windows ignore it.
		rel := &catalog.Relation{Name: table, Kind: catalog.KindSource, AppendOnly: true, Connector: "nexmark", Options: opts,
			Watermark: &catalog.Watermark{Column: "date_time", Expr: sourceWatermark}}
		for _, c := range src.Columns() {
			rel.Columns = append(rel.Columns, catalog.Column{Name: c.Name, Type: c.Type})
		}
		if _, err := s.cat.CreateTable(rel, false); err != nil {
			s.close()
			return nil, err
		}
	}
	side, err := s.cat.CreateTable(&catalog.Relation{Name: "side_input", Kind: catalog.KindTable, PrimaryKey: []int{0},
		Columns: []catalog.Column{{Name: "key", Type: types.TInt8}, {Name: "value", Type: types.TText}}}, false)
	if err != nil {
		s.close()
		return nil, err
	}
	s.side = side.OID
	for _, text := range Functions {
		if err := s.createFunction(text); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// createFunction runs a CREATE FUNCTION of Functions, as the engine does.
func (s *setup) createFunction(text string) error {
	stmts, err := sql.Parse(text)
	if err != nil {
		return err
	}
	if len(stmts) != 1 || stmts[0].AST.GetCreateFunctionStmt() == nil {
		return pgerr.Internal("bench: %q is not one CREATE FUNCTION", text)
	}
	eval := s.eval
	fn, err := planner.FunctionDef(&planner.Env{Catalog: s.cat, SearchPath: []string{"public"}, Eval: &eval}, stmts[0].AST.GetCreateFunctionStmt())
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if _, err := s.cat.CreateFunction(fn, false); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// sideInput builds side_input's rows (SideInputRows of them).
func sideInput() arrow.RecordBatch {
	cols := []types.Column{{Name: "key", Type: types.TInt8}, {Name: "value", Type: types.TText}}
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	vb := array.NewStringBuilder(memory.DefaultAllocator)
	defer kb.Release()
	defer vb.Release()
	for k := int64(0); k < SideInputRows; k++ {
		kb.Append(k)
		vb.Append(strconv.FormatInt(k, 10))
	}
	ka, va := kb.NewArray(), vb.NewArray()
	defer ka.Release()
	defer va.Release()
	return array.NewRecordBatch(types.ArrowSchema(cols), []arrow.Array{ka, va}, SideInputRows)
}

// staticFeed is the change feed of a table that does not change.
type staticFeed struct{}

func (staticFeed) PollTo(dataflow.Position) ([]dataflow.Delta, error) { return nil, nil }
func (staticFeed) Close()                                             {}

func (s *setup) close() {
	if s.cat != nil {
		s.cat.Close()
	}
	if s.store != nil {
		s.store.Close()
	}
	os.RemoveAll(s.dir)
}

// plan plans a continuous query as CREATE MATERIALIZED VIEW does.
func (s *setup) plan(text string) (*planner.StreamQuery, error) {
	stmts, err := sql.Parse(text)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 || stmts[0].AST == nil {
		return nil, pgerr.New(pgerr.SyntaxError, "a benchmark query is one SELECT")
	}
	eval := s.eval
	env := &planner.Env{Catalog: s.cat, SearchPath: []string{"public"}, Eval: &eval, Source: text, Parallelism: s.par, ParallelismAuto: s.auto, SplitDistinct: s.split, NoSharedReads: s.unshared}
	if stmts[0].Ext != nil {
		env.Emit = stmts[0].Ext.Emit                   // EMIT ON WINDOW CLOSE of the windowed queries
		env.TemporalJoins = stmts[0].Ext.TemporalJoins // q13's lookup join
	}
	return planner.PlanStream(env, stmts[0].AST)
}

// scans returns the leaves of a plan, each a reader of its own.
func scans(n stream.Node) []*stream.Scan {
	if sc, ok := n.(*stream.Scan); ok {
		return []*stream.Scan{sc}
	}
	var out []*stream.Scan
	for _, in := range n.Inputs() {
		out = append(out, scans(in)...)
	}
	return out
}

// maxReaders bounds the source readers of one run (scans of sources).
const maxReaders = 64

// sourceInputs gives the runtime the catalog's sources, as the engine does,
// and tells when each reader ended. OpenSource is called by StartJob only.
type sourceInputs struct {
	cat    *catalog.Catalog
	side   uint32        // side_input's OID
	opened int           // readers opened
	ended  chan struct{} // a send per reader that returned
}

// SubscribeTable implements dataflow.Inputs: side_input's rows, which do
// not change, are the only table.
func (in *sourceInputs) SubscribeTable(oid uint32) ([]arrow.RecordBatch, dataflow.Feed, error) {
	if oid != in.side {
		return nil, nil, pgerr.Internal("bench: no table %d", oid)
	}
	return []arrow.RecordBatch{sideInput()}, staticFeed{}, nil
}

// TablePosition implements dataflow.Inputs; side_input never changes.
func (in *sourceInputs) TablePosition(uint32) dataflow.Position { return nil }

func (in *sourceInputs) OpenSource(oid uint32, onError func(error)) (dataflow.RunFunc, bool, error) {
	sr, err := in.OpenSourceSplit(0, oid, nil, 0, 1, onError)
	return sr.Run, sr.Finite, err
}

// OpenSourceSplit implements dataflow.SplitInputs: reader split of splits
// of a generator's source (pos must be nil: the benchmark does not resume).
func (in *sourceInputs) OpenSourceSplit(job, oid uint32, pos []byte, split, splits int, onError func(error)) (dataflow.SourceReader, error) {
	return in.OpenSourceColumns(job, oid, nil, pos, split, splits, onError)
}

// OpenSourceColumns implements dataflow.ColumnInputs: OpenSourceSplit for
// a reader that builds only columns cols (nil: all).
func (in *sourceInputs) OpenSourceColumns(job, oid uint32, read []int, pos []byte, split, splits int, onError func(error)) (dataflow.SourceReader, error) {
	return in.OpenSourceRouted(job, oid, read, nil, pos, split, splits, onError)
}

// OpenSourceRouted implements dataflow.RoutedInputs: OpenSourceColumns for
// a reader asked to route its rows (route; nil: not routed).
func (in *sourceInputs) OpenSourceRouted(_, oid uint32, read []int, route *connector.Route, pos []byte, split, splits int, onError func(error)) (dataflow.SourceReader, error) {
	if pos != nil {
		return dataflow.SourceReader{}, pgerr.Internal("bench: sources do not resume")
	}
	rel := in.cat.Relation(oid)
	if rel == nil || rel.Kind != catalog.KindSource {
		return dataflow.SourceReader{}, pgerr.Internal("bench: source %d does not exist", oid)
	}
	cols := make([]types.Column, len(rel.Columns))
	for i, c := range rel.Columns {
		cols[i] = types.Column{Name: c.Name, Type: c.Type}
	}
	src, err := connector.Open(rel.Connector, cols, rel.Options, rel.Format)
	if err != nil {
		return dataflow.SourceReader{}, err
	}
	r, err := connector.NewReader(src, connector.ReaderOptions{Errors: onError, Split: split, Splits: splits, Columns: read, Route: route})
	if err != nil {
		return dataflow.SourceReader{}, err
	}
	if in.opened == maxReaders {
		return dataflow.SourceReader{}, pgerr.New(pgerr.ProgramLimitExceeded, "bench: a query may read at most %d sources", maxReaders)
	}
	in.opened++
	run := func(ctx context.Context, emit func(arrow.RecordBatch) error) error {
		defer func() { in.ended <- struct{}{} }()
		return r.Run(ctx, emit)
	}
	sr := dataflow.SourceReader{Run: run, Finite: connector.IsFinite(src)}
	if p, ok := r.(connector.PartsReader); ok && route != nil && p.Routes() {
		sr.RunParts = func(ctx context.Context, emit func([]arrow.RecordBatch) error) error {
			defer func() { in.ended <- struct{}{} }()
			return p.RunParts(ctx, emit)
		}
	}
	if rc, ok := r.(connector.Recycler); ok {
		sr.Recycle = rc.Recycle
	}
	return sr, nil
}

// fileSink is the file sink of Options.FileSink for query name (text).
func fileSink(o Options, name, text string, q *planner.StreamQuery) (sink.Sink, error) {
	opts := map[string]string{"path": filepath.Join(o.FileSink, name)}
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "-- partition_by:"); ok {
			opts["partition_by"] = strings.TrimSpace(v)
		}
	}
	format := strings.ToUpper(o.FileFormat)
	if format == "" {
		format = "JSON"
	}
	if !q.AppendOnly {
		opts["force_append_only"] = "true"
	}
	return file.OpenSink(sink.Spec{Name: name, ID: 1, Cols: q.Columns, Key: q.Key, AppendOnly: q.AppendOnly, Options: opts, Format: format})
}
