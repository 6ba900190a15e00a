package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// Materialized views and sources run on the dataflow runtime (exec/dataflow):
// one job per materialized view, identified by the view's OID. The catalog
// keeps every definition; at start the engine starts a job per view, in OID
// (creation) order, so a view's inputs run before it (docs/contributing/
// streaming.md, "Restart").

// flowInputs gives the runtime the engine's tables and sources.
type flowInputs struct{ e *Engine }

func (in flowInputs) SubscribeTable(oid uint32) ([]arrow.RecordBatch, dataflow.Feed, error) {
	t := in.e.store.Table(oid)
	if t == nil {
		return nil, nil, pgerr.Internal("table %d has no storage", oid)
	}
	snap, feed := t.Subscribe()
	rows, err := liveRows(snap)
	if err != nil {
		feed.Close()
		return nil, nil, err
	}
	return rows, in.tableFeed(feed, oid), nil
}

func (in flowInputs) OpenSource(oid uint32, onError func(error)) (dataflow.RunFunc, bool, error) {
	rel := in.e.cat.Relation(oid)
	if rel == nil || rel.Kind != catalog.KindSource {
		return nil, false, pgerr.Internal("source %d does not exist", oid)
	}
	src, err := in.e.openConnector(rel)
	if err != nil {
		return nil, false, err
	}
	r, err := connector.NewReader(src, connector.ReaderOptions{Errors: onError})
	if err != nil {
		return nil, false, err
	}
	return r.Run, connector.IsFinite(src), nil
}

// OpenSourceAt implements dataflow.SourceResumer: a reader starting at pos
// (nil: the start) that reports its position after each batch.
func (in flowInputs) OpenSourceAt(oid uint32, pos []byte, onError func(error)) (dataflow.RunFunc, func() []byte, bool, error) {
	sr, err := in.OpenSourceReader(0, oid, pos, onError)
	return sr.Run, sr.Position, sr.Finite, err
}

// OpenSourceReader implements dataflow.PartitionedResumer: OpenSourceAt,
// with the partitions of a partitioned reader (connector.Partitioned).
func (in flowInputs) OpenSourceReader(job, oid uint32, pos []byte, onError func(error)) (dataflow.SourceReader, error) {
	return in.OpenSourceSplit(job, oid, pos, 0, 1, onError)
}

// OpenSourceSplit implements dataflow.SplitInputs: OpenSourceReader for
// reader split of splits of a source that splits (connector.SplitsReaders).
func (in flowInputs) OpenSourceSplit(job, oid uint32, pos []byte, split, splits int, onError func(error)) (dataflow.SourceReader, error) {
	return in.OpenSourceColumns(job, oid, nil, pos, split, splits, onError)
}

// OpenSourceColumns implements dataflow.ColumnInputs: OpenSourceSplit for
// a reader that builds only columns cols (nil: all) of a source whose
// connector prunes (connector.PrunesColumns).
func (in flowInputs) OpenSourceColumns(job, oid uint32, cols []int, pos []byte, split, splits int, onError func(error)) (dataflow.SourceReader, error) {
	return in.OpenSourceRouted(job, oid, cols, nil, pos, split, splits, onError)
}

// OpenSourceRouted implements dataflow.RoutedInputs: OpenSourceColumns for
// a reader asked to route its rows (route; nil: not routed).
func (in flowInputs) OpenSourceRouted(job, oid uint32, cols []int, route *connector.Route, pos []byte, split, splits int, onError func(error)) (dataflow.SourceReader, error) {
	rel := in.e.cat.Relation(oid)
	if rel == nil || rel.Kind != catalog.KindSource {
		return dataflow.SourceReader{}, pgerr.Internal("source %d does not exist", oid)
	}
	src, err := in.e.openConnector(rel)
	if err != nil {
		return dataflow.SourceReader{}, err
	}
	r, err := connector.NewReaderAt(src, pos, connector.ReaderOptions{Errors: onError, Progress: true, Split: split, Splits: splits, Columns: cols, Route: route})
	if err != nil {
		return dataflow.SourceReader{}, err
	}
	sr := dataflow.SourceReader{Run: r.Run, Finite: connector.IsFinite(src)}
	if e, ok := r.(connector.Ender); ok && !sr.Finite {
		sr.InputEnd = e.InputEnd
	}
	if p, ok := r.(connector.Positioner); ok {
		sr.Position = p.Position
	}
	if p, ok := r.(connector.Partitioned); ok {
		sr.Partition, sr.Partitions = p.Partition, p.Partitions
	}
	if p, ok := r.(connector.PartsReader); ok && route != nil && p.Routes() {
		sr.RunParts = p.RunParts
	}
	if rc, ok := r.(connector.Recycler); ok {
		sr.Recycle = rc.Recycle
	}
	if rep, ok := r.(connector.Reporter); ok {
		in.e.readers.track(&sr, job, oid, rep)
	}
	return sr, nil
}

