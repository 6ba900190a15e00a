package engine

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// Session is one connection's state: its settings and transaction status.
// Used by one goroutine at a time (the connection's).
type Session struct {
	eng *Engine
	// user is the current user (current_user); login is who authenticated
	// and auth who the session acts as (role.go).
	user     string
	login    string
	auth     authState
	authTx   *authTx
	database string
	pid      int32
	set      *settings
	notices  []*pgerr.Error

	tx      TxStatus
	txStart time.Time
	// stx is the storage transaction of an open transaction block: DML in
	// the block writes through it, scans read through it, and COMMIT makes
	// its writes durable and visible (docs/transactions.md).
	stx *storage.Tx
	// savepoints are the block's SAVEPOINTs, oldest first (savepoint.go).
	savepoints []savepoint
	// prepared holds the statements of SQL PREPARE, by name.
	prepared map[string]*Prepared
	// cursors holds the open SQL cursors (DECLARE), by name (cursor.go).
	cursors map[string]*cursor
	// txTemps are the temporary relations the open transaction block
	// created, oldest first: a rollback drops them (temp.go).
	txTemps []*catalog.Relation
	// seq is the session's currval/lastval state (sequence.go).
	seq    seqMemo
	closed atomic.Bool
	// act is what pg_stat_activity shows of it (activity.go).
	act activity
	// replay is the statement-log entry a cluster worker's replay
	// session runs (cluster_run.go), nil in every other session.
	replay *ClusterStatement
}

var _ SessionAPI = (*Session)(nil)

func newSession(e *Engine, user, database string, params map[string]string) *Session {
	if user == "" {
		user = "streamsql"
	}
	if database == "" {
		database = user
	}
	st, warnings := newSettings(user, params)
	e.setSessionDefaults(st, params)
	for k, v := range e.cfg.ServerSettings {
		if def := settingsByLower[strings.ToLower(k)]; def != nil && def.readOnly {
			st.vals[strings.ToLower(k)] = v
		}
	}
	return &Session{
		eng: e, user: user, login: user, auth: authState{session: user}, database: database,
		pid: e.nextPID.Add(1) + 1000, set: st, notices: warnings, tx: 'I',
		act: activity{start: time.Now(), state: "idle", app: params["application_name"]},
	}
}

// PID is the session's backend process id (BackendKeyData, pg_backend_pid).
func (s *Session) PID() int32 { return s.pid }

// stmtKind classifies a prepared statement for Execute.
type stmtKind uint8

const (
	kindUtility stmtKind = iota // DDL, SET, transaction control...: run at Execute
	kindSelect
	kindInsert
	kindUpdate
	kindDelete
	kindMerge // MERGE (merge.go)
	kindExplain
	kindExplainAnalyze // EXPLAIN ANALYZE of a query (explain_analyze.go)
	kindShow
	kindDeclare   // DECLARE CURSOR FOR a query (cursor.go)
	kindFetch     // FETCH and MOVE
	kindSubscribe // SUBSCRIBE, plain or under DECLARE or COPY (live.go)
	kindForward   // a worker's statement run on the coordinator (cluster_forward.go)
)

// plan is the engine-private part of a Prepared statement.
type plan struct {
	kind    stmtKind
	query   *planner.Query
	insert  *planner.Insert
	update  *planner.Update
	del     *planner.Delete
	merge   *planner.Merge
	explain string
	// explainJSON: explain is one JSON document, one row (FORMAT JSON).
	explainJSON bool
	analyze     *analyzePlan // kindExplainAnalyze
	show        string       // SHOW's parameter name (lower case) or "all"
	declare     *pg.DeclareCursorStmt
	fetch       *pg.FetchStmt
	sub         *subscribePlan
	gen         any    // the catalog generation planned against (see replanIfStale)
	user        string // the current user planned as (privileges checked for)
}

