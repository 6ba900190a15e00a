package stream

import (
	"fmt"

	"github.com/streamsql/streamsql/types"
)

// Union passes on every input's changes (UNION ALL), with aligned barriers
// and the minimum of its inputs' watermarks.
type Union struct {
	Ins  []Node
	Cols []types.Column
}

// Columns implements Node.
func (u *Union) Columns() []types.Column { return u.Cols }

// Inputs implements Node.
func (u *Union) Inputs() []Node { return u.Ins }

// Explain implements Node.
func (u *Union) Explain() string { return "StreamUnion" }

// Start implements Node.
func (u *Union) Start(env *Env, inputs []<-chan Message) <-chan Message {
	out := make(chan Message, ChannelSize)
	go func() {
		defer close(out)
		align(env, inputs,
			func(_ int, c *Chunk) bool { return send(env, out, ChunkMsg(c)) },
			func(w Watermark) bool { return send(env, out, WatermarkMsg(w)) },
			func(b Barrier) bool { return send(env, out, BarrierMsg(b)) })
	}()
	return out
}

// joinBarrier adds b, the barrier one input delivered, to pending, the
// barrier being aligned across inputs (nil before the first): every input
// must deliver the same epoch, and the aligned barrier is a checkpoint when
// any input's is.
func joinBarrier(pending *Barrier, b Barrier) (*Barrier, error) {
	if pending == nil {
		return &b, nil
	}
	if pending.Epoch != b.Epoch {
		return nil, errBarrierMismatch(pending.Epoch, b.Epoch)
	}
	if b.Checkpoint {
		pending.Checkpoint = true
	}
	return pending, nil
}

func errBarrierMismatch(want, got uint64) error {
	return fmt.Errorf("stream: barrier of epoch %d arrived while aligning epoch %d", got, want)
}
