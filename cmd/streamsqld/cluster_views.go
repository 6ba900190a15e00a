package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/dist"
	"github.com/streamsql/streamsql/cluster/failpoint"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/dataflow/netx"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/storage/checkpoint"
	"github.com/streamsql/streamsql/types"
)

// The engine's side of views on a cluster (engine/cluster_run.go,
// docs/contributing/cluster.md "Views on a cluster"): the statement log
// and the placement through a dist.Runner, and a worker's reads of a
// view and its FLUSH through a pgwire connection to the coordinator, as
// the --user (and password) this node was started with.

// exchangeOptions are the options of a cluster node's exchange streams:
// a stream that stays silent (no data nor heartbeat) for timeout fails
// (--cluster-exchange-timeout: a dead, paused or partitioned peer), and
// a node may start its part of a view a while after the coordinator (it
// learns of the view from etcd), so the two ends wait for each other
// longer than a stream may stay silent.
func exchangeOptions(timeout time.Duration) netx.Options {
	return netx.Options{Timeout: timeout, Heartbeat: min(500*time.Millisecond, timeout/4), ConnectTimeout: max(60*time.Second, timeout)}
}

// listenExchange opens the node's exchange server on listenAt
// (--exchange-listen; "": the host of the pgwire listener, any port); it
// returns the server and the address other nodes reach it at:
// advertiseAt (--advertise-exchange) if set, else the advertised pgwire
// host (--advertise-address) and the port it listens on.
func listenExchange(listen net.Addr, cc *clusterConfig) (*netx.Server, string, error) {
	host, _, err := net.SplitHostPort(listen.String())
	if err != nil {
		return nil, "", err
	}
	at := cc.exchangeListen
	if at == "" {
		at = net.JoinHostPort(host, "0")
	}
	srv, err := netx.Listen(at, exchangeOptions(cc.exchangeTimeout))
	if err != nil {
		return nil, "", fmt.Errorf("exchange listener: %w", err)
	}
	if cc.exchangeAdvertise != "" {
		return srv, cc.exchangeAdvertise, nil
	}
	_, port, _ := net.SplitHostPort(srv.Addr())
	adv, _, _ := net.SplitHostPort(srv.Addr())
	if cc.advertise != "" {
		adv, _, _ = net.SplitHostPort(cc.advertise)
	}
	if ip := net.ParseIP(adv); ip != nil && ip.IsUnspecified() {
		adv = "127.0.0.1" // listening on every address: reachable here at least; set --advertise-address
	}
	return srv, net.JoinHostPort(adv, port), nil
}

// clusterNode adapts a cluster node and its runner to engine.ClusterNode.
type clusterNode struct {
	n        *cluster.Node
	r        *dist.Runner
	user     string
	password string
	logf     func(string, ...any)
	ckptDir  string      // the local checkpoint store's directory
	commit   atomic.Bool // a cluster checkpoint's commit is in flight
	// lastCoordinator is the coordinator's address etcd listed last
	// (a string; coordinatorAddress).
	lastCoordinator atomic.Value
	// commitTimeout bounds one commit (--cluster-checkpoint-timeout):
	// the wait for the instances' reports, the uploads and the manifest.
	commitTimeout time.Duration
	tabs          clusterTables // cluster_tables.go
	commits       commitWatch   // for CHECKPOINT (WaitCommitted)
}

// commitWatch tells CHECKPOINT when the cluster's commits end. Safe for
// concurrent use.
type commitWatch struct {
	mu      sync.Mutex
	seen    uint64        // the last epoch CheckpointTaken was given
	epoch   uint64        // the last epoch this node committed
	last    error         // why the last epoch seen was not committed (nil: committed or in flight)
	changed chan struct{} // closed (and replaced) when any of the above changes
}

// errCommitSkipped is why an epoch given while a commit was in flight was
// not committed.
var errCommitSkipped = errors.New("its commit was skipped: another commit was in flight")

// note records an epoch seen (why: not committed, nil: being committed)
// or a commit's end (done: epoch committed when err is nil).
func (w *commitWatch) note(epoch uint64, done bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = max(w.seen, epoch)
	if done && err == nil {
		w.epoch = max(w.epoch, epoch)
	}
	w.last = err
	if w.changed != nil {
		close(w.changed)
	}
	w.changed = make(chan struct{})
}