// Prepare implements SessionAPI.
func (s *Session) Prepare(ctx context.Context, stmt sql.Statement, paramOIDs []uint32) (p *Prepared, err error) {
	defer func() {
		if err != nil && s.tx == 'T' {
			s.tx = 'E'
		}
	}()
	if s.tx == 'E' && !isTxEnd(stmt) {
		return nil, errAborted
	}
	paramTypes := make([]types.T, len(paramOIDs))
	for i, oid := range paramOIDs {
		if oid == 0 {
			paramTypes[i] = types.TUnknown
			continue
		}
		t, ok := types.FromOID(oid)
		if !ok {
			return nil, pgerr.New(pgerr.UndefinedObject, "type with OID %d does not exist", oid)
		}
		paramTypes[i] = t
	}
	if err := checkStreamingClauses(stmt); err != nil {
		return nil, err
	}
	if s.eng.cfg.Cluster != nil && s.replay == nil {
		if fw, err := s.forwardsToCoordinator(stmt, len(paramOIDs)); err != nil || fw { // cluster_forward.go
			if err != nil {
				return nil, err
			}
			return &Prepared{Stmt: stmt, plan: &plan{kind: kindForward, gen: s.generation(), user: s.user}}, nil
		}
		if err := s.clusterCheck(ctx, stmt); err != nil { // cluster_tables.go
			return nil, err
		}
	}
	p = &Prepared{Stmt: stmt, ParamTypes: paramTypes}
	pl := &plan{kind: kindUtility, gen: s.generation(), user: s.user}
	p.plan = pl
	if stmt.AST == nil {
		if stmt.Ext != nil && stmt.Ext.Kind == sql.KindShow {
			switch {
			case stmt.Ext.Show == "JOBS":
				p.Columns = showJobsColumns // jobs.go
			case stmt.Ext.Show == "NODES":
				p.Columns = nodeColumns // cluster.go
			case strings.HasPrefix(stmt.Ext.Show, "CREATE "):
				p.Columns = showCreateColumns // show_create.go
			default:
				p.Columns = []types.Column{{Name: "Name", Type: types.TText}}
			}
		}
		if stmt.Ext != nil && stmt.Ext.Kind == sql.KindExplainStream {
			p.Columns = explainStreamColumns // explain_stream.go
		}
		if isSubscribeStmt(stmt) {
			return s.prepareSubscribe(ctx, p, pl, stmt.Ext.Subscribe)
		}
		return p, nil
	}
	env := s.env(ctx, paramTypes)
	env.Source = stmt.Source // error positions
	env.Emit = stmtEmit(stmt)
	env.TemporalJoins = stmtTemporal(stmt)
	env.SessionFrames = stmtSessions(stmt)
	switch stmt.AST.Node.(type) {
	case *pg.Node_SelectStmt, *pg.Node_InsertStmt, *pg.Node_UpdateStmt, *pg.Node_DeleteStmt:
		env.ModifyingWith = true // run by runModifying (dml_with.go)
	}
	switch n := stmt.AST.Node.(type) {
	case *pg.Node_SelectStmt:
		q, err := planner.PlanSelect(env, stmt.AST)
		if err != nil {
			return nil, err
		}
		pl.kind, pl.query = kindSelect, q
		p.Columns, p.ParamTypes = q.Columns, q.ParamTypes
	case *pg.Node_InsertStmt:
		ins, err := planner.PlanInsert(env, n.InsertStmt)
		if err != nil {
			return nil, err
		}
		pl.kind, pl.insert = kindInsert, ins
		p.ParamTypes = ins.ParamTypes
		if ins.Returning != nil {
			p.Columns = ins.Returning.Columns
		}
	case *pg.Node_UpdateStmt:
		up, err := planner.PlanUpdate(env, n.UpdateStmt)
		if err != nil {
			return nil, err
		}
		pl.kind, pl.update = kindUpdate, up
		p.ParamTypes = up.ParamTypes
		if up.Returning != nil {
			p.Columns = up.Returning.Columns
		}
	case *pg.Node_DeleteStmt:
		del, err := planner.PlanDelete(env, n.DeleteStmt)
		if err != nil {
			return nil, err
		}
		pl.kind, pl.del = kindDelete, del
		p.ParamTypes = del.ParamTypes
		if del.Returning != nil {
			p.Columns = del.Returning.Columns
		}
	case *pg.Node_MergeStmt:
		m, err := planner.PlanMerge(env, n.MergeStmt)
		if err != nil {
			return nil, err
		}
		pl.kind, pl.merge = kindMerge, m
		p.ParamTypes = m.ParamTypes
	case *pg.Node_ExplainStmt:
		opts, err := explainOptions(n.ExplainStmt.Options)
		if err != nil {
			return nil, err
		}
		if opts.analyze {
			if err := s.prepareExplainAnalyze(env, n.ExplainStmt, opts, pl, p); err != nil {
				return nil, err
			}
			break
		}
		text, err := s.explain(env, n.ExplainStmt, opts) // ddl.go
		if err != nil {
			return nil, err
		}
		pl.kind, pl.explain, pl.explainJSON = kindExplain, text, opts.json
		p.Columns = []types.Column{{Name: "QUERY PLAN", Type: explainType(opts)}} // explain_analyze.go
	case *pg.Node_DeclareCursorStmt:
		q, err := planner.PlanSelect(env, n.DeclareCursorStmt.Query)
		if err != nil {
			return nil, err
		}
		pl.kind, pl.query, pl.declare = kindDeclare, q, n.DeclareCursorStmt
		p.ParamTypes = q.ParamTypes
	case *pg.Node_FetchStmt:
		pl.kind, pl.fetch = kindFetch, n.FetchStmt
		p.Columns = s.fetchColumns(n.FetchStmt)
	case *pg.Node_ExecuteStmt:
		if inner, ok := s.prepared[n.ExecuteStmt.Name]; ok {
			p.Columns = inner.Columns
		}
	case *pg.Node_VariableShowStmt:
		name := strings.ToLower(n.VariableShowStmt.Name)
		pl.kind, pl.show = kindShow, name
		if name == "all" {
			p.Columns = []types.Column{{Name: "name", Type: types.TText}, {Name: "setting", Type: types.TText}, {Name: "description", Type: types.TText}}
		} else {
			canon := name
			if st, ok := settingsByLower[name]; ok {
				canon = st.name
			} else if _, ok := s.showValue(name); !ok {
				return nil, pgerr.New(pgerr.UndefinedObject, "unrecognized configuration parameter %q", n.VariableShowStmt.Name)
			}
			p.Columns = []types.Column{{Name: canon, Type: types.TText}} // as PostgreSQL: SHOW timezone heads its column TimeZone
		}
	}
	return p, nil
}

