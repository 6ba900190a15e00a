package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/storage"
)

// Ingest: a table created WITH (connector = 'kafka', ...) stores what the
// connector reads. Each such table has one background ingest, started at
// CREATE TABLE and at server start, stopped by DROP TABLE and at Close.
//
// The ingest reads with the connector's resumable reader and writes every
// batch it emits to the table as one durable write
// (storage.Table.InsertBatchesMeta) that carries the reader's position
// after the batch as the write's metadata. Rows and position are thus
// committed together: after a crash the table's Meta is exactly the
// position after the rows it holds, and the ingest resumes there, so each
// message is stored once (docs/contributing/storage.md, "Write metadata").
// The table's views see the writes as any INSERT. A batch with no rows
// (every message of it bad) writes nothing; its messages are read again,
// and skipped again, after a restart.

// ingestRetry is the pause before an ingest that failed starts again
// (a write that failed: a full disk; a position the input no longer has).
var ingestRetry = time.Second

// ingests are the running ingests by table OID. Safe for concurrent use.
type ingests struct {
	mu     sync.Mutex
	m      map[uint32]*ingest
	closed bool
}

// ingest is one table's running ingest.
type ingest struct {
	cancel context.CancelFunc
	done   chan struct{}
	rows   atomic.Int64 // rows written since it started
}

// isConnectorTable reports whether rel is a table that stores what a
// connector reads.
func isConnectorTable(rel *catalog.Relation) bool {
	return rel != nil && rel.Kind == catalog.KindTable && rel.Connector != ""
}

// startIngests starts the ingest of every connector table that has none
// and stops those whose table is gone (dropped, or no longer a connector
// table). Called at Open and after DDL that may create or drop tables.
func (e *Engine) startIngests() {
	want := map[uint32]*catalog.Relation{}
	for _, r := range e.cat.Relations() {
		if isConnectorTable(r) {
			want[r.OID] = r
		}
	}
	e.ingests.mu.Lock()
	if e.ingests.closed {
		e.ingests.mu.Unlock()
		return
	}
	if e.ingests.m == nil {
		e.ingests.m = map[uint32]*ingest{}
	}
	var stop []*ingest
	for oid, in := range e.ingests.m {
		if want[oid] == nil {
			stop = append(stop, in)
			delete(e.ingests.m, oid)
		}
	}
	for oid := range want {
		if e.ingests.m[oid] != nil {
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		in := &ingest{cancel: cancel, done: make(chan struct{})}
		e.ingests.m[oid] = in
		go e.runIngest(ctx, oid, in)
	}
	e.ingests.mu.Unlock()
	for _, in := range stop {
		in.cancel()
		<-in.done
	}
}

// stopIngests stops every ingest for good (Close).
func (e *Engine) stopIngests() {
	e.ingests.mu.Lock()
	e.ingests.closed = true
	m := e.ingests.m
	e.ingests.m = nil
	e.ingests.mu.Unlock()
	for _, in := range m {
		in.cancel()
	}
	for _, in := range m {
		<-in.done
	}
}

// runIngest runs a table's ingest until ctx is canceled or the table is
// gone, starting again (from the table's committed position) after a
// failure.
func (e *Engine) runIngest(ctx context.Context, oid uint32, in *ingest) {
	defer close(in.done)
	for {
		err := e.ingestOnce(ctx, oid, in)
		if ctx.Err() != nil {
			return
		}
		rel := e.cat.Relation(oid)
		if !isConnectorTable(rel) || e.cat.Table(oid) == nil {
			return // dropped: DDL stops the ingest too
		}
		e.cfg.Logf("table %q: ingest failed, starting again from its last committed position in %v: %v", rel.Name, ingestRetry, err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(ingestRetry):
		}
	}
}

// ingestOnce reads from the table's committed position and writes until
// ctx is canceled or an error.
func (e *Engine) ingestOnce(ctx context.Context, oid uint32, in *ingest) error {
	rel := e.cat.Relation(oid)
	tbl := e.cat.Table(oid)
	if !isConnectorTable(rel) || tbl == nil {
		return errors.New("the table was dropped")
	}
	src, err := e.openConnector(rel)
	if err != nil {
		return err
	}
	var bad atomic.Int64
	onError := func(err error) {
		if n := bad.Add(1); n <= 10 || n%1000 == 0 {
			e.cfg.Logf("table %q: skipped a message (%d so far): %v", rel.Name, n, err)
		}
	}
	r, err := connector.NewReaderAt(src, tbl.Meta(), connector.ReaderOptions{Errors: onError})
	if err != nil {
		return err
	}
	pos, ok := r.(connector.Positioner)
	if !ok {
		return fmt.Errorf("the %s connector's reader reports no position", rel.Connector)
	}
	if rep, ok := r.(connector.Reporter); ok {
		defer e.readers.add(&sourceReader{job: oid, source: oid, rep: rep})()
	}
	return r.Run(ctx, func(b arrow.RecordBatch) error {
		n, err := tbl.InsertBatchesMeta(ctx, []arrow.RecordBatch{b}, pos.Position())
		if err != nil {
			if errors.Is(err, context.Canceled) || ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("write to table %q: %w", rel.Name, err)
		}
		in.rows.Add(n)
		return nil
	})
}

// ingestTable is the storage table an ingest writes, for tests.
func (e *Engine) ingestTable(oid uint32) *storage.Table { return e.cat.Table(oid) }