// WaitCommitted implements engine.ClusterCheckpointer.
func (c *clusterNode) WaitCommitted(ctx context.Context, epoch uint64) (bool, error, error) {
	timeout := time.After(c.commitTimeout + 5*time.Second)
	for {
		w := &c.commits
		w.mu.Lock()
		if w.changed == nil {
			w.changed = make(chan struct{})
		}
		committed, seen, last, changed := w.epoch >= epoch, w.seen >= epoch, w.last, w.changed
		w.mu.Unlock()
		switch {
		case committed:
			return true, nil, nil
		case seen && !c.commit.Load():
			if last == nil {
				last = errCommitSkipped
			}
			return false, last, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false, nil, ctx.Err()
		case <-timeout:
			return false, fmt.Errorf("no commit of epoch %d ended within %s", epoch, c.commitTimeout+5*time.Second), nil
		}
	}
}

// CheckpointTaken commits the cluster's checkpoint of epoch in the
// background on the coordinator; an epoch that comes while a commit is
// in flight is skipped (the next one is taken). Once the pointer names it,
// committed lets the sinks commit it.
func (c *clusterNode) CheckpointTaken(epoch uint64, committed func()) {
	if !c.n.IsCoordinator() {
		c.commits.note(epoch, false, errors.New("this node is not the cluster's coordinator"))
		return
	}
	if !c.commit.CompareAndSwap(false, true) {
		c.commits.note(epoch, false, errCommitSkipped)
		return
	}
	c.commits.note(epoch, false, nil)
	// The local checkpoint's files, read now: the store keeps only its
	// last two checkpoints.
	local, err := c.localFiles(epoch)
	if err != nil {
		c.commit.Store(false)
		c.commits.note(epoch, true, err)
		c.logf("cluster: checkpoint %d not committed: %v", epoch, err)
		return
	}
	go func() {
		var err error
		defer func() {
			c.commit.Store(false)
			c.commits.note(epoch, true, err) // after the flag: a waiter sees no commit in flight
		}()
		start := time.Now()
		// The tables' images, taken here (an image of a large table
		// takes a while: not in the engine's checkpoint).
		var tables []dist.LocalFile
		if tables, err = c.tableFiles(); err != nil { // cluster_tables.go
			c.logf("cluster: checkpoint %d not committed: the tables' images: %v", epoch, err)
			return
		}
		local.Tables = tables
		var p cluster.Pointer
		if p, err = c.r.CommitEpoch(context.Background(), epoch, c.commitTimeout, local); err != nil {
			c.logf("cluster: checkpoint %d not committed: %v", epoch, err)
			return
		}
		failpoint.Hit(failpoint.CoordinatorAfterCommit, "checkpoint %d, before its sinks commit it", p.Epoch)
		committed()
		st := c.r.LastCommit()
		c.logf("cluster: checkpoint %d committed in %s, %s after its barrier (%s): %d objects, workers' state %d bytes, %d uploaded in %d objects (reports waited %s), coordinator's files %d bytes, %d uploaded in %s",
			p.Epoch, time.Since(start).Round(time.Millisecond), time.Since(dataflow.EpochTime(p.Epoch)).Round(time.Millisecond), p.Manifest,
			st.Objects, st.WorkerBytes, st.WorkerUploaded, st.WorkerObjects, st.ReportsWait.Round(time.Millisecond), st.CoordBytes, st.CoordUploaded, st.CoordUpload.Round(time.Millisecond))
	}()
}

// IsCoordinator says whether reads of views and FLUSH run here: on the
// coordinator, and on a coordinator that lost its lease because etcd is
// unreachable (cluster.Node.Orphaned: its views still run here, and no
// other node can have been elected without etcd).
func (c *clusterNode) IsCoordinator() bool {
	return c.n.IsCoordinator() || c.n.Orphaned()
}

func (c *clusterNode) Placement() dataflow.Placement { return c.r }

// coordinatorLookup bounds the read of the coordinator's address in
// etcd; when etcd does not answer within it, the address last read is
// used (a worker goes on reading views while etcd is down).
const coordinatorLookup = 2 * time.Second

// coordinatorAddress is the coordinator's pgwire address, as etcd lists
// it, or as it last listed it when etcd cannot be read now.
func (c *clusterNode) coordinatorAddress(ctx context.Context) (string, error) {
	lctx, cancel := context.WithTimeout(ctx, coordinatorLookup)
	nodes, err := c.n.Nodes(lctx)
	cancel()
	if err != nil {
		if last, _ := c.lastCoordinator.Load().(string); last != "" && ctx.Err() == nil {
			c.logf("cluster: etcd cannot be read (%v): reading from the coordinator last listed, %s", err, last)
			return last, nil
		}
		return "", err
	}
	for _, x := range nodes {
		if x.Role == "coordinator" {
			c.lastCoordinator.Store(x.Address)
			return x.Address, nil
		}
	}
	return "", fmt.Errorf("the cluster has no coordinator now")
}