// Execute implements SessionAPI.
func (s *Session) Execute(ctx context.Context, p *Prepared, params []types.Value) (res *Result, err error) {
	defer func() {
		if err != nil && s.tx == 'T' {
			s.tx = 'E'
		}
		if res != nil && len(s.notices) > 0 {
			res.Notices = append(s.notices, res.Notices...)
			s.notices = nil
		}
	}()
	if s.tx == 'E' && !isTxEnd(p.Stmt) {
		return nil, errAborted
	}
	if pl, ok := p.plan.(*plan); ok && pl.kind == kindForward {
		return s.forward(ctx, p.Stmt) // cluster_forward.go
	}
	if s.eng.cfg.Cluster != nil && s.replay == nil {
		// again: the node may have lost the coordinator's role since
		// the statement was prepared
		if err := s.clusterCheck(ctx, p.Stmt); err != nil { // cluster_tables.go
			return nil, err
		}
	}
	pl := p.plan.(*plan)
	if waitsForViews(p, pl) { // recovery.go
		if err := s.eng.waitRecovered(ctx); err != nil {
			return nil, err
		}
	}
	if (pl.kind == kindSelect || pl.kind == kindDeclare || pl.kind == kindExplainAnalyze) && pl.query != nil {
		if err := s.eng.waitViewsStarted(ctx, pl.query.Views); err != nil {
			return nil, err
		}
	}
	if pl.kind == kindFetch || pl.kind == kindSubscribe {
		return s.executeLive(ctx, p, pl)
	}
	unlock, alters, err := s.lockPlan(ctx, p)
	if err != nil {
		return nil, err
	}
	defer unlock()
	pl = p.plan.(*plan) // replanned if stale
	if pl.kind == kindSelect {
		defer func() { res = s.guardRows(res, alters) }()
	}
	if len(params) != len(p.ParamTypes) {
		return nil, pgerr.New(pgerr.ProtocolViolation, "bind message supplies %d parameters, but prepared statement requires %d", len(params), len(p.ParamTypes))
	}
	if pl.kind == kindDeclare {
		return s.declareSelect(ctx, pl, params, alters)
	}
	var cancel context.CancelFunc = func() {}
	if d := s.set.statementTimeout(); d > 0 {
		ctx, cancel = context.WithTimeout(ctx, d)
	}
	ectx := s.execContext(ctx, params)
	if c := cancel; true {
		cancel = func() { c(); closeBudget(ectx) }
	}
	switch pl.kind {
	case kindSelect:
		own, err := s.takeRowLocks(ctx, pl.query) // rowlock.go: FOR UPDATE/SHARE
		if err != nil {
			cancel()
			return nil, err
		}
		if own != nil { // outside a block: held until the rows are read
			ectx.Eval.Tx = own
			c := cancel
			cancel = func() { c(); own.Rollback() }
		}
		if len(pl.query.With) > 0 {
			defer cancel()
			return s.execSelectWith(ectx, pl.query, p.Columns) // dml_with.go
		}
		if len(pl.query.Views) > 1 { // several views: read them at one epoch
			if ectx.Views, err = s.eng.flow.ReadViews(ctx, pl.query.Views); err != nil {
				cancel()
				return nil, err
			}
			ectx.Eval.Views = ectx.Views // for subqueries' plans too
		}
		it, err := pl.query.Root.Open(ectx)
		if err != nil {
			cancel()
			return nil, err
		}
		return &Result{Tag: "SELECT", Columns: p.Columns, Rows: &cancelIter{it, cancel},
			Notices: s.eng.viewNotices(pl.query.Views)}, nil
	case kindInsert, kindUpdate, kindDelete:
		defer cancel()
		return s.execDML(ectx, pl)
	case kindMerge:
		defer cancel()
		return s.execMerge(ectx, pl.merge)
	case kindExplainAnalyze:
		return s.execExplainAnalyze(ctx, ectx, pl, p.Columns, cancel)
	case kindExplain:
		cancel()
		if pl.explainJSON {
			return textRows("EXPLAIN", p.Columns, []string{pl.explain}), nil
		}
		return textRows("EXPLAIN", p.Columns, strings.Split(strings.TrimRight(pl.explain, "\n"), "\n")), nil
	case kindShow:
		cancel()
		return s.execShow(pl.show, p.Columns)
	}
	res, err = s.execUtility(ctx, p.Stmt)
	if err == nil && res != nil && res.CopyOut != nil && res.CopyOut.Rows != nil {
		// COPY TO's rows are read after Execute: the timeout runs until
		// they are closed.
		res.CopyOut.Rows = withClose(res.CopyOut.Rows, cancel)
		return res, nil
	}
	if err == nil && res != nil && res.CopyIn != nil {
		// COPY FROM STDIN's data arrives after Execute: the timeout runs
		// until the wire finishes or aborts it.
		res.CopyIn = &cancelCopyIn{CopyIn: res.CopyIn, cancel: cancel}
		return res, nil
	}
	if err == nil && res != nil && res.Rows != nil {
		// Rows read after Execute (EXECUTE of a SELECT): their statement
		// runs under ctx, so the timeout (and ctx) lasts until they are
		// closed.
		res.Rows = withClose(res.Rows, cancel)
		return res, nil
	}
	cancel()
	return res, err
}

