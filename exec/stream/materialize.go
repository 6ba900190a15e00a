package stream

import (
	"strings"

	"github.com/streamsql/streamsql/types"
)

// Materialize is the plan of a materialized view's state: it consumes a
// changelog and keeps the view's current rows, readable as a snapshot as of
// the last completed epoch (see View). Like every Node it is immutable and
// safe to share; each NewView (or Start) makes independent running state.
type Materialize struct {
	Input Node
	// Key are the stream key columns of Input: the columns that identify a
	// row, so a retraction names the row it removes by them. Empty means the
	// whole row is the key and equal rows are counted (a multiset).
	Key []int
	// Cols describe the rows (those of Input).
	Cols []types.Column
	// OnEpoch, if set, runs on the view's goroutine once per completed epoch,
	// after the epoch's snapshot is published, with the epoch's net changes
	// (nil when the epoch changed nothing). Changes within the epoch that
	// cancel out (an insert then a delete of the same row) are absent; a
	// keyed row whose values changed arrives as an update pair. The chunk is
	// immutable and may be kept. OnEpoch must not block for long: the whole
	// graph waits for it.
	OnEpoch func(epoch uint64, changes *Chunk)
}

// Columns implements Node.
func (m *Materialize) Columns() []types.Column { return m.Cols }

// Inputs implements Node.
func (m *Materialize) Inputs() []Node { return []Node{m.Input} }

// Explain implements Node.
func (m *Materialize) Explain() string {
	if len(m.Key) == 0 {
		return "StreamMaterialize: key (whole row)"
	}
	names := make([]string, len(m.Key))
	for i, k := range m.Key {
		names[i] = m.Cols[k].Name
	}
	return "StreamMaterialize: key (" + strings.Join(names, ", ") + ")"
}

// Start implements Node for a Materialize inside a graph: it runs a private
// View and sends, at each barrier, the epoch's net changes (one chunk, if
// any), then the epoch's highest watermark per column, then the barrier.
// Readers that need snapshots use NewView and View.Run instead.
func (m *Materialize) Start(env *Env, inputs []<-chan Message) <-chan Message {
	out := make(chan Message, ChannelSize)
	v := m.NewView()
	go func() {
		defer close(out)
		if err := env.restore(m, viewState{v}); err != nil {
			env.Fail(err)
			return
		}
		_ = v.run(env, inputs[0], out) // failures already went to env.Fail
	}()
	return out
}
