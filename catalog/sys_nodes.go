package catalog

import (
	"github.com/streamsql/streamsql/types"
)

// streamsql_nodes: one row per live node of the cluster this server is a
// node of (streamsqld --cluster, docs/cluster.md); no rows on a server
// that is not in a cluster.

// NodeStatus is what streamsql_nodes shows of one node.
type NodeStatus struct {
	NodeID  string
	Address string // its pgwire address
	Role    string // "coordinator" or "worker"
	State   string // "running"
	Runs    string // what it runs ("nothing" until views are distributed)
	Started types.TimestampValue
	Self    bool // the node answering the query
}

// SetNodeStatus installs the function streamsql_nodes reads; its error
// fails the query (the cluster's store could not be read).
func (c *Catalog) SetNodeStatus(f func() ([]NodeStatus, error)) {
	c.nodeStatus.Store(&f)
}

var streamNodesDef = sysDef{12340, "pg_catalog", "streamsql_nodes", []Column{
	{Name: "node_id", Type: tText},
	{Name: "address", Type: tText},
	{Name: "role", Type: tText},
	{Name: "state", Type: tText},
	{Name: "runs", Type: tText},
	{Name: "started_at", Type: types.TTimestampTZ},
	{Name: "is_self", Type: tBool},
}}

func init() {
	pgCatalogDefs = append(pgCatalogDefs, streamNodesDef)
	registerRows("pg_catalog.streamsql_nodes", streamNodesRows)
}

func streamNodesRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	p := c.nodeStatus.Load()
	if p == nil {
		return nil
	}
	nodes, err := (*p)()
	if err != nil {
		return err
	}
	for _, n := range nodes {
		var started any
		if n.Started != 0 {
			started = n.Started
		}
		if err := b.add(row{"node_id": n.NodeID, "address": n.Address, "role": n.Role, "state": n.State,
			"runs": n.Runs, "started_at": started, "is_self": n.Self}); err != nil {
			return err
		}
	}
	return nil
}
