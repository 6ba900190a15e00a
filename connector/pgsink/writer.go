package pgsink

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Change is one row change: Del with the key's values, or an upsert
// (insert when appending) with every column's; values are PostgreSQL
// text input, nil for NULL.
type Change struct {
	Del  bool
	Vals [][]byte
}

// Epoch is an epoch's changes in order.
type Epoch struct {
	Epoch   uint64
	Changes []Change
}

// Writer writes one sink instance; owned by the sink job's goroutine,
// Status safe from any.
type Writer struct {
	s       *Sink
	conn    *pgconn.PgConn
	open    []Change // the epochs since the last PreCommit
	pending []Epoch  // pre-committed, not yet committed

	mu sync.Mutex
	st sink.Status
}

// NewWriter implements sink.Sink.
func (s *Sink) NewWriter(ctx context.Context, _ int) (sink.Writer, error) {
	return s.newWriter(ctx)
}

func (s *Sink) newWriter(ctx context.Context) (*Writer, error) {
	conn, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.prepare(ctx, conn); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	if _, err := conn.Prepare(ctx, "ins", s.insert, nil); err != nil {
		conn.Close(context.Background())
		return nil, targetError(err)
	}
	if s.del != "" {
		if _, err := conn.Prepare(ctx, "del", s.del, nil); err != nil {
			conn.Close(context.Background())
			return nil, targetError(err)
		}
	}
	return &Writer{s: s, conn: conn, st: sink.Status{Status: "running"}}, nil
}

// Recover implements sink.Sink: the pending epochs are applied, each
// unless the progress row says it already was.
func (s *Sink) Recover(ctx context.Context, _ int, _ uint64, pending []byte) (sink.Writer, error) {
	w, err := s.newWriter(ctx)
	if err != nil {
		return nil, err
	}
	if len(pending) > 0 {
		var eps []Epoch
		if err := gob.NewDecoder(bytes.NewReader(pending)).Decode(&eps); err != nil {
			w.Close()
			return nil, pgerr.New(pgerr.DataCorrupted, "postgres sink %q: unreadable pending epochs: %v", s.spec.Name, err)
		}
		for _, ep := range eps {
			if err := w.apply(ctx, ep); err != nil {
				w.Close()
				return nil, err
			}
		}
	}
	return w, nil
}

// Write implements sink.Writer.
func (w *Writer) Write(_ context.Context, rec arrow.RecordBatch, ops []stream.Op) error {
	cols := w.s.spec.Cols
	n := int(rec.NumRows())
	for i := 0; i < n; i++ {
		op := stream.Insert
		if ops != nil {
			op = ops[i]
		}
		switch op {
		case stream.Insert, stream.UpdateAfter:
			vals := make([][]byte, len(cols))
			for c := range cols {
				vals[c] = text(types.ValueAt(rec.Column(c), i, cols[c].Type), cols[c].Type)
			}
			w.open = append(w.open, Change{Vals: vals})
		case stream.Delete, stream.UpdateBefore:
			if w.s.key == nil {
				return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "postgres sink %q: the query retracted a row but the sink has no key", w.s.spec.Name)
			}
			vals := make([][]byte, len(w.s.key))
			for k, c := range w.s.key {
				vals[k] = text(types.ValueAt(rec.Column(c), i, cols[c].Type), cols[c].Type)
			}
			if op == stream.UpdateBefore && i+1 < n && ops[i+1] == stream.UpdateAfter && w.sameKey(rec, i, vals) {
				continue // the upsert that follows replaces the row
			}
			w.open = append(w.open, Change{Del: true, Vals: vals})
		}
	}
	return nil
}

// sameKey reports whether row i+1 of rec has the key vals.
func (w *Writer) sameKey(rec arrow.RecordBatch, i int, vals [][]byte) bool {
	cols := w.s.spec.Cols
	for k, c := range w.s.key {
		if !bytes.Equal(text(types.ValueAt(rec.Column(c), i+1, cols[c].Type), cols[c].Type), vals[k]) {
			return false
		}
	}
	return true
}

// Barrier implements sink.Writer: the epoch's changes go with the next
// pre-committed one.
func (w *Writer) Barrier(context.Context, uint64) error { return nil }

// PreCommit implements sink.Writer: the pending bytes are every epoch not
// yet committed, this one included.
func (w *Writer) PreCommit(_ context.Context, epoch uint64) ([]byte, error) {
	w.pending = append(w.pending, Epoch{Epoch: epoch, Changes: w.open})
	w.open = nil
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(w.pending); err != nil {
		return nil, fmt.Errorf("postgres sink: encode pending epochs: %w", err)
	}
	return buf.Bytes(), nil
}

// Commit implements sink.Writer.
func (w *Writer) Commit(ctx context.Context, epoch uint64, _ []byte) error {
	for len(w.pending) > 0 && w.pending[0].Epoch <= epoch {
		if err := w.apply(ctx, w.pending[0]); err != nil {
			return err
		}
		w.pending = w.pending[1:]
	}
	return nil
}

// apply writes an epoch's changes and the progress row in one
// transaction, unless the progress row is at or past the epoch.
func (w *Writer) apply(ctx context.Context, ep Epoch) error {
	id := w.s.sinkID()
	rows, err := query(ctx, w.conn, "BEGIN; SELECT epoch FROM "+w.s.progress+" WHERE sink = "+quoteLit(id)+" FOR UPDATE")
	if err != nil {
		w.fail(err)
		return err
	}
	if len(rows) > 0 {
		done, _ := strconv.ParseUint(rows[0][0], 10, 64)
		if ep.Epoch <= done {
			_, err := query(ctx, w.conn, "ROLLBACK")
			return err
		}
	}
	b := &pgconn.Batch{}
	for _, c := range ep.Changes {
		if c.Del {
			b.ExecPrepared("del", c.Vals, nil, nil)
		} else {
			b.ExecPrepared("ins", c.Vals, nil, nil)
		}
	}
	b.ExecParams("INSERT INTO "+w.s.progress+" (sink, epoch) VALUES ($1, $2) ON CONFLICT (sink) DO UPDATE SET epoch = EXCLUDED.epoch",
		[][]byte{[]byte(id), []byte(strconv.FormatUint(ep.Epoch, 10))}, nil, nil, nil)
	b.ExecParams("COMMIT", nil, nil, nil, nil)
	if _, err := w.conn.ExecBatch(ctx, b).ReadAll(); err != nil {
		query(context.Background(), w.conn, "ROLLBACK")
		err = targetError(err)
		w.fail(err)
		return err
	}
	w.mu.Lock()
	w.st.Rows += int64(len(ep.Changes))
	w.st.CommittedEpoch = ep.Epoch
	w.st.Status, w.st.LastError = "running", ""
	w.mu.Unlock()
	return nil
}

func (w *Writer) fail(err error) {
	w.mu.Lock()
	w.st.Errors++
	w.st.LastError = err.Error()
	w.mu.Unlock()
}

// Status implements sink.Writer.
func (w *Writer) Status() sink.Status {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.st
}

// Close implements sink.Writer.
func (w *Writer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return w.conn.Close(ctx)
}
