package pgcdc

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/connector/internal/position"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// snapshotBatch is how many rows of the initial snapshot go in one batch.
const snapshotBatch = 16384

// ReaderOptions are a reader's settings from the runtime.
type ReaderOptions struct {
	// Errors, if not nil, is called on the Run goroutine for each change
	// skipped because a value could not be read as its column's type.
	Errors func(err error)
}

// Reader reads one postgres-cdc source: the initial snapshot when it has
// no position, then the replication stream. Run, Seek and Position belong
// to one goroutine; Status is safe from any.
type Reader struct {
	src  *Source
	opts ReaderOptions

	fresh bool   // no streaming position: snapshot first
	lsn   uint64 // end LSN of the last transaction taken (start point when none)
	pos   []byte // position after the last emitted batch

	mu     sync.Mutex
	status Status
}

// Status is a reader's progress (streamsql_sources).
type Status struct {
	State     string // connecting, snapshot, streaming, failed
	LastError string
	// Confirmed is the LSN confirmed to PostgreSQL (held by the table);
	// WALEnd is the server's WAL end last heard of.
	Confirmed, WALEnd uint64
	Rows, BadRows     int64
}

// NewReader returns a reader that starts with a snapshot.
func (s *Source) NewReader(o ReaderOptions) *Reader {
	return &Reader{src: s, opts: o, fresh: true, status: Status{State: "starting"}}
}

// NeedsSnapshot reports whether a reader at pos (nil: none) starts with a
// fresh snapshot, so that whatever the table holds must first be removed
// (a snapshot cut short by a crash is taken again from the start).
func NeedsSnapshot(pos []byte) bool {
	if len(pos) == 0 {
		return true
	}
	v, err := position.Decode(pos, position.PgCDCV1, 2, "postgres-cdc")
	return err == nil && v[1] == 0
}

// Seek sets where Run starts: a position a reader of an equal source
// reported (nil: the start). XX001 when malformed.
func (r *Reader) Seek(pos []byte) error {
	if len(pos) == 0 {
		r.fresh, r.lsn, r.pos = true, 0, nil
		return nil
	}
	v, err := position.Decode(pos, position.PgCDCV1, 2, "postgres-cdc")
	if err != nil {
		return err
	}
	r.fresh = v[1] == 0
	r.lsn = v[0]
	r.pos = append([]byte(nil), pos...)
	return nil
}

// Position implements connector.Positioner.
func (r *Reader) Position() []byte { return append([]byte(nil), r.pos...) }

// Status returns the reader's progress.
func (r *Reader) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

func (r *Reader) update(f func(st *Status)) {
	r.mu.Lock()
	f(&r.status)
	r.mu.Unlock()
}

func (r *Reader) setState(s string) { r.update(func(st *Status) { st.State = s }) }

// fatal records err as a condition retrying cannot cure (upstream DDL, a
// dropped slot): the reader says so in its status and waits for ctx (the
// table being dropped, or the server stopping) rather than spin.
func (r *Reader) fatal(ctx context.Context, err error) error {
	r.update(func(st *Status) { st.State, st.LastError = "failed", err.Error() })
	<-ctx.Done()
	return ctx.Err()
}

// retryable records err as the last error and returns it (the ingest
// starts the reader again from the table's position).
func (r *Reader) retryable(err error) error {
	r.update(func(st *Status) { st.State, st.LastError = "retrying", err.Error() })
	return err
}

