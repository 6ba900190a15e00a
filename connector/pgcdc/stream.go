package pgcdc

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/streamsql/streamsql/connector/internal/position"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Streaming settings: a batch is emitted when it has maxBatch rows or
// flushDelay after its first transaction, whichever comes first (at
// transaction boundaries only); the reader reports its confirmed LSN to
// PostgreSQL at least every statusInterval.
var (
	maxBatch       = 65536
	flushDelay     = 20 * time.Millisecond
	statusInterval = 10 * time.Second
)

// relation is what the reader knows of an upstream relation from its
// Relation message.
type relation struct {
	ours bool
	cols []int // upstream column -> table column, -1 when not replicated
	key  []int // table columns of the key
}

// streamState is the streaming loop's state, owned by Run's goroutine.
type streamState struct {
	r       *Reader
	conn    *pgconn.PgConn
	bb      *batchBuilder
	rels    map[uint32]*relation
	inTx    bool
	skipTx  bool
	txLSN   uint64 // end LSN of the last complete transaction in bb
	flushAt time.Time
	acked   uint64
	vals    []types.Value
	oldVals []types.Value
}

// stream starts replication at r.lsn and applies changes until ctx is
// canceled or an error.
func (r *Reader) stream(ctx context.Context, conn *pgconn.PgConn, emit func(arrow.RecordBatch) error) error {
	cfg := r.src.cfg
	err := pglogrepl.StartReplication(ctx, conn, cfg.Slot, pglogrepl.LSN(r.lsn), pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names " + quoteLit(cfg.Publication)},
	})
	if err != nil {
		return r.retryable(upstreamError(err))
	}
	r.update(func(st *Status) { st.State, st.LastError, st.Confirmed = "streaming", "", r.lsn })
	s := &streamState{r: r, conn: conn, bb: newBatchBuilder(r.src.out), rels: map[uint32]*relation{},
		acked: r.lsn, vals: make([]types.Value, len(r.src.cols)), oldVals: make([]types.Value, len(r.src.cols))}
	nextStatus := time.Now().Add(statusInterval)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		now := time.Now()
		if s.bb.n > 0 && !s.inTx && (s.bb.n >= maxBatch || !now.Before(s.flushAt)) {
			if err := s.flush(ctx, emit); err != nil {
				return err
			}
		}
		if !now.Before(nextStatus) {
			if err := s.sendStatus(ctx); err != nil {
				return r.retryable(err)
			}
			nextStatus = now.Add(statusInterval)
		}
		deadline := nextStatus
		if s.bb.n > 0 && !s.inTx && s.flushAt.Before(deadline) {
			deadline = s.flushAt
		}
		rctx, cancel := context.WithDeadline(ctx, deadline)
		msg, err := conn.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if pgconn.Timeout(err) {
				continue
			}
			return r.retryable(upstreamError(err))
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			return r.retryable(upstreamError(pgconn.ErrorResponseToPgError(m)))
		case *pgproto3.CopyData:
			if err := s.copyData(ctx, m.Data); err != nil {
				if pe := pgerr.As(err); pe != nil && pe.Code == pgerr.ObjectNotInPrerequisiteState {
					return r.fatal(ctx, err)
				}
				return r.retryable(err)
			}
		}
	}
}

// copyData handles one message of the replication stream.
func (s *streamState) copyData(ctx context.Context, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return err
		}
		s.r.update(func(st *Status) { st.WALEnd = max(st.WALEnd, uint64(ka.ServerWALEnd)) })
		// A keepalive's LSN is how far the walsender has decoded and sent
		// (sentPtr): with no change of ours pending, every transaction
		// before it is in the table or had nothing for it, so it can be
		// confirmed; the slot then does not keep WAL written to other
		// tables.
		if s.bb.n == 0 && !s.inTx && uint64(ka.ServerWALEnd) > s.acked {
			s.acked = uint64(ka.ServerWALEnd)
			s.r.update(func(st *Status) { st.Confirmed = s.acked })
		}
		if ka.ReplyRequested {
			return s.sendStatus(ctx)
		}
	case pglogrepl.XLogDataByteID:
		x, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return err
		}
		s.r.update(func(st *Status) { st.WALEnd = max(st.WALEnd, uint64(x.ServerWALEnd)) })
		msg, err := pglogrepl.Parse(x.WALData)
		if err != nil {
			return fmt.Errorf("decode pgoutput message: %w", err)
		}
		return s.logical(msg)
	}
	return nil
}

