package engine

import (
	"context"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// ClusterNode is this server's membership in a cluster (streamsqld
// --cluster; package cluster, docs/contributing/cluster.md). The engine
// lists the nodes, runs CREATE SOURCE and CREATE MATERIALIZED VIEW over
// them (cluster_run.go) and refuses what a cluster cannot do yet. Its
// methods are safe for concurrent use.
type ClusterNode interface {
	// Nodes lists the live nodes by a read of the cluster's store; an
	// error means it could not be read (never a stale list).
	Nodes(ctx context.Context) ([]catalog.NodeStatus, error)
	// IsCoordinator says whether this node is the elected coordinator.
	IsCoordinator() bool
	// Placement is the runtime's dataflow.Config.Placement: it sends
	// the instances of the views it placed (Publish) to their nodes.
	Placement() dataflow.Placement
	// Publish records st, which this coordinator runs, in the cluster's
	// statement log for the other nodes; for a view it first places the
	// view's instances over the live nodes. Fenced: it fails when this
	// node is no longer the coordinator.
	Publish(ctx context.Context, st ClusterStatement) error
	// CheckPlace (the coordinator) fails when a view could not be
	// placed over the live nodes now (they disagree on how to run it):
	// called before a view or sink is created, so that a refused
	// statement leaves nothing behind (its OIDs included).
	CheckPlace(ctx context.Context) error
	// ServeView starts this worker's instances of the job of view oid
	// (plan is the view's plan, as the coordinator planned it), as the
	// logged statement that created it placed them; it returns once they
	// run.
	ServeView(ctx context.Context, oid uint32, plan stream.Node) error
	// ReadView reads a view's rows from the coordinator, as cols.
	ReadView(ctx context.Context, schema, name string, cols []types.Column) ([]arrow.RecordBatch, error)
	// Forget drops what the node keeps of every job (view or sink) for
	// which keep is false (dropped from the catalog): a worker stops its
	// instances, the coordinator no longer places, restarts or waits for
	// it at a checkpoint's commit.
	Forget(keep func(oid uint32) bool)
	// Forward runs a statement on the coordinator (a worker's FLUSH).
	Forward(ctx context.Context, sql string) error
	// CheckpointTaken is called after this node committed its local
	// checkpoint of epoch: a coordinator then commits the cluster's
	// checkpoint of that epoch once the instances on other nodes
	// reported theirs (in the background: it must not block), then calls
	// committed: the sinks commit the epoch only then (their commits come
	// after the cluster's, docs/contributing/cluster.md "Sinks on a
	// cluster"). A node that does not commit it never calls committed.
	CheckpointTaken(epoch uint64, committed func())
}

// clusterListTimeout bounds SHOW NODES' read of etcd.
const clusterListTimeout = 5 * time.Second

// clusterReadTimeout bounds a worker's read of a view on the coordinator.
const clusterReadTimeout = 60 * time.Second

// clusterNodes is streamsql_nodes' rows function.
func (e *Engine) clusterNodes() ([]catalog.NodeStatus, error) {
	ctx, cancel := context.WithTimeout(context.Background(), clusterListTimeout)
	defer cancel()
	nodes, err := e.cfg.Cluster.Nodes(ctx)
	if err != nil {
		return nil, pgerr.New(pgerr.ConnectionException, "cannot list the cluster's nodes: %v", err)
	}
	return nodes, nil
}

// nodeColumns are SHOW NODES' columns.
var nodeColumns = []types.Column{{Name: "node_id", Type: types.TText}, {Name: "address", Type: types.TText},
	{Name: "role", Type: types.TText}, {Name: "state", Type: types.TText}, {Name: "runs", Type: types.TText}}

// showNodes answers SHOW NODES: the live nodes, the one answering marked
// with a '*' after its id.
func (s *Session) showNodes() (*Result, error) {
	if s.eng.cfg.Cluster == nil {
		return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "SHOW NODES: this server is not in a cluster (start streamsqld with --cluster, see docs/cluster.md)")
	}
	nodes, err := s.eng.clusterNodes()
	if err != nil {
		return nil, err
	}
	rows := make([][]string, len(nodes))
	for i, n := range nodes {
		id := n.NodeID
		if n.Self {
			id += " *"
		}
		rows[i] = []string{id, n.Address, n.Role, n.State, n.Runs}
	}
	return tableRows("SHOW", nodeColumns, rows), nil
}