func (c *clusterNode) Publish(ctx context.Context, st engine.ClusterStatement) error {
	cs := cluster.Statement{SQL: st.SQL, SearchPath: st.SearchPath, User: st.User, Parallelism: st.Parallelism, SplitDistinct: st.SplitDistinct, OID: st.OID}
	var err error
	if st.View {
		_, err = c.r.PlaceView(ctx, cs)
	} else {
		_, err = c.r.Log(ctx, cs)
	}
	return err
}

func (c *clusterNode) CheckPlace(ctx context.Context) error { return c.r.CheckPlace(ctx) }

func (c *clusterNode) Forget(keep func(uint32) bool) { c.r.Forget(keep) }

func (c *clusterNode) ServeView(ctx context.Context, oid uint32, plan stream.Node) error {
	return c.r.ServeView(ctx, oid, plan)
}

// connect opens a pgwire connection to the coordinator as this node's
// --user.
func (c *clusterNode) connect(ctx context.Context) (*pgx.Conn, error) {
	user := c.user
	if user == "" {
		user = "streamsql"
	}
	return c.connectAs(ctx, user, c.password)
}

// connectAs opens a pgwire connection to the coordinator as user.
func (c *clusterNode) connectAs(ctx context.Context, user, password string) (*pgx.Conn, error) {
	addr, err := c.coordinatorAddress(ctx)
	if err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%s dbname=streamsql sslmode=prefer", host, port))
	if err != nil {
		return nil, err
	}
	cfg.User, cfg.Password = user, password
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to the coordinator at %s: %w", addr, err)
	}
	return conn, nil
}

func (c *clusterNode) Forward(ctx context.Context, sql string) error {
	conn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	return err
}

// ForwardAs runs sql on the coordinator for a worker's session of user:
// as that user (SET SESSION AUTHORIZATION when it is not this node's
// --user, which must then be a superuser), after the session's setup
// statements (its SETs); it returns the command tag.
func (c *clusterNode) ForwardAs(ctx context.Context, user string, setup []string, sql string) (string, error) {
	conn, err := c.connect(ctx)
	if err != nil {
		return "", err
	}
	defer func() { conn.Close(context.WithoutCancel(ctx)) }()
	if user != conn.Config().User {
		_, err := conn.Exec(ctx, "SET SESSION AUTHORIZATION "+quoteIdent(user), pgx.QueryExecModeSimpleProtocol)
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == string(pgerr.InvalidParameterValue) && strings.HasSuffix(pe.Message, "does not exist") {
			// Not a role: a name trust authentication accepted. Connect
			// as that name (which succeeds only where the coordinator
			// trusts it too).
			as, err := c.connectAs(ctx, user, "")
			if err != nil {
				return "", err
			}
			conn.Close(context.WithoutCancel(ctx))
			conn = as
		} else if err != nil {
			return "", fmt.Errorf("SET SESSION AUTHORIZATION %s: %w", user, coordinatorError(err))
		}
	}
	for _, q := range setup {
		if _, err := conn.Exec(ctx, q, pgx.QueryExecModeSimpleProtocol); err != nil {
			return "", fmt.Errorf("%s: %w", q, coordinatorError(err))
		}
	}
	tag, err := conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return "", coordinatorError(err)
	}
	return tag.String(), nil
}

// coordinatorError is the coordinator's error as the worker's client
// should see it: its SQLSTATE, message, detail and hint.
func coordinatorError(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err
	}
	e := pgerr.New(pgerr.Code(pe.Code), "%s", pe.Message)
	if pe.Detail != "" {
		e = e.WithDetail("%s", pe.Detail)
	}
	if pe.Hint != "" {
		e = e.WithHint("%s", pe.Hint)
	}
	return e
}