// logical applies one pgoutput message.
func (s *streamState) logical(msg pglogrepl.Message) error {
	cfg := s.r.src.cfg
	switch m := msg.(type) {
	case *pglogrepl.RelationMessage:
		if m.Namespace != cfg.Schema || m.RelationName != cfg.Table {
			s.rels[m.RelationID] = &relation{}
			return nil
		}
		rel, err := s.r.src.relation(m)
		if err != nil {
			return err
		}
		s.rels[m.RelationID] = rel
	case *pglogrepl.BeginMessage:
		s.inTx = true
		s.skipTx = uint64(m.FinalLSN) < s.r.lsn // already in the table
	case *pglogrepl.CommitMessage:
		s.inTx = false
		if !s.skipTx && uint64(m.TransactionEndLSN) > s.r.lsn {
			s.r.lsn = uint64(m.TransactionEndLSN)
			s.txLSN = s.r.lsn
		}
	case *pglogrepl.InsertMessage:
		rel, err := s.ours(m.RelationID)
		if rel == nil || err != nil {
			return err
		}
		if !s.decode(rel, m.Tuple, s.vals, nil) {
			return nil
		}
		return s.add(s.vals, false, nil, false)
	case *pglogrepl.UpdateMessage:
		rel, err := s.ours(m.RelationID)
		if rel == nil || err != nil {
			return err
		}
		var unchanged []int
		if !s.decode(rel, m.NewTuple, s.vals, &unchanged) {
			return nil
		}
		if m.OldTuple != nil {
			if !s.decode(rel, m.OldTuple, s.oldVals, nil) {
				return nil
			}
			// REPLICA IDENTITY FULL sends the old values of unchanged
			// TOASTed columns.
			kept := unchanged[:0]
			for _, c := range unchanged {
				if s.oldVals[c] != nil {
					s.vals[c] = s.oldVals[c]
				} else {
					kept = append(kept, c)
				}
			}
			unchanged = kept
			if !s.sameKey(rel.key) {
				// The key changed: delete the old one; the unchanged
				// columns keep the old row's values.
				if err := s.add(s.oldVals, true, nil, false); err != nil {
					return err
				}
				return s.add(s.vals, false, unchanged, true)
			}
		}
		return s.add(s.vals, false, unchanged, false)
	case *pglogrepl.DeleteMessage:
		rel, err := s.ours(m.RelationID)
		if rel == nil || err != nil {
			return err
		}
		if m.OldTuple == nil || !s.decode(rel, m.OldTuple, s.vals, nil) {
			return nil
		}
		return s.add(s.vals, true, nil, false)
	case *pglogrepl.TruncateMessage:
		for _, id := range m.RelationIDs {
			if rel := s.rels[id]; rel != nil && rel.ours {
				return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "upstream table %s was truncated; a postgres-cdc table does not follow TRUNCATE", cfg.qualified()).
					WithHint("Drop this table and create it again to copy the upstream table anew.")
			}
		}
	}
	return nil
}

// ours returns the relation of a change when it is the replicated table
// (nil for another table of the publication).
func (s *streamState) ours(id uint32) (*relation, error) {
	rel := s.rels[id]
	if rel == nil {
		return nil, fmt.Errorf("pgoutput: a change of relation %d before its Relation message", id)
	}
	if !rel.ours || s.skipTx {
		return nil, nil
	}
	return rel, nil
}

// add appends a change to the batch under way.
func (s *streamState) add(vals []types.Value, del bool, unchanged []int, fromOld bool) error {
	if s.bb.n == 0 {
		s.flushAt = time.Now().Add(flushDelay)
	}
	return s.bb.add(vals, del, unchanged, fromOld)
}

