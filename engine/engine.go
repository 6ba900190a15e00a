package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/connector/file"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/storage/checkpoint"
)

// Catalog is what the engine needs from the catalog (implemented by
// *catalog.Catalog). Safe for concurrent use.
type Catalog interface {
	planner.Catalog
	expr.CatalogInfo
	CreateTable(rel *catalog.Relation, ifNotExists bool) (*catalog.Relation, error)
	CreateView(rel *catalog.Relation, deps []uint32, orReplace bool) (*catalog.Relation, error)
	Drop(kind catalog.RelKind, schema, name string, ifExists, cascade bool, searchPath []string) (notice string, err error)
	CreateSchema(name string, ifNotExists bool) error
	DropSchema(name string, ifExists, cascade bool) (notice string, err error)
	Relations() []*catalog.Relation
	Relation(oid uint32) *catalog.Relation
	Close() error
}

// Engine is the database: catalog, storage and the sessions using them.
// Safe for concurrent use.
type Engine struct {
	cfg     Config
	lateMu  sync.Mutex // one LATE ROWS INTO write with metadata at a time (laterows.go)
	store   *storage.Store
	cat     Catalog
	nextPID atomic.Int32
	// readers are the running source readers that report progress
	// (streamsql_sources, source_status.go).
	readers sourceReaders
	// ingests are the background ingests of the tables that store what a
	// connector reads (ingest.go).
	ingests ingests
	// layout is held shared by statements from their final plan check to
	// the end of Execute, and exclusively by ALTER TABLE (see lockPlan).
	layout sync.RWMutex
	// alters counts the ALTER TABLEs applied (changed under layout's
	// exclusive lock); open cursors check it (see guardRows).
	alters atomic.Uint64
	// subscribe plans SUBSCRIBE statements (live.go); set by the streaming
	// runtime when the engine opens, nil until it exists. Read-only after
	// Open.
	subscribe subscribeFunc

	// flow runs the materialized views (streams.go); viewErrs maps the OID
	// of a view that could not start at Open to its error.
	flow     *dataflow.Runtime
	viewErrs sync.Map
	// frozen maps the OID of a view that could not start at Open to the
	// rows the checkpoint had of it (*frozenRows, failedviews.go).
	frozen sync.Map
	// sources is what the server decides for connectors (the files file
	// sources may read); read-only after Open.
	sources connector.Env
	// sinkFiles is where file sinks may write (--file-sink-dir); read-only
	// after Open.
	sinkFiles file.Access
	// recovered is the epoch of the checkpoint the views resumed from at
	// Open (0: none, or not read yet).
	recovered atomic.Uint64
	// recov is the views' recovery at start (recovery.go); set by Open.
	recov *recovery

	// resumeMu serializes restarts of failed views (RESUME and the retry
	// loop, failedviews.go); stopRetry ends the retry loop at Close.
	resumeMu  sync.Mutex
	stopRetry chan struct{}
	retryDone chan struct{}

	mu       sync.Mutex
	sessions map[*Session]struct{}
	closed   bool
	closing  chan struct{} // closed when Close begins
	// pool is the memory all batch statements reserve from (mem_budget.go).
	pool *membudget.Pool
	// observed is the observer of SetObserver and the checkpoint
	// history (observe.go).
	observed observation
	// tempDir is <data-dir>/tmp, where sorts, hash aggregations and joins past
	// work_mem spill; emptied
	// at start ("" when it could not be made: nothing spills).
	tempDir string
}