func (e *Engine) openConnector(rel *catalog.Relation) (connector.Source, error) {
	cols := make([]types.Column, len(rel.Columns))
	for i, c := range rel.Columns {
		cols[i] = types.Column{Name: c.Name, Type: c.Type}
	}
	return connector.OpenWith(rel.Connector, cols, rel.Options, rel.Format, e.sources)
}

// mayReadServerFiles refuses a file source to a session user that is
// neither a superuser nor has the privileges of pg_read_server_files
// (PostgreSQL's rule for COPY FROM a file).
func (s *Session) mayReadServerFiles() error {
	me := s.currentRole()
	if me.Superuser {
		return nil
	}
	if rc, ok := s.eng.cat.(roleCatalog); ok && rc.IsMemberOf(me.OID, catalog.ReadServerFilesOID) {
		return nil
	}
	return pgerr.New(pgerr.InsufficientPrivilege, "must be superuser or have privileges of the pg_read_server_files role to create a file source").
		WithHint("A superuser can GRANT pg_read_server_files TO %s.", quoteIdent(s.user))
}

// tableFeed adapts storage's feed to the runtime's. A feed that ended
// because its table was dropped reports dataflow.Dropped, so that
// subscribers are told which table went away.
type tableFeed struct {
	f    *storage.Feed
	oid  uint32
	name string
	e    *Engine
}

func (in flowInputs) tableFeed(f *storage.Feed, oid uint32) tableFeed {
	name := fmt.Sprint(oid)
	if r := in.e.cat.Relation(oid); r != nil {
		name = r.Name
	}
	return tableFeed{f: f, oid: oid, name: name, e: in.e}
}

func (t tableFeed) Close() { t.f.Close() }
func (t tableFeed) PollTo(p dataflow.Position) ([]dataflow.Delta, error) {
	var ds []storage.Delta
	if pos, ok := p.(storage.Position); ok {
		ds = t.f.PollTo(pos)
	} else {
		// nil: the table no longer exists; Poll reaches the step
		// that ended its feeds (PollTo(nil) would wait forever).
		ds = t.f.Poll()
	}
	err := t.f.Err()
	if err != nil && errors.Is(err, storage.ErrFeedEnded) && t.e.store.Table(t.oid) == nil && t.e.cat.Relation(t.oid) == nil {
		err = dataflow.Dropped("table", t.name)
	}
	out := make([]dataflow.Delta, len(ds))
	for i, d := range ds {
		out[i] = dataflow.Delta{Deleted: d.Deleted, Inserted: d.Inserted, Update: d.Update}
	}
	return out, err
}

func (in flowInputs) TablePosition(oid uint32) dataflow.Position {
	if t := in.e.store.Table(oid); t != nil {
		return t.Position()
	}
	return nil
}

// liveRows returns a snapshot's rows without the deleted ones.
func liveRows(snap storage.Snapshot) ([]arrow.RecordBatch, error) {
	out := make([]arrow.RecordBatch, 0, len(snap.Chunks))
	for _, c := range snap.Chunks {
		if c.Deleted == nil {
			out = append(out, c.Rec)
			continue
		}
		n := int(c.Rec.NumRows())
		live := make([]bool, n)
		for i := range live {
			live[i] = c.Deleted[i/8]&(1<<(i%8)) == 0
		}
		rec := exec.SelectRows(memory.DefaultAllocator, c.Rec, live, true) // Arrow's filter takes no intervals
		if rec.NumRows() > 0 {
			out = append(out, rec)
		}
	}
	return out, nil
}

