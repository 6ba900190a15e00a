package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Views spread over a cluster (docs/contributing/cluster.md, "Views on a
// cluster"). The coordinator runs CREATE SOURCE and CREATE MATERIALIZED
// VIEW as on one machine and records each in the cluster's statement log
// (ClusterNode.Publish); every other node runs the logged statement in a
// replay session (ReplayClusterStatement): its catalog gets the same
// relation with the same OID, and for a view it runs only the instances
// the view's assignment gives it (ClusterNode.ServeView), fed by and
// feeding the coordinator's job over the network. The view's rows live in
// the coordinator's job: a worker reads them from there
// (ClusterNode.ReadView), and its FLUSH is the coordinator's.

// ClusterStatement is a statement the coordinator ran, as the statement
// log records it for the other nodes.
type ClusterStatement struct {
	SQL        string
	SearchPath []string
	User       string
	// Parallelism is the view's streaming_parallelism (0 for a source).
	Parallelism int
	// SplitDistinct is the view's streaming_split_distinct ("" for a source).
	SplitDistinct string
	// OID is the relation it created: a replay must create the same.
	OID uint32
	// View says whether it is CREATE MATERIALIZED VIEW (its instances
	// are placed over the nodes when it is logged).
	View bool
}

// clusterCreated logs a statement that created rel (CREATE SOURCE, CREATE
// TABLE) on a
// coordinator, or checks the OID a replay created; nil when not in a
// cluster.
func (s *Session) clusterCreated(ctx context.Context, stmt sql.Statement, rel *catalog.Relation, _ *dataflow.JobSpec) error {
	c := s.eng.cfg.Cluster
	if c == nil || rel == nil {
		return nil
	}
	if s.replay != nil {
		if rel.OID != s.replay.OID {
			return pgerr.Internal("cluster: %s has OID %d here, %d on the coordinator: the catalogs differ", rel.Name, rel.OID, s.replay.OID)
		}
		return nil
	}
	return c.Publish(ctx, ClusterStatement{SQL: stmt.Source, SearchPath: s.set.searchPath(), User: s.user, OID: rel.OID})
}

// clusterCheckPlace runs before a view or sink is created: on a
// cluster's coordinator (not in a replay) it fails when the view could
// not be placed over the live nodes (ClusterNode.CheckPlace).
func (s *Session) clusterCheckPlace(ctx context.Context) error {
	c := s.eng.cfg.Cluster
	if c == nil || s.replay != nil || !c.IsCoordinator() {
		return nil
	}
	return c.CheckPlace(ctx)
}

// clusterView runs in CREATE MATERIALIZED VIEW on a cluster node once the
// view is in the catalog: on the coordinator it logs the statement with
// the view's placement (served false: the caller starts the job, whose
// instances the runtime's Placement sends to the nodes); in a replay it
// starts this node's instances (served true).
func (s *Session) clusterView(ctx context.Context, stmt sql.Statement, created *catalog.Relation, spec dataflow.JobSpec) (served bool, err error) {
	c := s.eng.cfg.Cluster
	if s.replay == nil {
		return false, c.Publish(ctx, ClusterStatement{SQL: stmt.Source, SearchPath: s.set.searchPath(), User: s.user,
			Parallelism: created.Parallelism, SplitDistinct: created.SplitDistinct, OID: created.OID, View: true})
	}
	if err := s.clusterCreated(ctx, stmt, created, &spec); err != nil {
		return false, err
	}
	return true, c.ServeView(ctx, created.OID, spec.Plan)
}

// clusterDropped runs after a DROP (of materialized views, sources or
// sinks, cascades included) on a cluster node: the node forgets the
// dropped jobs (ClusterNode.Forget: a worker stops its instances), and
// the coordinator logs the statement for the other nodes, which drop the
// same relations when they replay it. nil when not in a cluster.
func (s *Session) clusterDropped(ctx context.Context, stmt sql.Statement) error {
	c := s.eng.cfg.Cluster
	if c == nil {
		return nil
	}
	c.Forget(func(oid uint32) bool { return clusterJob(s.eng.cat.Relation(oid)) })
	if s.replay != nil {
		return nil
	}
	if err := c.Publish(ctx, ClusterStatement{SQL: stmt.Source, SearchPath: s.set.searchPath(), User: s.user}); err != nil {
		return fmt.Errorf("dropped on this node, but not logged for the cluster's other nodes: %w", err)
	}
	return nil
}

// ReplayClusterStatement runs a statement of the cluster's statement log
// on this node (a worker): as st.User, with its search_path and
// streaming_parallelism, creating the same OID; a view runs only this
// node's instances.
func (e *Engine) ReplayClusterStatement(ctx context.Context, st ClusterStatement) error {
	if e.cfg.Cluster == nil {
		return pgerr.Internal("cluster: a statement replayed on a server that is not in a cluster")
	}
	if err := e.waitRecovered(ctx); err != nil {
		return err
	}
	s, err := e.NewSession(st.User, "", nil)
	if err != nil {
		return fmt.Errorf("cluster: replay session: %w", err)
	}
	defer s.Close()
	var pre []string
	if len(st.SearchPath) > 0 {
		path := ""
		for i, p := range st.SearchPath {
			if i > 0 {
				path += ", "
			}
			path += `"` + strings.ReplaceAll(p, `"`, `""`) + `"`
		}
		pre = append(pre, "SET search_path = "+path)
	}
	if st.Parallelism > 0 {
		pre = append(pre, fmt.Sprintf("SET streaming_parallelism = %d", st.Parallelism))
	}
	if st.SplitDistinct != "" {
		pre = append(pre, "SET streaming_split_distinct = "+st.SplitDistinct)
	}
	for _, q := range pre {
		if err := s.runReplay(ctx, q); err != nil {
			return err
		}
	}
	if adv, ok := e.cat.(oidAdvancer); ok && st.OID != 0 {
		// The coordinator may have skipped OIDs (a statement created a
		// relation and then failed and dropped it, never logged).
		if err := adv.AdvanceOID(st.OID); err != nil {
			return err
		}
	}
	s.replay = &st
	return s.runReplay(ctx, st.SQL)
}

// oidAdvancer is the part of the catalog a replay uses to hand out the
// coordinator's OIDs (catalog.Catalog.AdvanceOID).
type oidAdvancer interface {
	AdvanceOID(oid uint32) error
}

// runReplay parses and runs one statement text in s.
func (s *Session) runReplay(ctx context.Context, text string) error {
	stmts, err := sql.Parse(text)
	if err != nil {
		return err
	}
	for _, stmt := range stmts {
		p, err := s.Prepare(ctx, stmt, nil)
		if err != nil {
			return err
		}
		if _, err := s.Execute(ctx, p, nil); err != nil {
			return err
		}
	}
	return nil
}

// clusterViewRows reads a materialized view's rows from the coordinator
// when this node is a worker; ok false elsewhere (the view's job is here).
func (e *Engine) clusterViewRows(oid uint32) (rows []arrow.RecordBatch, ok bool, err error) {
	rel := e.cat.Relation(oid)
	if rel == nil || rel.Kind != catalog.KindMatView {
		return nil, false, nil
	}
	return e.clusterRemoteRows(rel, "materialized view")
}

// clusterRemoteRows reads rel's rows (a view's, a table's: what names
// it) from the coordinator when this node is a worker; ok false
// elsewhere.
func (e *Engine) clusterRemoteRows(rel *catalog.Relation, what string) (rows []arrow.RecordBatch, ok bool, err error) {
	c := e.cfg.Cluster
	if c == nil || c.IsCoordinator() {
		return nil, false, nil
	}
	cols := make([]types.Column, len(rel.Columns))
	for i, col := range rel.Columns {
		cols[i] = types.Column{Name: col.Name, Type: col.Type}
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadTimeout)
	defer cancel()
	rows, err = c.ReadView(ctx, rel.Schema, rel.Name, cols)
	if err != nil {
		return nil, true, pgerr.New(pgerr.ConnectionException, "%s \"%s\" cannot be read from the coordinator: %v", what, rel.Name, err)
	}
	return rows, true, nil
}

// StopClusterJobs stops the jobs (views, sinks) of oids that run here
// (a coordinator that lost its role: another node runs them, and a sink
// of this node would fence the new coordinator's writer back); it
// returns those it stopped.
func (e *Engine) StopClusterJobs(oids []uint32) []uint32 {
	e.resumeMu.Lock()
	defer e.resumeMu.Unlock()
	var out []uint32
	for _, oid := range oids {
		if e.flow.Job(oid) != nil {
			e.flow.StopJob(oid)
			out = append(out, oid)
		}
	}
	return out
}

// ClusterViewFailed says whether view oid's job has failed (or did not
// start): the coordinator restarts it (cmd/streamsqld's supervision).
func (e *Engine) ClusterViewFailed(oid uint32) bool { return e.failed(oid) }

// clusterJob says whether rel runs as a job placed over the cluster: a
// materialized view or a sink.
func clusterJob(rel *catalog.Relation) bool {
	return rel != nil && (rel.Kind == catalog.KindMatView || rel.Kind == catalog.KindSink)
}

// ClusterViewPlan plans view (or sink) oid as its job runs it (the
// coordinator restores a cluster checkpoint for that plan).
func (e *Engine) ClusterViewPlan(oid uint32) (stream.Node, error) {
	rel := e.cat.Relation(oid)
	if !clusterJob(rel) {
		return nil, pgerr.New(pgerr.UndefinedTable, "cluster: view %d is not in the catalog", oid)
	}
	q, err := e.planView(rel)
	if err != nil {
		return nil, err
	}
	return q.Root, nil
}

// CheckpointDir is the directory of the checkpoints of a server whose
// data directory is dataDir (a cluster's coordinator uploads its files).
func CheckpointDir(dataDir string) string { return filepath.Join(dataDir, "checkpoints") }
