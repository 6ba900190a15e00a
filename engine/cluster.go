package engine

import (
	"context"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// ClusterNode is this server's membership in a cluster (streamsqld
// --cluster; package cluster, docs/contributing/cluster.md). The engine
// only lists the nodes and refuses what a cluster cannot do yet.
type ClusterNode interface {
	// Nodes lists the live nodes by a read of the cluster's store; an
	// error means it could not be read (never a stale list).
	Nodes(ctx context.Context) ([]catalog.NodeStatus, error)
}

// clusterListTimeout bounds SHOW NODES' read of etcd.
const clusterListTimeout = 5 * time.Second

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
// over the nodes yet (issue 19). Reads that need no tables, SET, SHOW,
// transactions and cursors run. nil when allowed.
func clusterRefusal(stmt sql.Statement) error {
	if stmt.Ext != nil && stmt.Ext.Kind != "" {
		switch stmt.Ext.Kind {
		case sql.KindShow, sql.KindFlush, sql.KindAdvanceClock:
			return nil
		}
		return notInCluster(string(stmt.Ext.Kind))
	}
	if stmt.AST == nil {
		return nil
	}
	switch n := stmt.AST.Node.(type) {
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
	return pgerr.Unsupported("%s is not supported on a cluster node yet: tables, views, sources, sinks and the catalog are not distributed over the nodes yet (streamsqld --cluster runs membership and coordinator election only; see docs/cluster.md)", what)
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