// streamEval is the expression context of every job: UTC, no session.
func (e *Engine) streamEval() expr.Context {
	return expr.Context{Catalog: e.cat}
}

// planView plans a materialized view's stored query.
func (e *Engine) planView(rel *catalog.Relation) (*planner.StreamQuery, error) {
	stmts, err := sql.Parse(rel.ViewQuery)
	if err != nil {
		return nil, fmt.Errorf("parse materialized view %s: %w", rel.Name, err)
	}
	if len(stmts) != 1 || stmts[0].AST == nil {
		return nil, pgerr.Internal("materialized view %s has a bad definition", rel.Name)
	}
	eval := e.streamEval()
	env := &planner.Env{Catalog: e.cat, SearchPath: []string{rel.Schema}, Eval: &eval, Streams: flowStreams{e}, Emit: stmtEmit(stmts[0]), TemporalJoins: stmtTemporal(stmts[0]), SessionFrames: stmtSessions(stmts[0]),
		Parallelism: e.viewParallelism(rel), ParallelismAuto: e.spreadsDefault(rel.ParallelismDefault), SplitDistinct: viewSplitDistinct(rel)} // parallel.go
	return planner.PlanStream(env, stmts[0].AST)
}

// startView starts the job of a materialized view.
func (e *Engine) startView(rel *catalog.Relation) error {
	q, err := e.planView(rel)
	if err != nil {
		return err
	}
	spec := dataflow.JobSpec{ID: rel.OID, Name: rel.Name, Plan: q.Root, Key: q.Key, Cols: q.Columns, Changelog: true, AppendOnly: q.AppendOnly}
	late, err := e.lateRowsTarget(rel, q.Root, []string{rel.Schema})
	if err != nil {
		return err
	}
	if late != nil {
		spec.LateRows = e.lateRowsStore(rel, late.OID)
	}
	_, err = e.flow.StartJob(spec)
	return err
}

// stopDroppedJobs stops the jobs whose view is no longer in the catalog
// (after DROP, including cascades), downstream views first.
func (e *Engine) stopDroppedJobs() {
	jobs := e.flow.Jobs()
	sort.Slice(jobs, func(i, k int) bool { return jobs[i].Spec().ID > jobs[k].Spec().ID })
	for _, j := range jobs {
		id := j.Spec().ID
		if id >= privateJobBase { // a SUBSCRIBE's own job: ends with what it reads
			for _, sc := range dataflow.PlanScans(j.Spec().Plan) {
				if e.cat.Relation(sc.Rel) == nil {
					e.flow.StopJobFor(id, dataflow.Dropped(sc.Kind.String(), sc.Name))
					break
				}
			}
			continue
		}
		if r := e.cat.Relation(id); r == nil || (r.Kind != catalog.KindMatView && r.Kind != catalog.KindSink) {
			what := "materialized view"
			if j.Spec().Sink != nil {
				what = "sink"
			}
			e.cfg.Logf("%s %s dropped", what, j.Spec().Name)
			e.flow.StopJobFor(id, dataflow.Dropped("materialized view", j.Spec().Name))
			e.flow.DropChangelog(id)
		}
	}
}

// privateJobBase starts the ids of SUBSCRIBE (query) jobs, above every OID
// the catalog hands out.
const privateJobBase = 1 << 31

// viewNotRunning is the error of reading a materialized view whose job is
// not running (stopped while ALTER TABLE rewrites a table it reads, or
// dropped meanwhile): it names the view, not its OID.
func (e *Engine) viewNotRunning(oid uint32) error {
	if r := e.cat.Relation(oid); r != nil {
		return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" is not running", r.Name).
			WithHint("It restarts when the ALTER TABLE of a table it reads has finished; try again.")
	}
	return pgerr.New(pgerr.UndefinedTable, "materialized view with OID %d does not exist", oid)
}

// flowStreams serves views to the planner.
type flowStreams struct{ e *Engine }