// Run reads until ctx is canceled or an error, emitting whole upstream
// transactions (see the package comment).
func (r *Reader) Run(ctx context.Context, emit func(arrow.RecordBatch) error) error {
	r.setState("connecting")
	ctl, err := r.src.connect(ctx, false)
	if err != nil {
		return r.retryable(err)
	}
	defer ctl.Close(context.Background())
	t, err := r.src.describe(ctx, ctl)
	if err != nil {
		return r.retryable(err)
	}
	if _, err := r.src.match(t); err != nil {
		return r.fatal(ctx, pgerr.Wrap(err, pgerr.ObjectNotInPrerequisiteState, "upstream table %s changed: %v", r.src.cfg.qualified(), err))
	}
	if err := r.src.ensurePublication(ctx, ctl); err != nil {
		return r.retryable(err)
	}
	repl, err := r.src.connect(ctx, true)
	if err != nil {
		return r.retryable(err)
	}
	defer repl.Close(context.Background())
	slot := r.src.cfg.Slot
	if r.fresh {
		// The slot, if any, is left by a snapshot cut short: its exported
		// snapshot is gone with the connection that made it.
		if _, err := query(ctx, ctl, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = "+quoteLit(slot)); err != nil {
			return r.retryable(fmt.Errorf("drop the unfinished slot %q: %w", slot, err))
		}
		res, err := pglogrepl.CreateReplicationSlot(ctx, repl, slot, "pgoutput",
			pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
		if err != nil {
			return r.retryable(upstreamError(err))
		}
		cp, err := pglogrepl.ParseLSN(res.ConsistentPoint)
		if err != nil {
			return r.retryable(fmt.Errorf("slot %q: consistent point %q: %w", slot, res.ConsistentPoint, err))
		}
		r.lsn = uint64(cp)
		if err := r.snapshot(ctx, ctl, res.SnapshotName, emit); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return r.retryable(err)
		}
		r.fresh = false
	} else {
		rows, err := query(ctx, ctl, "SELECT database FROM pg_replication_slots WHERE slot_name = "+quoteLit(slot))
		if err != nil {
			return r.retryable(err)
		}
		if len(rows) == 0 || rows[0][0] != r.src.cfg.Database {
			return r.fatal(ctx, pgerr.New(pgerr.ObjectNotInPrerequisiteState,
				"replication slot %q no longer exists in database %q upstream: the changes after LSN %s are lost", slot, r.src.cfg.Database, pglogrepl.LSN(r.lsn)).
				WithHint("Drop this table and create it again to copy the upstream table anew."))
		}
	}
	ctl.Close(context.Background())
	return r.stream(ctx, repl, emit)
}

// snapshot copies the table as of the exported snapshot, in batches; the
// last batch carries the streaming position at the slot's consistent
// point (r.lsn), the others a snapshot position.
func (r *Reader) snapshot(ctx context.Context, conn *pgconn.PgConn, name string, emit func(arrow.RecordBatch) error) error {
	r.setState("snapshot")
	if _, err := query(ctx, conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return err
	}
	if _, err := query(ctx, conn, "SET TRANSACTION SNAPSHOT "+quoteLit(name)); err != nil {
		return err
	}
	cols := r.src.cols
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = quoteIdent(c.Name)
	}
	rr := conn.ExecParams(ctx, "SELECT "+strings.Join(names, ", ")+" FROM "+r.src.cfg.qualified(), nil, nil, nil, nil)
	bb := newBatchBuilder(r.src.out)
	var held arrow.RecordBatch
	emitAt := func(rec arrow.RecordBatch, phase uint64) error {
		r.pos = position.Encode(position.PgCDCV1, r.lsn, phase)
		n := rec.NumRows()
		if err := emit(rec); err != nil {
			return err
		}
		r.update(func(st *Status) { st.Rows += n })
		return nil
	}
	vals := make([]types.Value, len(cols))
	var rows int64
	for rr.NextRow() {
		raw := rr.Values()
		ok := true
		for i, v := range raw {
			if v == nil {
				vals[i] = nil
				continue
			}
			x, err := types.ParseText(string(v), cols[i].Type, nil)
			if err != nil {
				r.skip(fmt.Errorf("snapshot of %s: column %q: %w", r.src.cfg.qualified(), cols[i].Name, err))
				ok = false
				break
			}
			vals[i] = x
		}
		if !ok {
			continue
		}
		if err := bb.add(vals, false, nil, false); err != nil {
			return err
		}
		if rows++; bb.n >= snapshotBatch {
			if held != nil {
				if err := emitAt(held, 0); err != nil {
					rr.Close()
					return err
				}
			}
			held = bb.build()
		}
	}
	if _, err := rr.Close(); err != nil {
		return upstreamError(err)
	}
	if _, err := query(ctx, conn, "COMMIT"); err != nil {
		return err
	}
	if last := bb.build(); last != nil {
		if held != nil {
			if err := emitAt(held, 0); err != nil {
				return err
			}
		}
		held = last
	}
	if held != nil {
		return emitAt(held, 1)
	}
	return nil
}

// skip counts and reports a change that could not be read.
func (r *Reader) skip(err error) {
	r.update(func(st *Status) { st.BadRows++; st.LastError = err.Error() })
	if r.opts.Errors != nil {
		r.opts.Errors(err)
	}
}