// clusterRefusal is the error for a statement a cluster node cannot run
// yet: anything that creates or changes data, a view, a source, a sink,
// a role or a setting of the catalog, since those are not distributed
// over the nodes yet (issue 19), except CREATE SOURCE, CREATE TABLE and
// CREATE MATERIALIZED VIEW on the coordinator (cluster_run.go,
// cluster_tables.go; writes of tables: Session.clusterCheck). Reads, SET,
// SHOW, transactions and cursors run. nil when allowed.
func clusterRefusal(stmt sql.Statement, coordinator bool) error {
	if stmt.Ext != nil && stmt.Ext.Kind != "" {
		switch stmt.Ext.Kind {
		case sql.KindShow, sql.KindFlush, sql.KindAdvanceClock:
			return nil
		case sql.KindCreateSource, sql.KindCreateSink, sql.KindDropSource, sql.KindDropSink:
			if coordinator {
				return nil
			}
			return onCoordinator(string(stmt.Ext.Kind))
		case sql.KindSubscribe: // subscribe.go: a materialized view's changes, where its rows live
			if coordinator {
				return nil
			}
			return onCoordinator(string(stmt.Ext.Kind))
		}
		return notInCluster(string(stmt.Ext.Kind))
	}
	if stmt.AST == nil {
		return nil
	}
	switch n := stmt.AST.Node.(type) {
	case *pg.Node_CreateStmt: // cluster_tables.go
		if coordinator {
			return clusterTableDef(stmt, n.CreateStmt)
		}
		return onCoordinator("CREATE TABLE")
	case *pg.Node_CheckPointStmt: // checkpoints.go: committed by the coordinator
		if coordinator {
			return nil
		}
		return onCoordinator("CHECKPOINT")
	case *pg.Node_CreateSeqStmt: // cluster_tables.go
		if !coordinator {
			return onCoordinator("CREATE SEQUENCE")
		}
		if n.CreateSeqStmt.Sequence != nil && n.CreateSeqStmt.Sequence.Relpersistence == "t" {
			return notInCluster("CREATE TEMPORARY SEQUENCE")
		}
		return nil
	case *pg.Node_CreateTableAsStmt:
		if n.CreateTableAsStmt.Objtype == pg.ObjectType_OBJECT_MATVIEW {
			if coordinator {
				return nil
			}
			return onCoordinator("CREATE MATERIALIZED VIEW")
		}
		return notInCluster("CREATE TABLE AS") // its rows would be written where it runs, not logged
	case *pg.Node_DropStmt:
		switch n.DropStmt.RemoveType {
		case pg.ObjectType_OBJECT_MATVIEW:
			if coordinator {
				return nil
			}
			return onCoordinator("DROP MATERIALIZED VIEW")
		case pg.ObjectType_OBJECT_TABLE: // cluster_tables.go
			if coordinator {
				return nil
			}
			return onCoordinator("DROP TABLE")
		case pg.ObjectType_OBJECT_SEQUENCE:
			if coordinator {
				return nil
			}
			return onCoordinator("DROP SEQUENCE")
		}
	case *pg.Node_SelectStmt, *pg.Node_ExplainStmt, *pg.Node_VariableShowStmt, *pg.Node_VariableSetStmt,
		*pg.Node_TransactionStmt, *pg.Node_PrepareStmt, *pg.Node_ExecuteStmt, *pg.Node_DeallocateStmt,
		*pg.Node_DeclareCursorStmt, *pg.Node_FetchStmt, *pg.Node_ClosePortalStmt, *pg.Node_DiscardStmt:
		return nil
	case *pg.Node_CopyStmt:
		if !n.CopyStmt.IsFrom {
			return nil
		}
		return notInCluster("COPY FROM")
	}
	return notInCluster(statementTag(stmt))
}

func notInCluster(what string) error {
	return pgerr.Unsupported("%s is not supported on a cluster node yet: only CREATE SOURCE, CREATE TABLE, CREATE MATERIALIZED VIEW and writes of tables run on a cluster so far (see docs/cluster.md)", what)
}

func onCoordinator(what string) error {
	return pgerr.Unsupported("%s runs only on the cluster's coordinator: connect to the node SHOW NODES lists as coordinator (see docs/cluster.md)", what)
}

// statementTag names a statement for clusterRefusal's message by its
// leading keywords ("INSERT", "CREATE TABLE", "CREATE MATERIALIZED VIEW").
func statementTag(stmt sql.Statement) string {
	words := strings.Fields(strings.ToUpper(stmt.Source))
	n := 1
	if len(words) > 1 {
		switch words[0] {
		case "CREATE", "ALTER", "DROP", "GRANT", "REVOKE":
			n = 2
			if words[1] == "MATERIALIZED" || words[1] == "UNIQUE" || words[1] == "OR" {
				n = 3
			}
		}
	}
	if len(words) == 0 {
		return "this statement"
	}
	return strings.TrimRight(strings.Join(words[:min(n, len(words))], " "), ";")
}