func (f flowStreams) ViewRows(oid uint32) ([]arrow.RecordBatch, error) {
	if rows, ok, err := f.e.clusterViewRows(oid); ok { // cluster_run.go
		return rows, err
	}
	j := f.e.flow.Job(oid)
	if j == nil && f.e.recovering(oid) != "" {
		// Not started yet after a restart (a read Execute did not wait
		// for: a DML's subquery): its checkpointed rows come shortly.
		if err := f.e.waitViewsStarted(context.Background(), []uint32{oid}); err != nil {
			return nil, err
		}
		j = f.e.flow.Job(oid)
	}
	if j == nil {
		if err, ok := f.e.viewErrs.Load(oid); ok {
			if fr := f.e.frozenOf(oid); fr != nil {
				return fr.rows, nil // with failedViewNotices' WARNING
			}
			name := fmt.Sprint(oid)
			if r := f.e.cat.Relation(oid); r != nil {
				name = r.Name
			}
			e := pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" did not start: %v", name, err)
			if pe := pgerr.As(err.(error)); pe != nil {
				e.Detail, e.Hint = pe.Detail, pe.Hint
			}
			return nil, e
		}
		return nil, f.e.viewNotRunning(oid)
	}
	_, rows, err := j.LastRows() // a failed view keeps its last rows (failedViewNotices)
	if err != nil {
		return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" cannot be read: %v", j.Spec().Name, err)
	}
	return rows, nil
}

func (f flowStreams) ViewKey(oid uint32) []int {
	if spec, ok := f.viewSpec(oid); ok {
		return spec.Key
	}
	return nil
}

// ViewAppendOnly implements planner.ViewAppendOnly: whether the view's
// output never retracts (an EMIT ON WINDOW CLOSE aggregation).
func (f flowStreams) ViewAppendOnly(oid uint32) bool {
	if spec, ok := f.viewSpec(oid); ok {
		return spec.AppendOnly
	}
	return false
}

// ViewWatermarkCols implements planner.ViewWatermarks: the view's output
// columns that carry its watermarks.
func (f flowStreams) ViewWatermarkCols(oid uint32) []int {
	if spec, ok := f.viewSpec(oid); ok {
		return planner.WatermarkCols(spec.Plan, f)
	}
	return nil
}

// ViewMarkSlack implements planner.ViewMarkSlacks: how strictly the
// view's output column col keeps its watermark promise.
func (f flowStreams) ViewMarkSlack(oid uint32, col int) (int64, bool) {
	if spec, ok := f.viewSpec(oid); ok {
		return planner.MarkSlack(spec.Plan, col, f)
	}
	return 0, false
}

// viewSpec is what the planner of a view over view oid asks of it: its
// job's key, append-only flag and plan. On a cluster node without the
// job (a worker, which runs only instances; a coordinator that has not
// restarted it yet) they come from planning the view from the catalog,
// as its job was planned (cluster_viewsover.go), so that every node plans
// a view over it alike.
func (f flowStreams) viewSpec(oid uint32) (dataflow.JobSpec, bool) {
	if j := f.e.flow.Job(oid); j != nil {
		return j.Spec(), true
	}
	return f.e.clusterViewSpec(oid)
}

