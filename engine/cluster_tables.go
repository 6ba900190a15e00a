package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"iter"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// Tables on a cluster (docs/contributing/cluster.md, "Tables in a
// cluster"). A table's rows live in the coordinator's data directory:
// CREATE TABLE runs there and is logged (every node's catalog has the
// table, with the same OID, empty on the workers); INSERT, UPDATE,
// DELETE, TRUNCATE and COPY FROM run only there (a worker refuses them,
// naming the coordinator's address); a worker's SELECT of a table reads
// its rows from the coordinator, as it reads a view's. At each cluster
// checkpoint the coordinator adds every table's rows to its part
// (ClusterTableImages: an Arrow IPC stream per table, named by its
// content); a node that becomes coordinator replaces its tables' rows by
// the committed checkpoint's (LoadClusterTables) before it accepts
// writes (ClusterTables.WaitTables).

// ClusterTables is implemented by a ClusterNode whose coordinator loads
// the tables of the committed checkpoint when it takes the role: writes
// wait for it.
type ClusterTables interface {
	// WaitTables returns once this coordinator's tables hold the
	// committed checkpoint's rows (or were current already), or fails
	// when ctx ends first or the node is not the coordinator.
	WaitTables(ctx context.Context) error
}

// clusterTablesWait bounds a write's wait for the coordinator's tables.
const clusterTablesWait = 60 * time.Second

