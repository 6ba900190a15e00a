package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector"
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
	if isCDCTable(rel) {
		return e.ingestCDC(ctx, oid, rel, tbl, src) // ingest_cdc.go
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
	keyless := &keylessReporter{} // messages the reader decoded but the table could not place
	if rep, ok := r.(connector.Reporter); ok {
		keyless.rep = rep
		defer e.readers.add(&sourceReader{job: oid, source: oid, rep: keyless})()
	}
	part, _ := r.(connector.Partitioned)
	upsert := strings.HasPrefix(strings.ToUpper(rel.Format), "UPSERT") || strings.HasPrefix(strings.ToUpper(rel.Format), "DEBEZIUM")
	return r.Run(ctx, func(b arrow.RecordBatch) error {
		var err error
		if upsert {
			var ups, dels arrow.RecordBatch
			var bad []int
			if ups, dels, bad, err = upsertBatch(b, rel); err != nil {
				return err
			}
			for range bad {
				onError(fmt.Errorf("table %q: a message without a value for every primary key column was skipped", rel.Name))
			}
			if len(bad) > 0 && part != nil {
				keyless.add(part.Partition(), int64(len(bad)))
			}
			_, err = tbl.UpsertMeta(ctx, ups, dels, pos.Position())
		} else {
			_, err = tbl.InsertBatchesMeta(ctx, []arrow.RecordBatch{b}, pos.Position())
		}
		if err != nil {
			if errors.Is(err, context.Canceled) || ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("write to table %q: %w", rel.Name, err)
		}
		return nil
	})
}

// keylessReporter is a reader's Reporter that also counts, as bad rows
// rather than rows, the messages without a key a FORMAT UPSERT table
// skipped. Safe for concurrent use.
type keylessReporter struct {
	rep connector.Reporter
	mu  sync.Mutex
	bad map[int32]int64
}

func (k *keylessReporter) add(p int32, n int64) {
	k.mu.Lock()
	if k.bad == nil {
		k.bad = map[int32]int64{}
	}
	k.bad[p] += n
	k.mu.Unlock()
}

// Report implements connector.Reporter.
func (k *keylessReporter) Report() connector.Report {
	r := k.rep.Report()
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := range r.Partitions {
		if n := k.bad[r.Partitions[i].Partition]; n > 0 {
			r.Partitions[i].Rows -= n
			r.Partitions[i].BadRows += n
		}
	}
	return r
}