// env is the planner's environment for one statement.
func (s *Session) env(ctx context.Context, params []types.T) *planner.Env {
	return s.withAccess(&planner.Env{
		Catalog:         s.eng.cat,
		SearchPath:      s.set.searchPath(),
		Params:          params,
		Eval:            s.planEvalContext(ctx),
		Streams:         flowStreams{s.eng},
		Parallelism:     s.streamingParallelism(),
		ParallelismAuto: s.eng.spreadsDefault(!s.set.explicit["streaming_parallelism"]), // parallel.go
		SplitDistinct:   s.splitDistinct(),
		TempSchema:      s.tempSchemaName(),
	})
}

// planEvalContext is the evaluation context of planning (constant folding):
// values it builds are checked against the statement's limit, but it takes
// nothing from the server's pool, as nothing closes it.
func (s *Session) planEvalContext(ctx context.Context) *expr.Context {
	ec := s.evalContext(ctx, nil)
	b := s.eng.queryBudget(s.set)
	ec.Budget = membudget.NewQuery(nil, b.Limit(), b.WorkMem())
	return ec
}

func (s *Session) evalContext(ctx context.Context, params []types.Value) *expr.Context {
	now := time.Now()
	if s.tx != 'I' && !s.txStart.IsZero() {
		now = s.txStart
	}
	return &expr.Context{
		Ctx:      ctx,
		Params:   params,
		Location: s.set.location(),
		Now:      now,
		Session:  sessionInfo{s},
		Catalog:  s.eng.cat,
		Tx:       s.stx,
		Shared:   &expr.SharedResults{},
	}
}

