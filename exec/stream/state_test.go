package stream

import (
	"fmt"
	"math/rand"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// memState is an operator's checkpointed key/value pairs, folded.
type memState map[string]string

func (m memState) Len() int { return len(m) }
func (m memState) Range(fn func(k, v []byte) error) error {
	for k, v := range m {
		if err := fn([]byte(k), []byte(v)); err != nil {
			return err
		}
	}
	return nil
}

// memWriter applies records to a memState as the checkpoint store's
// recovery folds them.
type memWriter struct {
	st     memState
	resets int
}

func (w *memWriter) Put(k, v []byte) { w.st[string(k)] = string(v) }
func (w *memWriter) Delete(k []byte) { delete(w.st, string(k)) }
func (w *memWriter) Reset() {
	clear(w.st)
	w.resets++
}

// memCheckpoints is a Checkpointer over memStates (one per node). Full,
// if set, makes every snapshot a full one.
type memCheckpoints struct {
	mu       sync.Mutex
	states   map[Node]memState
	restored map[Node]memState
	resets   int
	full     bool
}

func newMemCheckpoints() *memCheckpoints {
	return &memCheckpoints{states: map[Node]memState{}, restored: map[Node]memState{}}
}

func (c *memCheckpoints) Restored(n Node) StateReader {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.restored[n]; ok {
		return st
	}
	return nil
}

func (c *memCheckpoints) Snapshot(n Node, b Barrier, st Stateful) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.states[n]
	if s == nil {
		s = memState{}
		c.states[n] = s
	}
	w := &memWriter{st: s}
	err := st.Snapshot(w, c.full)
	c.resets += w.resets
	return err
}

// copyState copies a folded state (what a recovery would read).
func (c *memCheckpoints) copyState(n Node) memState {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := memState{}
	for k, v := range c.states[n] {
		out[k] = v
	}
	return out
}

// TestViewCheckpointRoundTrip runs random changelogs through keyed and
// multiset views, checkpointing at random barriers (incremental after the
// first): a view restored from each checkpoint holds exactly the rows of
// the original at that epoch.
func TestViewCheckpointRoundTrip(t *testing.T) {
	for _, keyed := range []bool{true, false} {
		for seed := int64(1); seed <= 5; seed++ {
			t.Run(fmt.Sprintf("keyed=%v/seed=%d", keyed, seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(seed))
				m := &Materialize{Cols: kvCols}
				if keyed {
					m.Key = []int{0}
				}
				published := make(chan uint64, 1)
				m.OnEpoch = func(e uint64, _ *Chunk) { published <- e } // after the snapshot
				cps := newMemCheckpoints()
				env := newEnv(t)
				env.Checkpoints = cps
				v := m.NewView()
				in := make(chan Message)
				done := make(chan error, 1)
				go func() { done <- v.Run(env, in) }()
				live := map[int64]string{} // keyed: k -> v
				var bag []string           // multiset: "k=v" rows
				checkpoints := 0
				for epoch := uint64(1); epoch <= 40; epoch++ {
					var ops []Op
					var rows []string
					for i := rng.Intn(20); i > 0; i-- {
						k := int64(rng.Intn(30))
						val := fmt.Sprintf("v%d", rng.Intn(5))
						if keyed {
							if old, ok := live[k]; ok {
								if rng.Intn(2) == 0 {
									ops, rows = append(ops, Delete), append(rows, fmt.Sprintf("%d=%s", k, old))
									delete(live, k)
								} else {
									ops, rows = append(ops, UpdateBefore, UpdateAfter), append(rows, fmt.Sprintf("%d=%s", k, old), fmt.Sprintf("%d=%s", k, val))
									live[k] = val
								}
							} else {
								ops, rows = append(ops, Insert), append(rows, fmt.Sprintf("%d=%s", k, val))
								live[k] = val
							}
						} else if len(bag) > 0 && rng.Intn(3) == 0 {
							j := rng.Intn(len(bag))
							ops, rows = append(ops, Delete), append(rows, bag[j])
							bag = slices.Delete(bag, j, j+1)
						} else {
							r := fmt.Sprintf("%d=%s", k%5, val)
							ops, rows = append(ops, Insert), append(rows, r)
							bag = append(bag, r)
						}
					}
					if len(rows) > 0 {
						in <- ChunkMsg(kv(ops, rows...))
					}
					cp := rng.Intn(3) == 0
					if cp {
						checkpoints++
					}
					in <- BarrierMsg(Barrier{Epoch: epoch, Checkpoint: cp})
					if e := <-published; e != epoch {
						t.Fatalf("published %d, want %d", e, epoch)
					}
					if !cp {
						continue
					}
					restored := m.NewView()
					if err := restored.RestoreAt(cps.copyState(m), epoch); err != nil {
						t.Fatal(err)
					}
					e, got, err := restored.SnapshotEpoch()
					if err != nil {
						t.Fatal(err)
					}
					_, want, _ := v.SnapshotEpoch()
					if e != epoch || !slices.Equal(rowsText(got), rowsText(want)) {
						t.Fatalf("epoch %d: restored %v (epoch %d), want %v", epoch, rowsText(got), e, rowsText(want))
					}
				}
				close(in)
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				if checkpoints > 1 && cps.resets != 1 {
					t.Errorf("%d full snapshots of %d, want only the first", cps.resets, checkpoints)
				}
			})
		}
	}
}

// TestLateRowsCarryTheLastCheckpoint: an operator hands its late rows on
// with the epoch of the last checkpoint barrier it took a snapshot at (the
// checkpoint a replay would start after), not that of a plain barrier.
func TestLateRowsCarryTheLastCheckpoint(t *testing.T) {
	in := make(chan Message, 16)
	e := &EOWC{Input: &tnSource{ch: in, cols: eowcCkCols}, TimeCol: 0}
	env := NewEnv(t.Context(), expr.Context{})
	env.Checkpoints = newMemCheckpoints()
	var afters []uint64
	env.OnLate = func(rows arrow.RecordBatch, after uint64) {
		for range rows.NumRows() {
			afters = append(afters, after)
		}
	}
	out := e.Start(env, []<-chan Message{in})
	late := func(ts int64) Message {
		return ChunkMsg(tnChunk(t, eowcCkCols, nil, [][]types.Value{{types.TimestampValue(ts), int64(1), 1.0, "x"}}))
	}
	in <- WatermarkMsg(Watermark{Col: 0, Value: 100})
	in <- late(50)
	in <- BarrierMsg(Barrier{Epoch: 7, Checkpoint: true})
	in <- late(60)
	in <- BarrierMsg(Barrier{Epoch: 8})
	in <- late(70)
	in <- BarrierMsg(Barrier{Epoch: 9, Checkpoint: true})
	in <- late(80)
	close(in)
	for range out {
	}
	if err := env.Err(); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(afters); got != "[0 7 7 9]" {
		t.Fatalf("late rows' checkpoints: %s", got)
	}
}