// Open opens (creating if needed) the data directory and recovers its state.
func Open(cfg Config) (*Engine, error) {
	if cfg.DataDir == "" {
		cfg.DataDir = "streamsql-data"
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	store, err := storage.OpenWith(filepath.Join(cfg.DataDir, "tables"), storage.Options{
		RecoverDamaged: cfg.RecoverDamaged, DamagedDir: filepath.Join(cfg.DataDir, "damaged"), Logf: cfg.Logf})
	if err != nil {
		return nil, fmt.Errorf("open storage: %w", err)
	}
	cat, err := openCatalog(cfg.DataDir, store)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("open catalog: %w", err)
	}
	files, err := file.NewAccess(cfg.FileSourceDir, append([]string{cfg.DataDir}, cfg.FileDenyPaths...)...)
	if err != nil {
		cat.Close()
		store.Close()
		return nil, fmt.Errorf("file source directory: %w", err)
	}
	sinkFiles, err := file.NewAccess(cfg.FileSinkDir, append([]string{cfg.DataDir}, cfg.FileDenyPaths...)...)
	if err != nil {
		cat.Close()
		store.Close()
		return nil, fmt.Errorf("file sink directory: %w", err)
	}
	opened := time.Now()
	e := &Engine{cfg: cfg, store: store, cat: cat, sessions: make(map[*Session]struct{}), closing: make(chan struct{}), sources: connector.Env{Files: files},
		sinkFiles: sinkFiles, pool: memoryPool(cfg.MemoryLimit)}
	e.tempDir = filepath.Join(cfg.DataDir, "tmp")
	if err := os.RemoveAll(e.tempDir); err != nil || os.MkdirAll(e.tempDir, 0o700) != nil {
		cfg.Logf("temporary directory %s unusable (%v): sorts, hash aggregations and hash joins past work_mem stay in memory", e.tempDir, err)
		e.tempDir = ""
	}
	fcfg := dataflow.Config{BarrierInterval: cfg.BarrierInterval, Eval: e.streamEval(), Logf: cfg.Logf,
		SubscribeBufferBytes: cfg.SubscribeBufferBytes, SubscribeMemoryLimit: cfg.SubscribeMemoryLimit,
		SubscribeSpill: dataflow.SpillDir(cfg.DataDir), SubscribeSpillBytes: cfg.SubscribeSpillBytes, Clock: cfg.Clock, CheckpointInterval: cfg.CheckpointInterval,
		Changelogs: filepath.Join(cfg.DataDir, "changelog"), ChangelogRetention: cfg.ChangelogRetention}
	fcfg.RecoveryPending = true                                 // recoverViews gives it the checkpoint
	fcfg.OnEpoch, fcfg.OnCheckpoint = e.onEpoch, e.onCheckpoint // observe.go
	fcfg.OnSinkCommit = e.onSinkCommit
	var cks *checkpoint.Store
	if !cfg.NoCheckpoints {
		var err error
		if cks, err = checkpoint.OpenStore(CheckpointDir(cfg.DataDir), cfg.Logf); err != nil {
			cat.Close()
			store.Close()
			return nil, fmt.Errorf("open checkpoints: %w", err)
		}
		fcfg.Checkpoints = cks
	}
	if cfg.Cluster != nil {
		fcfg.Placement = cfg.Cluster.Placement() // cluster_run.go
		fcfg.PlacedCheckpoints = true            // the workers upload their instances' state
		fcfg.DeferSinkCommits = true             // until the cluster committed the checkpoint
	}
	e.flow = dataflow.New(fcfg, flowInputs{e})
	e.subscribe = e.startSubscribe
	if c, ok := cat.(interface {
		SetStreamStatus(func(uint32) (catalog.StreamStatus, bool))
	}); ok {
		c.SetStreamStatus(e.viewStatus)
	}
	if c, ok := cat.(interface {
		SetNodeStatus(func() ([]catalog.NodeStatus, error))
	}); ok && cfg.Cluster != nil {
		c.SetNodeStatus(e.clusterNodes) // cluster.go
	}
	if c, ok := cat.(interface {
		SetCheckpointStatus(func() (catalog.CheckpointStatus, bool))
	}); ok {
		c.SetCheckpointStatus(e.checkpointStatus)
	}
	if c, ok := cat.(interface {
		SetSourceStatus(func() []catalog.SourceStatus)
	}); ok {
		c.SetSourceStatus(e.sourceStatus)
	}
	if c, ok := cat.(interface {
		SetSinkStatus(func(uint32) (catalog.SinkStatus, bool))
	}); ok {
		c.SetSinkStatus(e.sinkStatus)
	}
	if c, ok := cat.(interface {
		SetActivity(func() []catalog.ActivityRow)
	}); ok {
		c.SetActivity(e.activityRows) // activity.go
	}
	if c, ok := cat.(interface {
		SetOperatorStatus(func() []catalog.OperatorStatus)
	}); ok {
		c.SetOperatorStatus(e.operatorStatus) // observe.go
	}
	if c, ok := cat.(interface {
		SetJobStatus(func() []catalog.JobStatus)
	}); ok {
		c.SetJobStatus(e.jobStatus) // jobs.go
	}
	if c, ok := cat.(interface {
		SetSubscriptionStatus(func() []catalog.SubscriptionStatus)
	}); ok {
		c.SetSubscriptionStatus(e.subscriptionStatus) // jobs.go
	}
	views := e.matViews()
	if cfg.Cluster != nil {
		// A cluster node restarted on its old data directory: the
		// cluster starts its views and sinks (the coordinator's restart
		// from the cluster's checkpoint, a worker's part by restart
		// entries), never this node from its local checkpoint
		// (docs/contributing/cluster.md, "Restart after a node's loss").
		views = nil
	}
	e.recov = newRecovery(views, opened)
	cfg.Logf("recovery: tables and catalog opened in %s", roundDur(time.Since(opened)))
	if cfg.RecoverViewsInBackground {
		if len(views) > 0 {
			cfg.Logf("recovery: %s recover in the background; reads of a view still recovering return the checkpoint's rows with a NOTICE", countRecovered(views))
		}
		go e.recoverViews(cks, views)
	} else {
		e.recoverViews(cks, views)
	}
	return e, nil
}

// Close stops the engine: open sessions are closed, then the catalog and
// the storage.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	close(e.closing)
	sessions := make([]*Session, 0, len(e.sessions))
	for s := range e.sessions {
		sessions = append(sessions, s)
	}
	e.mu.Unlock()
	for _, s := range sessions {
		s.Close()
	}
	e.mu.Lock() // startRetry (from recoverViews) sets them under mu unless closed
	stopRetry, retryDone := e.stopRetry, e.retryDone
	e.mu.Unlock()
	if stopRetry != nil {
		close(stopRetry)
		<-retryDone
	}
	e.stopIngests()
	e.flow.Close() // ends a recovery in progress: recoverViews returns
	<-e.recov.done
	err1 := e.cat.Close()
	err2 := e.store.Close()
	if err1 != nil {
		return err1
	}
	return err2
}

// NewSession starts a session for a connection. params are the startup
// parameters the client sent (application_name, client_encoding, DateStyle...).
func (e *Engine) NewSession(user, database string, params map[string]string) (*Session, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, fmt.Errorf("engine is closed")
	}
	s := newSession(e, user, database, params)
	super, err := e.checkLogin(s.user, e.userSessions(s.user)) // users.go
	if err != nil {
		return nil, err
	}
	if !super {
		s.set.vals["is_superuser"] = "off"
	}
	e.sessions[s] = struct{}{}
	return s, nil
}

// isClosed reports whether Close has begun.
func (e *Engine) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

func (e *Engine) forget(s *Session) {
	e.mu.Lock()
	delete(e.sessions, s)
	e.mu.Unlock()
}
