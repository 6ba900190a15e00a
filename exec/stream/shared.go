package stream

import (
	"fmt"

	"github.com/streamsql/streamsql/types"
)

// Shared marks a subtree that a plan computes once for several parents
// (docs/contributing/streaming.md, "Shared subplans"): the Inputs of the
// Shared nodes of one Group are equal subtrees (Nexmark q5 counts the
// bids per auction and hopping window twice, once for the counts and
// once for their maximum). The runtime (exec/dataflow) starts the Input
// of the one with Idx 0, which comes first in the plan's preorder, and
// passes its output on to every Shared of the group; the other Inputs
// never run. Run without the runtime (Start), each passes its own
// Input's output on: a plan means the same either way. Immutable once
// planned.
type Shared struct {
	Input Node
	Group *SharedGroup
	Idx   int
}

// SharedGroup is what the Shared nodes computing one subtree share.
type SharedGroup struct {
	N  int // how many Shared nodes the group has
	ID int // its number in the plan, from 1, for EXPLAIN
}

// Columns implements Node: its input's.
func (s *Shared) Columns() []types.Column { return s.Input.Columns() }

// Inputs implements Node.
func (s *Shared) Inputs() []Node { return []Node{s.Input} }

// Explain implements Node.
func (s *Shared) Explain() string {
	if s.Idx == 0 {
		return fmt.Sprintf("StreamShare %d: computed once for %d parents", s.Group.ID, s.Group.N)
	}
	return fmt.Sprintf("StreamShare %d: the output of share %d above, not computed again", s.Group.ID, s.Group.ID)
}

// checkpoints marks Shared as checkpointable: it keeps nothing.
func (s *Shared) checkpoints() {}

// Start implements Node: it passes its input's output on.
func (s *Shared) Start(env *Env, inputs []<-chan Message) <-chan Message {
	return passOne(env, inputs, "share")
}

// passOne returns the one input of a node that passes its input on (what
// names it in the error when there is not exactly one).
func passOne(env *Env, inputs []<-chan Message, what string) <-chan Message {
	if len(inputs) != 1 {
		env.Fail(fmt.Errorf("stream: %s started with %d inputs", what, len(inputs)))
		out := make(chan Message)
		close(out)
		return out
	}
	return inputs[0]
}
