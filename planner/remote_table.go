package planner

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
)

// RemoteTables is implemented by Streams whose tables may keep their
// rows on another server: a cluster's worker reads a table from the
// coordinator (engine/cluster_tables.go). Safe for concurrent use.
type RemoteTables interface {
	// RemoteTable says whether table oid's rows are read elsewhere.
	RemoteTable(oid uint32) bool
	// TableRows reads them, when the plan is opened.
	TableRows(oid uint32) ([]arrow.RecordBatch, error)
}

// remoteTable binds a batch read of a table whose rows live on another
// server as a function scan over them, read when the plan is opened;
// ok false when its rows are here.
func (b *binder) remoteTable(rel *catalog.Relation) (lnode, bool) {
	if b.env == nil {
		return nil, false
	}
	rt, ok := b.env.Streams.(RemoteTables)
	if !ok || !rt.RemoteTable(rel.OID) {
		return nil, false
	}
	ids := make([]int, len(rel.Columns))
	for i, c := range rel.Columns {
		ids[i] = b.newCol(c.Name, rel.Name, c.Type)
	}
	oid := rel.OID
	produce := func(*exec.Context) ([]arrowBatch, error) { return rt.TableRows(oid) }
	return &lFunc{name: rel.Name, scan: "Seq Scan", ids: ids, produce: func([]expr.Expr) func(*exec.Context) ([]arrowBatch, error) {
		return produce
	}}, true
}