// execCreateMatView runs CREATE MATERIALIZED VIEW: plan, record in the
// catalog, start the job and wait until its backfill is visible.
func (s *Session) execCreateMatView(ctx context.Context, env *planner.Env, c *pg.CreateTableAsStmt, stmt sql.Statement) (*Result, error) {
	if s.tx != 'I' {
		return nil, pgerr.New(pgerr.ActiveSQLTransaction, "CREATE MATERIALIZED VIEW cannot run inside a transaction block")
	}
	if _, err := planner.RelOptions(planner.OptMatView, c.Into.Options); err != nil {
		return nil, err
	}
	env.Streams = flowStreams{s.eng}
	q, err := planner.PlanStream(env, c.Query)
	if err != nil {
		return nil, err
	}
	for _, d := range q.Deps {
		if r := s.eng.cat.Relation(d); r != nil && r.IsTemp() { // temp.go: they end with the session
			return nil, pgerr.Unsupported("materialized views must not use temporary tables or views")
		}
	}
	text, err := sql.DeparseExtended(c.Query, sql.TemporalRelations(c.Query, env.TemporalJoins), sql.SessionWindows(c.Query, env.SessionFrames))
	if err != nil {
		return nil, fmt.Errorf("store materialized view: %w", err)
	}
	text += env.Emit.Text() // kept with the query, planned again at restart
	rel := &catalog.Relation{Schema: c.Into.Rel.Schemaname, Name: c.Into.Rel.Relname, Kind: catalog.KindMatView, ViewQuery: text,
		Parallelism: q.Parallelism, ParallelismDefault: !s.set.explicit["streaming_parallelism"], SplitDistinct: env.SplitDistinct}
	names := c.Into.ColNames
	if len(names) > len(q.Columns) {
		return nil, pgerr.New(pgerr.SyntaxError, "too many column names were specified")
	}
	for i, col := range q.Columns {
		name := col.Name
		if i < len(names) {
			name = names[i].GetString_().GetSval()
		}
		rel.Columns = append(rel.Columns, catalog.Column{Name: name, Type: col.Type})
	}
	if c.IfNotExists {
		if old, err := s.eng.cat.Resolve(rel.Schema, rel.Name, s.set.searchPath()); err == nil && old != nil {
			return s.maybeSkip(pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", rel.Name), true, "CREATE MATERIALIZED VIEW")
		}
	}
	late, err := s.eng.lateRowsTarget(rel, q.Root, s.set.searchPath())
	if err != nil {
		return nil, err
	}
	if late != nil && s.eng.cfg.Cluster != nil {
		return nil, pgerr.Unsupported("LATE ROWS INTO is not supported on a cluster node yet: the instances of a view spread over the nodes do not write into tables (see docs/cluster.md)")
	}
	if late != nil { // the view will insert into it (grant.go)
		if err := s.checkPriv(late, catalog.PrivInsert); err != nil {
			return nil, err
		}
	}
	rel.Owner = s.sessionOwner()
	if err := s.clusterCheckPlace(ctx); err != nil {
		return nil, err
	}
	created, err := s.eng.cat.CreateView(rel, q.Deps, false)
	if err != nil {
		return nil, err
	}
	cols := make([]types.Column, len(created.Columns))
	for i, col := range created.Columns {
		cols[i] = types.Column{Name: col.Name, Type: col.Type}
	}
	spec := dataflow.JobSpec{ID: created.OID, Name: created.Name, Plan: q.Root, Key: q.Key, Cols: cols, Changelog: true, AppendOnly: q.AppendOnly}
	if late != nil {
		spec.LateRows = s.eng.lateRowsStore(created, late.OID)
	}
	if s.eng.cfg.Cluster != nil { // cluster_run.go: place it, or run this worker's part
		if served, err := s.clusterView(ctx, stmt, created, spec); err != nil || served {
			if err != nil {
				s.dropQuietly(created)
				return nil, err
			}
			return &Result{Tag: "CREATE MATERIALIZED VIEW"}, nil
		}
	}
	if err := s.startCreated(ctx, created, spec); err != nil {
		return nil, err
	}
	s.eng.logCreated(created, "materialized view")
	return &Result{Tag: "CREATE MATERIALIZED VIEW"}, nil
}

// startCreated starts the job of a view or sink just created and waits for
// its first epoch; when it cannot start or fails at once, the relation is
// dropped again and the job's error returned.
func (s *Session) startCreated(ctx context.Context, created *catalog.Relation, spec dataflow.JobSpec) error {
	if _, err := s.eng.flow.StartJob(spec); err != nil {
		s.dropQuietly(created)
		return err
	}
	if err := s.waitBackfill(ctx, created); err != nil { // jobs.go
		return err
	}
	if j := s.eng.flow.Job(created.OID); j != nil && j.Err() != nil {
		err := j.Err()
		s.eng.flow.StopJob(created.OID)
		s.dropQuietly(created)
		return err
	}
	return nil
}

// dropQuietly removes a relation that could not be set up.
func (s *Session) dropQuietly(rel *catalog.Relation) {
	if _, err := s.eng.cat.Drop(rel.Kind, rel.Schema, rel.Name, true, false, nil); err != nil {
		s.eng.cfg.Logf("could not remove %s after a failed create: %v", rel.Name, err)
	}
}

// sourceCheckTimeout bounds CREATE SOURCE's check that the input exists
// (connector.Checker: a kafka topic).
const sourceCheckTimeout = 10 * time.Second

// connectorOptions splits the WITH options of CREATE SOURCE or of a
// connector table into the connector's name (lower case, "" when absent)
// and the rest (keys lower case). include.* keys are refused: INCLUDE
// clauses are recorded under them.
func connectorOptions(options sql.Options) (name string, opts map[string]string, err error) {
	opts = map[string]string{}
	for _, o := range options {
		k := strings.ToLower(o.Key)
		if k == "connector" {
			name = strings.ToLower(o.Value)
			continue
		}
		if strings.HasPrefix(k, "include.") {
			return "", nil, pgerr.New(pgerr.InvalidParameterValue, "unrecognized option %q", k).
				WithHint("Metadata columns are added with INCLUDE, after the column list and before WITH.")
		}
		opts[k] = o.Value
	}
	return name, opts, nil
}

// execCreateSource runs CREATE SOURCE: validate the connector and its
// options now, so a bad option fails here, not when a view reads it. A
// source whose connector can check its input (connector.Checker) is
// checked too. INCLUDE columns come after the declared ones, recorded in
// the options for the connector (connector.IncludeColumn).
func (s *Session) execCreateSource(ctx context.Context, env *planner.Env, stmt sql.Statement) (*Result, error) {
	x := stmt.Ext.Source
	name, opts, err := connectorOptions(x.Options)
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "CREATE SOURCE needs WITH (connector = '...')").
			WithHint("connectors: datagen, nexmark, file, kafka, postgres-cdc")
	}
	rel := &catalog.Relation{Name: x.Name, Kind: catalog.KindSource}
	if x.Stmt != nil {
		def, err := planTableDef(env, x.Stmt)
		if err != nil {
			return nil, err
		}
		rel = def
		rel.Kind = catalog.KindSource
		if err := refuseDomainColumns(rel, "a source"); err != nil { // domain.go
			return nil, err
		}
		if len(rel.PrimaryKey) > 0 || len(rel.Unique) > 0 {
			return nil, pgerr.Unsupported("a source cannot have PRIMARY KEY or UNIQUE constraints")
		}
	}
	for _, inc := range x.Include { // connector metadata columns, after the declared ones
		col, key, err := connector.IncludeColumn(name, inc.What, inc.Name)
		if err != nil {
			return nil, err
		}
		for _, c := range rel.Columns {
			if c.Name == col.Name {
				return nil, pgerr.New(pgerr.DuplicateColumn, "column \"%s\" specified more than once", col.Name).
					WithHint("Name the INCLUDE column with AS.")
			}
		}
		if _, dup := opts[key]; dup {
			return nil, pgerr.New(pgerr.SyntaxError, "INCLUDE %s is given twice", inc.What)
		}
		rel.Columns = append(rel.Columns, catalog.Column{Name: col.Name, Type: col.Type})
		opts[key] = col.Name
	}
	rel.AppendOnly = true
	if strings.EqualFold(x.Format, "UPSERT") || strings.EqualFold(x.Format, "DEBEZIUM") {
		return nil, pgerr.Unsupported("FORMAT %s is not supported on a source", strings.ToUpper(x.Format)).
			WithHint("A source only appends; use CREATE TABLE ... (..., PRIMARY KEY (...)) WITH (connector = 'kafka', ...) FORMAT UPSERT ENCODE JSON.")
	}
	rel.Connector, rel.Options, rel.Format = name, opts, x.Format
	if x.Encode != "" {
		rel.Format += " ENCODE " + x.Encode
	}
	if name == "file" {
		if err := s.mayReadServerFiles(); err != nil {
			return nil, err
		}
	}
	src, err := s.eng.openConnector(rel)
	if err != nil {
		return nil, err
	}
	if c, ok := src.(connector.Checker); ok {
		cctx, cancel := context.WithTimeout(ctx, sourceCheckTimeout)
		err := c.Check(cctx)
		cancel()
		if err != nil {
			return nil, err
		}
	}
	if len(rel.Columns) == 0 {
		for _, c := range src.Columns() {
			rel.Columns = append(rel.Columns, catalog.Column{Name: c.Name, Type: c.Type})
		}
	}
	if err := watermarkClause(env, rel, stmt); err != nil {
		return nil, err
	}
	rel.Owner = s.sessionOwner()
	created, err := s.eng.cat.CreateTable(rel, x.IfNotExists)
	if err != nil {
		return s.maybeSkip(err, x.IfNotExists, "CREATE SOURCE")
	}
	if err := s.clusterCreated(ctx, stmt, created, nil); err != nil { // cluster_run.go
		s.dropQuietly(created)
		return nil, err
	}
	s.eng.cfg.Logf("source %s created (connector %s)", rel.Name, rel.Connector)
	return &Result{Tag: "CREATE SOURCE"}, nil
}