// TableImage is one table's rows as an Arrow IPC stream; its Name
// (<oid>.<crc32c>.<size>) changes with its content, so an unchanged
// table is named again, not uploaded again.
type TableImage struct {
	OID uint32
	// LSN is the table's last write the image holds; Exact says no
	// write came while it was taken (else LSN says nothing).
	LSN   uint64
	Exact bool
	Name  string
	Data  []byte
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// clusterTable says whether rel is a table whose rows a cluster keeps:
// a permanent table without a connector.
func clusterTable(rel *catalog.Relation) bool {
	return rel != nil && rel.Kind == catalog.KindTable && !rel.IsTemp() && rel.Connector == ""
}

// clusterTables yields the tables of the cluster (clusterTable) that
// have storage here, with it.
func (e *Engine) clusterTables() iter.Seq2[*catalog.Relation, *storage.Table] {
	return func(yield func(*catalog.Relation, *storage.Table) bool) {
		for _, rel := range e.cat.Relations() {
			if !clusterTable(rel) {
				continue
			}
			if t := e.store.Table(rel.OID); t != nil && !yield(rel, t) {
				return
			}
		}
	}
}

// ClusterTableImages returns an image of every table of the cluster, in
// OID order. prev are the images returned last time: a table whose last
// write is still prev's is given prev's image, not serialized again.
func (e *Engine) ClusterTableImages(prev map[uint32]TableImage) ([]TableImage, error) {
	var out []TableImage
	for rel, t := range e.clusterTables() {
		before := t.LSN()
		if p, ok := prev[rel.OID]; ok && p.Exact && p.LSN == before {
			out = append(out, p)
			continue
		}
		rows, err := liveRows(t.Snapshot())
		if err != nil {
			return nil, err
		}
		cols := make([]types.Column, len(rel.Columns))
		for i, c := range rel.Columns {
			cols[i] = types.Column{Name: c.Name, Type: c.Type}
		}
		var buf bytes.Buffer
		w := ipc.NewWriter(&buf, ipc.WithSchema(types.ArrowSchema(cols)))
		for _, rec := range rows {
			if err := w.Write(rec); err != nil {
				return nil, fmt.Errorf("table %s: arrow ipc: %w", rel.Name, err)
			}
		}
		if err := w.Close(); err != nil {
			return nil, fmt.Errorf("table %s: arrow ipc: %w", rel.Name, err)
		}
		img := TableImage{OID: rel.OID, Data: buf.Bytes()}
		img.Name = fmt.Sprintf("%d.%08x.%d", rel.OID, crc32.Checksum(img.Data, castagnoli), len(img.Data))
		img.LSN, img.Exact = before, t.LSN() == before // no write between the LSN and the snapshot: the image is of that LSN
		out = append(out, img)
	}
	slices.SortFunc(out, func(a, b TableImage) int { return int(a.OID) - int(b.OID) })
	seqs, err := e.clusterSequenceImages() // after the tables: see there
	return append(out, seqs...), err
}

// seqImages is the part of the catalog a cluster's checkpoints of
// sequences need (catalog/sequence.go).
type seqImages interface {
	SeqDurable(oid uint32) (last int64, called bool, err error)
	RestoreSeq(oid uint32, last int64, called bool) error
}

// seqImage is a sequence's image: what a restart would continue from.
type seqImage struct {
	Last   int64 `json:"last"`
	Called bool  `json:"called"`
}

// clusterSequences yields the sequences of the cluster: every permanent
// one (CREATE SEQUENCE, serial and identity columns).
func (e *Engine) clusterSequences() iter.Seq[*catalog.Relation] {
	return func(yield func(*catalog.Relation) bool) {
		for _, rel := range e.cat.Relations() {
			if rel.Kind == catalog.KindSequence && !rel.IsTemp() && !yield(rel) {
				return
			}
		}
	}
}

// clusterSequenceImages returns an image of every sequence of the
// cluster, in OID order: its logged value, which is ahead of every value
// handed out. Taken after the tables' images, so that every row of a
// table image was numbered before its sequence's image was taken: the
// sequence loaded with those rows never hands out their values again.
func (e *Engine) clusterSequenceImages() ([]TableImage, error) {
	sc, ok := e.cat.(seqImages)
	if !ok {
		return nil, nil
	}
	var out []TableImage
	for rel := range e.clusterSequences() {
		last, called, err := sc.SeqDurable(rel.OID)
		if err != nil {
			return nil, err
		}
		data, err := json.Marshal(seqImage{Last: last, Called: called})
		if err != nil {
			return nil, err
		}
		img := TableImage{OID: rel.OID, Data: data}
		img.Name = fmt.Sprintf("%d.%08x.%d", rel.OID, crc32.Checksum(img.Data, castagnoli), len(img.Data))
		out = append(out, img)
	}
	slices.SortFunc(out, func(a, b TableImage) int { return int(a.OID) - int(b.OID) })
	return out, nil
}

// loadClusterSequences sets every sequence of the cluster to its image
// (a sequence without one was created after the checkpoint and is left
// as the replay created it). It reports how many it set.
func (e *Engine) loadClusterSequences(images map[uint32][]byte) (int, error) {
	sc, ok := e.cat.(seqImages)
	if !ok {
		return 0, nil
	}
	n := 0
	for rel := range e.clusterSequences() {
		data, ok := images[rel.OID]
		if !ok {
			continue
		}
		var img seqImage
		if err := json.Unmarshal(data, &img); err != nil {
			return n, fmt.Errorf("sequence %s: its checkpoint image: %w", rel.Name, err)
		}
		if err := sc.RestoreSeq(rel.OID, img.Last, img.Called); err != nil {
			return n, fmt.Errorf("sequence %s: %w", rel.Name, err)
		}
		n++
	}
	return n, nil
}

// LoadClusterTables replaces the rows of every table of the cluster by
// its image in images (by OID; a table without one is emptied: it was
// created after the checkpoint or was empty), and sets every sequence
// that has an image to it. It reports the tables and sequences, and the
// rows, loaded.
func (e *Engine) LoadClusterTables(ctx context.Context, images map[uint32][]byte) (tables int, rows int64, err error) {
	for rel, t := range e.clusterTables() {
		if err := t.Truncate(ctx); err != nil {
			return tables, rows, fmt.Errorf("table %s: %w", rel.Name, err)
		}
		data, ok := images[rel.OID]
		if !ok {
			continue
		}
		r, err := ipc.NewReader(bytes.NewReader(data), ipc.WithAllocator(memory.DefaultAllocator))
		if err != nil {
			return tables, rows, fmt.Errorf("table %s: arrow ipc: %w", rel.Name, err)
		}
		var recs []arrow.RecordBatch
		for r.Next() {
			rec := r.RecordBatch()
			rec.Retain()
			recs = append(recs, rec)
		}
		err = r.Err()
		r.Release()
		if err == nil && len(recs) > 0 {
			var n int64
			n, err = t.InsertBatches(ctx, recs)
			rows += n
		}
		for _, rec := range recs {
			rec.Release()
		}
		if err != nil {
			return tables, rows, fmt.Errorf("table %s: %w", rel.Name, err)
		}
		tables++
	}
	seqs, err := e.loadClusterSequences(images)
	return tables + seqs, rows, err
}

// clusterTableRows reads a table's rows from the coordinator when this
// node is a worker; ok false elsewhere (the rows are here).
func (e *Engine) clusterTableRows(oid uint32) (rows []arrow.RecordBatch, ok bool, err error) {
	rel := e.cat.Relation(oid)
	if !clusterTable(rel) {
		return nil, false, nil
	}
	return e.clusterRemoteRows(rel, "table") // cluster_run.go
}

// RemoteTable implements planner.RemoteTables: on a worker, a table's
// rows are the coordinator's.
func (f flowStreams) RemoteTable(oid uint32) bool {
	c := f.e.cfg.Cluster
	return c != nil && !c.IsCoordinator() && clusterTable(f.e.cat.Relation(oid))
}

// TableRows implements planner.RemoteTables.
func (f flowStreams) TableRows(oid uint32) ([]arrow.RecordBatch, error) {
	rows, ok, err := f.e.clusterTableRows(oid)
	if !ok && err == nil {
		return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "table %d is no longer read from the coordinator: run the statement again", oid)
	}
	return rows, err
}