// execContext is a statement execution's context, with its memory budget:
// whoever runs the plan closes the budget (closeBudget) when the execution
// ends, giving back to the server's pool whatever its operators still hold.
func (s *Session) execContext(ctx context.Context, params []types.Value) *exec.Context {
	ec := &exec.Context{Eval: s.evalContext(ctx, params)}
	ec.Eval.Budget = s.eng.queryBudget(s.set)
	ec.TempDir = s.eng.tempDir
	ec.Workers = s.set.parallelWorkers()
	return ec
}

// closeBudget ends an execution's memory budget.
func closeBudget(ec *exec.Context) { ec.Eval.Budget.Close() }

// TxStatus implements SessionAPI.
func (s *Session) TxStatus() TxStatus { return s.tx }

// Format implements SessionAPI.
// The catalog names objects for regclass, regtype and regproc output.
func (s *Session) Format() types.FormatOptions {
	f := s.set.format()
	if r, ok := s.eng.cat.(interface {
		RegNames(searchPath []string) func(k types.Kind, oid uint32) (string, bool)
		RegOIDs(searchPath []string) func(k types.Kind, name string) (uint32, error)
	}); ok {
		f.Names = r.RegNames(s.set.searchPath())
		f.OIDs = r.RegOIDs(s.set.searchPath())
	}
	return f
}

// ParamStatus implements SessionAPI.
func (s *Session) ParamStatus() map[string]string { return s.set.reportable() }

// StringLiterals reports standard_conforming_strings and
// escape_string_warning, which decide how the wire layer parses the
// session's query strings (sql.ParseNonStandard).
func (s *Session) StringLiterals() (standard, warn bool) {
	std, _ := s.set.get("standard_conforming_strings")
	w, _ := s.set.get("escape_string_warning")
	return std != "off", w != "off"
}

// Close implements SessionAPI. An open transaction block is rolled back.
func (s *Session) Close() {
	if s.closed.Swap(true) {
		return
	}
	s.closeCursors(func(*cursor) bool { return true })
	s.endTx(false, context.Background())
	if err := s.dropTemp(); err != nil { // temp.go
		s.eng.cfg.Logf("session %d: dropping its temporary relations: %v", s.pid, err)
	}
	s.eng.forget(s)
}

var errAborted = pgerr.New(pgerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block")

// isTxEnd reports COMMIT, ROLLBACK and friends, which run in a failed block.
func isTxEnd(stmt sql.Statement) bool {
	if stmt.AST == nil {
		return false
	}
	t := stmt.AST.GetTransactionStmt()
	if t == nil {
		return false
	}
	switch t.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT, pg.TransactionStmtKind_TRANS_STMT_ROLLBACK,
		pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO, pg.TransactionStmtKind_TRANS_STMT_PREPARE,
		pg.TransactionStmtKind_TRANS_STMT_COMMIT_PREPARED, pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_PREPARED:
		return true
	}
	return false
}

// cancelIter releases a statement's timeout when its rows are closed.
type cancelIter struct {
	exec.Iterator
	cancel context.CancelFunc
}

func (c *cancelIter) Close() error {
	err := c.Iterator.Close()
	c.cancel()
	return err
}

// sessionInfo exposes the session to SQL functions.
type sessionInfo struct{ s *Session }

func (i sessionInfo) User() string { return i.s.user }

// SessionUser is session_user (SET SESSION AUTHORIZATION's user).
func (i sessionInfo) SessionUser() string { return i.s.auth.session }
func (i sessionInfo) Database() string    { return i.s.database }
func (i sessionInfo) Setting(name string) (string, bool) {
	return i.s.showValue(strings.ToLower(name))
}
func (i sessionInfo) SearchPath() []string { return i.s.set.searchPath() }
func (i sessionInfo) BackendPID() int32    { return i.s.pid }