// sameKey reports whether the new and old values agree on the key.
func (s *streamState) sameKey(key []int) bool {
	for _, k := range key {
		a, b := s.vals[k], s.oldVals[k]
		if a == nil || b == nil {
			if a != nil || b != nil {
				return false
			}
			continue
		}
		if types.Compare(a, b, s.r.src.cols[k].Type) != 0 {
			return false
		}
	}
	return true
}

// decode reads a tuple into vals (table columns; those not sent are
// NULL). TOAST-unchanged columns are listed in unchanged when it is not
// nil. A value that does not parse is skipped (counted): false.
func (s *streamState) decode(rel *relation, t *pglogrepl.TupleData, vals []types.Value, unchanged *[]int) bool {
	clear(vals)
	cols := s.r.src.cols
	for j, c := range t.Columns {
		if j >= len(rel.cols) || rel.cols[j] < 0 {
			continue
		}
		i := rel.cols[j]
		switch c.DataType {
		case pglogrepl.TupleDataTypeNull:
		case pglogrepl.TupleDataTypeToast:
			if unchanged != nil {
				*unchanged = append(*unchanged, i)
			}
		case pglogrepl.TupleDataTypeText:
			v, err := types.ParseText(string(c.Data), cols[i].Type, nil)
			if err != nil {
				s.r.skip(fmt.Errorf("change of %s: column %q: %w", s.r.src.cfg.qualified(), cols[i].Name, err))
				return false
			}
			vals[i] = v
		default:
			s.r.skip(fmt.Errorf("change of %s: column %q in an unexpected format %q", s.r.src.cfg.qualified(), cols[i].Name, c.DataType))
			return false
		}
	}
	return true
}

// flush emits the complete transactions gathered and confirms their end
// LSN to PostgreSQL once the table holds them.
func (s *streamState) flush(ctx context.Context, emit func(arrow.RecordBatch) error) error {
	rec := s.bb.build()
	if rec == nil {
		return nil
	}
	n := rec.NumRows()
	s.r.pos = position.Encode(position.PgCDCV1, s.txLSN, 1)
	if err := emit(rec); err != nil {
		return err
	}
	s.acked = s.txLSN
	s.r.update(func(st *Status) { st.Rows += n; st.Confirmed = s.acked })
	if err := s.sendStatus(ctx); err != nil {
		return s.r.retryable(err)
	}
	return nil
}

// sendStatus confirms the LSN the table holds.
func (s *streamState) sendStatus(ctx context.Context) error {
	err := pglogrepl.SendStandbyStatusUpdate(ctx, s.conn, pglogrepl.StandbyStatusUpdate{WALWritePosition: pglogrepl.LSN(s.acked)})
	if err != nil {
		return upstreamError(err)
	}
	return nil
}

// relation maps a Relation message of the replicated table to the
// table's columns: each must still be there with a compatible type, else
// the upstream DDL is an error (55000) naming what changed.
func (s *Source) relation(m *pglogrepl.RelationMessage) (*relation, error) {
	rel := &relation{ours: true, cols: make([]int, len(m.Columns))}
	for j := range rel.cols {
		rel.cols[j] = -1
	}
	ddl := func(format string, args ...any) error {
		return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "upstream DDL on %s: "+format, append([]any{s.cfg.qualified()}, args...)...).
			WithHint("Drop this table and create it again with the new columns.")
	}
	for i, c := range s.cols {
		j := slices.IndexFunc(m.Columns, func(u *pglogrepl.RelationMessageColumn) bool { return u.Name == c.Name })
		if j < 0 {
			return nil, ddl("column %q is gone (dropped or renamed)", c.Name)
		}
		u, ok := types.FromOID(m.Columns[j].DataType)
		if !ok && c.Type.Kind == types.Text {
			ok, u = true, c.Type // a type streamsql does not have, read as text
		}
		if !ok || !compatible(c.Type, u) {
			return nil, ddl("column %q changed type (type OID %d), declared %s", c.Name, m.Columns[j].DataType, c.Type)
		}
		rel.cols[j] = i
		if m.Columns[j].Flags&1 != 0 {
			rel.key = append(rel.key, i)
		}
	}
	return rel, nil
}