// CaughtUp waits until this node applied the statement log as it is now.
func (c *clusterNode) CaughtUp(ctx context.Context) error { return c.r.CaughtUp(ctx) }

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// ReadView reads every row of the view on the coordinator in binary and
// builds one record of cols from them.
func (c *clusterNode) ReadView(ctx context.Context, schema, name string, cols []types.Column) ([]arrow.RecordBatch, error) {
	conn, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	names := make([]string, len(cols))
	for i, col := range cols {
		names[i] = quoteIdent(col.Name)
	}
	q := fmt.Sprintf("SELECT %s FROM %s.%s", strings.Join(names, ", "), quoteIdent(schema), quoteIdent(name))
	res := conn.PgConn().ExecParams(ctx, q, nil, nil, nil, []int16{1}).Read()
	if res.Err != nil {
		return nil, res.Err
	}
	bs := make([]array.Builder, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for i, col := range cols {
		bs[i] = types.NewBuilder(memory.DefaultAllocator, col.Type)
		defer bs[i].Release()
	}
	for _, row := range res.Rows {
		for i, col := range cols {
			var v types.Value
			if row[i] != nil {
				if v, err = types.ParseBinary(row[i], col.Type); err != nil {
					return nil, fmt.Errorf("column %s: %w", col.Name, err)
				}
			}
			if err := types.AppendValue(bs[i], v, col.Type); err != nil {
				return nil, fmt.Errorf("column %s: %w", col.Name, err)
			}
		}
	}
	for i := range bs {
		arrs[i] = bs[i].NewArray()
	}
	return []arrow.RecordBatch{array.NewRecordBatch(types.ArrowSchema(cols), arrs, int64(len(res.Rows)))}, nil
}

// followStatements runs on this node, in order, every statement another
// node logged as coordinator (dist.Runner.Follow), until ctx ends. A
// statement that fails here is logged and skipped (the catalogs then
// differ: a later view that depends on it fails here too, and its
// coordinator's job fails with the exchange's error). A lost watch is
// followed again after a second, from the statement after the last one
// run.
func followStatements(ctx context.Context, r *dist.Runner, eng *engine.Engine, logf func(string, ...any)) {
	var applied uint64
	for {
		err := r.Follow(ctx, func(st cluster.Statement) error {
			if st.Seq <= applied {
				return nil
			}
			applied = st.Seq
			if st.Restart != nil { // cluster_restart.go
				plan, err := eng.ClusterViewPlan(st.OID)
				if err == nil {
					err = r.RestartView(ctx, st, plan)
				}
				if err != nil {
					logf("cluster: restart %d of view %d from %s failed on this node: %v", st.Seq, st.OID, st.Coordinator, err)
				}
				return nil
			}
			err := eng.ReplayClusterStatement(ctx, engine.ClusterStatement{SQL: st.SQL, SearchPath: st.SearchPath,
				User: st.User, Parallelism: st.Parallelism, SplitDistinct: st.SplitDistinct, OID: st.OID, View: st.Assignment != nil})
			if err != nil && alreadyRan(eng, st, err) {
				logf("cluster: statement %d from %s is in this node's catalog already (its data directory is from before): not run again", st.Seq, st.Coordinator)
				return nil
			}
			if err != nil {
				logf("cluster: statement %d from %s failed on this node: %v (%s)", st.Seq, st.Coordinator, err, st.SQL)
			}
			return nil
		})
		if ctx.Err() != nil {
			return
		}
		logf("cluster: following the statement log: %v; again in 1s", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// localFiles reads the files of this node's local checkpoint of epoch
// that the object store does not have yet (dist.LocalFile), and lists
// the jobs it holds.
func (c *clusterNode) localFiles(epoch uint64) (dist.LocalPart, error) {
	m, err := checkpoint.ReadManifest(c.ckptDir, epoch)
	if err != nil {
		return dist.LocalPart{}, err
	}
	files, err := checkpoint.Files(c.ckptDir, epoch)
	if err != nil {
		return dist.LocalPart{}, err
	}
	sizes := map[string]int64{}
	for _, seg := range m.Segments {
		sizes[seg.Name] = seg.Size
	}
	out := make([]dist.LocalFile, len(files))
	for i, f := range files {
		out[i].Name, out[i].Size = f.Name, -1
		if size, ok := sizes[f.Name]; ok && !f.Manifest {
			out[i].Size = size
		}
		if c.r.CoordinatorUploaded(f.Name, out[i].Size) {
			continue
		}
		if out[i].Data, err = checkpoint.ReadFile(c.ckptDir, f.Name); err != nil {
			return dist.LocalPart{}, err
		}
	}
	return dist.LocalPart{Files: out, Jobs: dataflow.CheckpointJobs(m)}, nil
}