// clusterTableWrite says whether stmt writes a table's rows (INSERT,
// UPDATE, DELETE, TRUNCATE, COPY FROM, or a SELECT whose WITH does),
// and names it.
func clusterTableWrite(stmt sql.Statement) (string, bool) {
	if stmt.AST == nil {
		return "", false
	}
	switch n := stmt.AST.Node.(type) {
	case *pg.Node_InsertStmt:
		return "INSERT", true
	case *pg.Node_UpdateStmt:
		return "UPDATE", true
	case *pg.Node_DeleteStmt:
		return "DELETE", true
	case *pg.Node_TruncateStmt:
		return "TRUNCATE", true
	case *pg.Node_CopyStmt:
		return "COPY FROM", n.CopyStmt.IsFrom
	case *pg.Node_SelectStmt:
		if w := n.SelectStmt.WithClause; w != nil {
			for _, c := range w.Ctes {
				if cte := c.GetCommonTableExpr(); cte != nil && cte.Ctequery != nil && cte.Ctequery.GetSelectStmt() == nil {
					return "a data-modifying WITH", true
				}
			}
		}
	}
	return "", false
}

// clusterTableDef refuses a CREATE TABLE a cluster cannot keep: a
// temporary table (its OIDs would differ between the nodes' catalogs),
// a table with a connector (it would ingest on every node), partitions
// and inheritance. Serial and identity columns are kept: their sequences
// join the checkpoints' images (clusterSequenceImages).
func clusterTableDef(stmt sql.Statement, c *pg.CreateStmt) error {
	if c.Relation != nil && c.Relation.Relpersistence == "t" {
		return notInCluster("CREATE TEMPORARY TABLE")
	}
	if stmt.Ext != nil && stmt.Ext.TableConnector != nil {
		return notInCluster("CREATE TABLE with a connector")
	}
	if len(c.InhRelations) > 0 || c.Partspec != nil || c.Partbound != nil {
		return notInCluster("CREATE TABLE with inheritance or partitions")
	}
	return nil
}

// clusterCheck refuses what a cluster node cannot run (clusterRefusal);
// a worker's write of a table is refused naming the coordinator's
// address, and a coordinator's waits until its tables are loaded.
func (s *Session) clusterCheck(ctx context.Context, stmt sql.Statement) error {
	c := s.eng.cfg.Cluster
	coord := c.IsCoordinator()
	what, write := clusterTableWrite(stmt)
	if !write {
		return clusterRefusal(stmt, coord)
	}
	if !coord {
		addr := "the node SHOW NODES lists as coordinator"
		lctx, cancel := context.WithTimeout(ctx, clusterListTimeout)
		nodes, err := c.Nodes(lctx)
		cancel()
		if err == nil {
			for _, n := range nodes {
				if n.Role == "coordinator" {
					addr = "the coordinator at " + n.Address
				}
			}
		}
		return pgerr.Unsupported("%s runs only on the cluster's coordinator, where tables' rows live: connect to %s (see docs/cluster.md)", what, addr)
	}
	if ct, ok := c.(ClusterTables); ok {
		wctx, cancel := context.WithTimeout(ctx, clusterTablesWait)
		defer cancel()
		if err := ct.WaitTables(wctx); err != nil {
			return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "%s: this coordinator's tables are not loaded from the cluster's checkpoint yet: %v", what, err)
		}
	}
	return nil
}