// execStreaming runs the streamsql-only statements that have no PostgreSQL
// parse tree; ok is false for the ones it does not know.
func (s *Session) execStreaming(ctx context.Context, stmt sql.Statement) (*Result, bool, error) {
	x := stmt.Ext
	if x == nil {
		return nil, false, nil
	}
	env := s.env(ctx, nil)
	env.Source = stmt.Source
	switch x.Kind {
	case sql.KindShow:
		switch {
		case x.Show == "JOBS":
			return s.showJobs(), true, nil
		case x.Show == "NODES":
			res, err := s.showNodes() // cluster.go
			return res, true, err
		case strings.HasPrefix(x.Show, "CREATE "):
			res, err := s.showCreate(x.Show, x.ShowName)
			return res, true, err
		}
		res, err := s.showRelations(x.Show)
		return res, true, err
	case sql.KindExplainStream:
		res, err := s.execExplainStream(ctx, env, x.ExplainStream)
		return res, true, err
	case sql.KindFlush:
		if c := s.eng.cfg.Cluster; c != nil && !c.IsCoordinator() { // cluster_run.go
			if err := c.Forward(ctx, "FLUSH"); err != nil {
				return nil, true, err
			}
			return &Result{Tag: "FLUSH"}, true, nil
		}
		if err := s.eng.flow.Flush(ctx); err != nil {
			return nil, true, err
		}
		if err := s.eng.flow.CommitSinks(ctx); err != nil { // sinks.go
			return nil, true, err
		}
		return &Result{Tag: "FLUSH"}, true, nil
	case sql.KindAdvanceClock:
		d, err := planner.IntervalDuration(env, x.Advance)
		if err != nil {
			return nil, true, err
		}
		if err := s.eng.flow.AdvanceClock(ctx, d); err != nil {
			return nil, true, err
		}
		return &Result{Tag: "ADVANCE CLOCK"}, true, nil
	case sql.KindCreateSource:
		res, err := s.execCreateSource(ctx, env, stmt)
		return res, true, err
	case sql.KindCreateSink:
		res, err := s.execCreateSink(ctx, env, stmt)
		return res, true, err
	case sql.KindDropSink:
		res, err := s.dropSinks(x.Drop)
		if err == nil {
			err = s.clusterDropped(ctx, stmt) // cluster_run.go
		}
		return res, true, err
	case sql.KindResume:
		res, err := s.execResume(ctx, x.Drop)
		return res, true, err
	case sql.KindDropSource:
		res, err := s.dropSources(x.Drop.Names, x.Drop.IfExists, x.Drop.Cascade, "DROP SOURCE")
		if err == nil && len(res.Notices) == 0 {
			s.eng.cfg.Logf("source %s dropped", strings.Join(x.Drop.Names, ", "))
		}
		if err == nil {
			err = s.clusterDropped(ctx, stmt) // cluster_run.go
		}
		return res, true, err
	case sql.KindAlterSource:
		res, err := s.execAlterSource(ctx, env, x.AlterSource)
		return res, true, err
	}
	return nil, false, nil
}

