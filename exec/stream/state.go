package stream

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// Checkpoints (issue 5; design in docs/contributing/checkpoints.md). An
// operator that keeps state across epochs implements Stateful on its
// running state; at a barrier marked Checkpoint it calls env.snapshot
// before forwarding the barrier, and at Start it calls env.restore before
// reading its first message. The runtime implements Checkpointer and
// writes what operators give it into the checkpoint store.

// StateWriter receives an operator's state as key/value pairs. Keys and
// values are the operator's own encoding; the slices may be reused by the
// caller after the call. A snapshot writes each key at most once (a full
// checkpoint's records are read back as they are, without folding).
type StateWriter interface {
	Put(key, value []byte)
	Delete(key []byte)
	// Reset drops every earlier key of the operator: what follows is the
	// whole state.
	Reset()
}

// StateReader gives back an operator's state at recovery.
type StateReader interface {
	Len() int
	// Range calls fn for each pair in no particular order; the slices must
	// not be modified or kept past the call unless copied.
	Range(fn func(key, value []byte) error) error
}

// Stateful is the running state of an operator that checkpoints.
type Stateful interface {
	// Snapshot writes the state changed since the previous Snapshot, or,
	// when full is set (or nothing was restored or snapshotted before),
	// Reset followed by the whole state.
	Snapshot(w StateWriter, full bool) error
	// Restore loads a checkpoint's state, before the first message.
	Restore(r StateReader) error
}

// Checkpointer is the runtime's side (dataflow implements it per job).
// Its methods are called from operator goroutines concurrently.
type Checkpointer interface {
	// Restored returns the state node n had in the checkpoint its job
	// resumes from, or nil to start empty.
	Restored(n Node) StateReader
	// Snapshot has st write n's state into checkpoint barrier b.
	Snapshot(n Node, b Barrier, st Stateful) error
}

// restore loads n's checkpointed state into st, if the job resumes.
func (e *Env) restore(n Node, st Stateful) error {
	if e.Checkpoints == nil {
		return nil
	}
	r := e.Checkpoints.Restored(n)
	if r == nil {
		return nil
	}
	if err := st.Restore(r); err != nil {
		return fmt.Errorf("restoring %s: %w", n.Explain(), err)
	}
	return nil
}

// snapshot writes st's state when b is a checkpoint barrier.
// Every barrier passes here: it also reports st's size (Env.reportState).
func (e *Env) snapshot(n Node, b Barrier, st Stateful) error {
	e.reportState(st)
	if !b.Checkpoint || e.Checkpoints == nil {
		return nil
	}
	e.mu.Lock()
	if e.ckAt == nil {
		e.ckAt = map[Node]uint64{}
	}
	e.ckAt[n] = b.Epoch
	e.mu.Unlock()
	if err := e.Checkpoints.Snapshot(n, b, st); err != nil {
		return fmt.Errorf("checkpoint of %s: %w", n.Explain(), err)
	}
	return nil
}

// runStateful runs a one-input operator whose state checkpoints: once st
// is restored, each input message goes to handle and the messages it
// returns are sent on in order; at a checkpoint barrier st is snapshotted
// after handle and before anything goes out. startErr (from building the
// state), a restore, handle or snapshot error fails the graph.
func runStateful(env *Env, n Node, st Stateful, startErr error, in <-chan Message, handle func(Message) ([]Message, error)) <-chan Message {
	out := make(chan Message, ChannelSize)
	go func() {
		defer close(out)
		err := startErr
		if err == nil {
			err = env.restore(n, st)
		}
		if err != nil {
			env.Fail(err)
			return
		}
		bc := env.busyClock()
		for {
			bc.stop()
			var m Message
			var ok bool
			select {
			case m, ok = <-in:
			case <-env.Ctx.Done():
				return
			}
			bc.start()
			if !ok {
				return
			}
			msgs, err := handle(m)
			if err == nil && m.Kind == KindBarrier {
				err = env.snapshot(n, m.Barrier, st)
			}
			if err != nil {
				env.Fail(err)
				return
			}
			for _, o := range msgs {
				if !send(env, out, o) {
					return
				}
			}
		}
	}()
	return out
}

// checkpointed is implemented by nodes whose running state checkpoints
// (their state implements Stateful and they call env.snapshot/restore).
type checkpointed interface{ checkpoints() }

// Checkpointable reports whether every operator of the plan rooted at n
// either keeps no state or checkpoints it, so that the plan can resume
// from a checkpoint. Plans with other operators are rebuilt from their
// inputs at a restart.
func Checkpointable(n Node) bool {
	switch n.(type) {
	case *Scan, *Filter, *Project, *Union, checkpointed:
	default:
		return false
	}
	for _, in := range n.Inputs() {
		if !Checkpointable(in) {
			return false
		}
	}
	return true
}

// appendStateRow encodes a row for a checkpoint: per value a uvarint
// (0 for NULL, else 1 + the length of the value's PostgreSQL binary form)
// and that form.
func appendStateRow(dst []byte, row []types.Value, cols []types.Column) ([]byte, error) {
	for i, c := range cols {
		v := row[i]
		if v == nil {
			dst = append(dst, 0)
			continue
		}
		var scratch [64]byte
		b, err := types.AppendBinary(scratch[:0], v, c.Type)
		if err != nil {
			return dst, fmt.Errorf("column %q: %w", c.Name, err)
		}
		dst = binary.AppendUvarint(dst, uint64(len(b))+1)
		dst = append(dst, b...)
	}
	return dst, nil
}

// decodeStateRow decodes a row appendStateRow encoded and returns the rest.
func decodeStateRow(b []byte, cols []types.Column) ([]types.Value, []byte, error) {
	row := make([]types.Value, len(cols))
	for i, c := range cols {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k)+1 {
			return nil, nil, fmt.Errorf("checkpointed row: truncated at column %q", c.Name)
		}
		b = b[k:]
		if n == 0 {
			continue
		}
		v, err := types.ParseBinary(b[:n-1], c.Type)
		if err != nil {
			return nil, nil, fmt.Errorf("checkpointed row: column %q: %w", c.Name, err)
		}
		row[i] = v
		b = b[n-1:]
	}
	return row, b, nil
}

// late hands rows that operator n dropped as late to OnLate, which must be
// set, with the epoch of the last checkpoint n took a snapshot at in this
// Env (an instance of a parallel operator has an Env of its own): rows
// dropped before a checkpoint's barrier are in no replay from it, rows
// dropped after it are dropped again by a replay from it.
func (e *Env) late(n Node, rows arrow.RecordBatch) {
	e.mu.Lock()
	after := e.ckAt[n]
	e.mu.Unlock()
	e.OnLate(rows, after)
}
