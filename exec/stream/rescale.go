package stream

import "fmt"

// Rescaling by restart (docs/contributing/parallel.md, "Checkpoints"). A
// keyed operator's state is a set of per-key entries, and every key lives
// in one vnode (VNodeHasher over the operator's routing keys, the columns
// its Parallel routes by). When a job restarts with another parallelism,
// instance k of the new N restores from the states of every instance of
// the old parallelism, keeping the entries of the vnodes it owns now
// (VNodeOwner(v, N) == k): the runtime hands its Restore a *RescaledState
// instead of its own instance's state.
//
// An operator whose state can be redistributed this way marks its plan
// node with Rescalable; for the others the runtime rebuilds the job from
// its inputs instead, saying which operator prevented the rescale.

// Rescalable is implemented by plan nodes of keyed operators whose
// Stateful accepts a *RescaledState in Restore.
type Rescalable interface {
	Node
	rescales()
}

// RescaledState is what a keyed operator's instance restores from after a
// change of parallelism: the states of the old instances (Parts, in
// instance order; a nil part holds nothing) and the vnodes this instance
// owns now. Its Range and Len walk every part (an operator that does not
// understand it must not be given one: see Rescalable). Read-only, used by
// the one instance it was made for.
type RescaledState struct {
	Parts []StateReader
	// Keys are the columns of the operator's inputs that route a row
	// (Parallel.Keys: per input of the operator).
	Keys [][]int
	N, K int // the new parallelism and this instance (0 <= K < N)
}

// Own reports whether this instance owns vnode v.
func (r *RescaledState) Own(v uint16) bool { return r.N <= 1 || VNodeOwner(v, r.N) == r.K }

// Len implements StateReader: the records of every part.
func (r *RescaledState) Len() int {
	n := 0
	for _, p := range r.Parts {
		if p != nil {
			n += p.Len()
		}
	}
	return n
}

// Range implements StateReader over every part in turn.
func (r *RescaledState) Range(fn func(key, value []byte) error) error {
	for _, p := range r.Parts {
		if p == nil {
			continue
		}
		if err := p.Range(fn); err != nil {
			return err
		}
	}
	return nil
}

// rescaled returns the RescaledState rd is, if it is one (nil otherwise).
func rescaled(rd StateReader) *RescaledState {
	rs, _ := rd.(*RescaledState)
	return rs
}

// routingPositions maps routing columns (input columns) to the positions
// of exprs that are plain references to them: the operator's own key
// positions whose values route its entries.
func routingPositions(cols []int, keys []int) ([]int, error) {
	out := make([]int, len(cols))
	for i, c := range cols {
		out[i] = -1
		for j, k := range keys {
			if k == c {
				out[i] = j
				break
			}
		}
		if out[i] < 0 {
			return nil, fmt.Errorf("routing column %d is not a key of the operator", c)
		}
	}
	return out, nil
}