// explainMatView renders the streaming plan of a CREATE MATERIALIZED VIEW.
func explainMatView(env *planner.Env, c *pg.CreateTableAsStmt) (string, error) {
	if _, err := planner.RelOptions(planner.OptMatView, c.Into.Options); err != nil {
		return "", err
	}
	q, err := planner.PlanStream(env, c.Query)
	if err != nil {
		return "", err
	}
	m := &stream.Materialize{Input: q.Root, Key: q.Key, Cols: q.Columns}
	lines := planner.ExplainStream(m)
	if q.SpreadFrom > 0 { // the default rule (planner.Env.ParallelismAuto)
		lines = append(lines, fmt.Sprintf("Parallelism: %d (streaming_parallelism %d, not SET, spread over %d stateful operators)",
			q.Parallelism, q.SpreadFrom, q.Stateful))
	}
	return strings.Join(lines, "\n"), nil
}

// viewStatus reports a materialized view's running state (streamsql_views).
func (e *Engine) viewStatus(oid uint32) (catalog.StreamStatus, bool) {
	j := e.flow.Job(oid)
	if j == nil {
		if err, ok := e.viewErrs.Load(oid); ok {
			st := catalog.StreamStatus{Status: "failed", LastError: fmt.Sprint(err)}
			if f := e.frozenOf(oid); f != nil {
				st.ViewRows, st.Epoch = f.n, types.TimestampValue(dataflow.EpochTime(f.epoch).UnixMicro())
			}
			return st, true
		}
		if what := e.recovering(oid); what != "" {
			return catalog.StreamStatus{Status: "recovering", Recovery: what}, true
		}
		return catalog.StreamStatus{}, false
	}
	st := catalog.StreamStatus{Status: "running"}
	if p, ok := j.Backfill(); ok && p.Backfilling {
		st.Status = "backfilling" // until its backfilled rows are in the view (jobs.go)
	}
	st.RowErrors, st.LastError = j.RowErrors()
	c := j.Counters()
	st.RowsIn, st.RowsOut, st.LateRows, st.LateLost, st.ViewRows = c.RowsIn, c.RowsOut, c.LateRows, c.LateLost, c.ViewRows
	if w, ok := j.Watermark(); ok {
		st.Watermark, st.HasWatermark = types.TimestampValue(w), true
	}
	if ep := j.Epoch(); ep != 0 {
		st.Epoch = types.TimestampValue(dataflow.EpochTime(ep).UnixMicro())
	}
	if since, bytes, ok := j.ChangesKept(); ok {
		st.ChangesSince, st.HasChanges, st.ChangesBytes = types.TimestampValue(dataflow.EpochTime(since).UnixMicro()), true, bytes
	}
	if err := j.Err(); err != nil {
		st.Status, st.LastError = "failed", err.Error()
	} else if what := e.recovering(oid); what != "" {
		st.Status, st.Recovery = "recovering", what
	}
	return st, true
}

// stopViewsOn stops the materialized views that read relation oid,
// directly or through other views, before an ALTER changes its layout (which
// ends their table feeds); restartViews starts them again afterwards from a
// backfill. Their subscribers are ended (they may subscribe again).
func (e *Engine) stopViewsOn(oid uint32) []*catalog.Relation {
	affected := map[uint32]bool{oid: true}
	var views []*catalog.Relation
	all := e.cat.Relations()
	sort.Slice(all, func(i, j int) bool { return all[i].OID < all[j].OID })
	for _, r := range all { // in OID order, a view comes after what it reads
		if r.Kind != catalog.KindMatView && r.Kind != catalog.KindSink { // sinks.go: restarted from their inputs too
			continue
		}
		for _, d := range r.DependsOn {
			if affected[d] {
				affected[r.OID] = true
				views = append(views, r)
				break
			}
		}
	}
	for i := len(views) - 1; i >= 0; i-- {
		e.flow.StopJob(views[i].OID)
	}
	return views
}

// restartViews starts views stopped by stopViewsOn (as the catalog has
// them now), in order, and waits for their first epoch (as startViews
// does), so that reads after the ALTER see them rebuilt, not empty.
func (e *Engine) restartViews(views []*catalog.Relation) {
	for _, old := range views {
		r := e.cat.Relation(old.OID)
		if r == nil {
			continue // dropped meanwhile
		}
		e.viewErrs.Delete(r.OID)
		start := e.startView
		if r.Kind == catalog.KindSink {
			start = e.startSink
		}
		if err := start(r); err != nil {
			e.cfg.Logf("materialized view %s did not restart after ALTER: %v", r.Name, err)
			e.viewErrs.Store(r.OID, err)
			continue // it keeps its checkpointed rows, if any
		}
		e.frozen.Delete(r.OID)
	}
	if len(views) > 0 {
		if err := e.flow.WaitEpoch(context.Background(), e.flow.Inject()); err != nil {
			e.cfg.Logf("materialized views did not complete their first epoch after ALTER: %v", err)
		}
	}
}
