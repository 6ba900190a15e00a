package stream

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// WindowAgg checkpoints: for every window kind and EMIT mode of the
// property test (windowagg_prop_test.go) and random changelogs, a run that
// checkpoints at random barriers (incremental after the first, sometimes
// full) is compared, from each checkpoint on, with a run restored from the
// folded checkpoint and fed the same remaining input: the same chunks (rows
// and ops; the order of rows within a chunk may differ), watermarks and
// late rows, epoch by epoch to the end. A chain of restores at random
// points (each restored run checkpointing incrementally on top of the state
// it restored) must give the uninterrupted run's output too, and the folded
// state must hold exactly one record per live group, entry and key.

// wsEpoch is one epoch of a script: its chunks and watermarks, and whether
// a processing-time tick precedes its barrier.
type wsEpoch struct {
	msgs []Message
	tick bool
}

// wsScript generates a random changelog as the property test does.
func wsScript(t *testing.T, rng *rand.Rand, cfg wpConfig, epochs int) []wsEpoch {
	var live [][]types.Value
	now := int64(rng.Intn(40) - 20)
	period := cfg.emit.EarlyEvery + cfg.emit.Every
	out := make([]wsEpoch, epochs)
	for e := range out {
		var msgs []Message
		for c := rng.Intn(4); c > 0; c-- {
			var ops []Op
			var rows [][]types.Value
			for n := rng.Intn(8); n > 0; n-- {
				ts := now - int64(rng.Intn(9)) + int64(rng.Intn(6))
				if rng.Intn(5) == 0 {
					ts = now - int64(rng.Intn(30))
				}
				x := rng.Intn(10)
				if cfg.appendOnly {
					x = 9
				}
				switch {
				case x < 2 && len(live) > 0:
					i := rng.Intn(len(live))
					ops, rows = append(ops, Delete), append(rows, live[i])
					live = append(live[:i], live[i+1:]...)
				case x < 4 && len(live) > 0:
					i := rng.Intn(len(live))
					nr := wpRow(rng, ts)
					if rng.Intn(2) == 0 {
						copy(nr[:3], live[i][:3])
					}
					ops, rows = append(ops, UpdateBefore, UpdateAfter), append(rows, live[i], nr)
					live[i] = nr
				case x < 5 && len(live) > 0:
					nr := live[rng.Intn(len(live))]
					ops, rows = append(ops, Insert), append(rows, nr)
					live = append(live, nr)
				default:
					nr := wpRow(rng, ts)
					ops, rows = append(ops, Insert), append(rows, nr)
					live = append(live, nr)
				}
			}
			if len(rows) > 0 {
				if cfg.appendOnly {
					ops = nil
				}
				msgs = append(msgs, ChunkMsg(&Chunk{Rec: wpRecord(t, rows), Ops: ops}))
			}
			if rng.Intn(2) == 0 {
				msgs = append(msgs, WatermarkMsg(Watermark{Col: wpTS, Value: now - int64(rng.Intn(9))}))
			}
			now += int64(rng.Intn(5))
		}
		out[e] = wsEpoch{msgs: msgs, tick: period > 0 && rng.Intn(3) == 0}
	}
	return out
}

// wsCheckpoints is memCheckpoints that also keeps the last run it
// snapshotted, for the record count check.
type wsCheckpoints struct {
	*memCheckpoints
	last *waggRun
}

func (c *wsCheckpoints) Snapshot(n Node, b Barrier, st Stateful) error {
	c.mu.Lock()
	c.last = st.(waggState).r
	c.mu.Unlock()
	return c.memCheckpoints.Snapshot(n, b, st)
}

// wsRun is a running WindowAgg fed epoch by epoch.
type wsRun struct {
	t     *testing.T
	w     *WindowAgg
	env   *Env
	cps   *wsCheckpoints
	clock *fakeClock
	in    chan Message
	out   <-chan Message

	mu   sync.Mutex
	late []string
}

// startWS starts w; with restored set, from that folded state (which its
// own checkpoints then continue incrementally).
func startWS(t *testing.T, w *WindowAgg, checkpoints bool, restored memState) *wsRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	r := &wsRun{t: t, w: w, clock: newFakeClock(), in: make(chan Message)}
	r.env = NewEnv(ctx, expr.Context{})
	r.env.Clock = r.clock
	r.env.OnLate = func(rows arrow.RecordBatch, _ uint64) {
		r.mu.Lock()
		defer r.mu.Unlock()
		for i := 0; i < int(rows.NumRows()); i++ {
			r.late = append(r.late, rowIdentity(rows, i, wpCols, 0, len(wpCols)))
		}
	}
	if checkpoints || restored != nil {
		r.cps = &wsCheckpoints{memCheckpoints: newMemCheckpoints()}
		r.env.Checkpoints = r.cps
		if restored != nil {
			r.cps.restored[w] = restored
			st := memState{}
			for k, v := range restored {
				st[k] = v
			}
			r.cps.states[w] = st
		}
	}
	r.out = w.Start(r.env, []<-chan Message{r.in})
	return r
}

func (r *wsRun) stop() {
	close(r.in)
	for range r.out {
	}
}

// epoch feeds one epoch (barrier number n) and returns its output in
// canonical form.
func (r *wsRun) epoch(n uint64, e wsEpoch, cp, full bool) string {
	r.t.Helper()
	send := func(m Message) {
		select {
		case r.in <- m:
		case <-r.env.Ctx.Done():
			r.t.Fatalf("operator stopped: %v", r.env.Err())
		}
	}
	var got []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range r.out {
			switch m.Kind {
			case KindChunk:
				got = append(got, canonChunk(m.Chunk, r.w.Cols))
			case KindWatermark:
				got = append(got, fmt.Sprintf("wm %d=%d", m.Watermark.Col, m.Watermark.Value))
			case KindBarrier:
				if m.Barrier.Epoch != n {
					got = append(got, fmt.Sprintf("barrier %d", m.Barrier.Epoch))
				}
				return
			}
		}
	}()
	for _, m := range e.msgs {
		send(m)
	}
	if e.tick {
		r.clock.Advance(time.Duration(r.w.Emit.EarlyEvery+r.w.Emit.Every) * time.Microsecond)
	}
	if r.cps != nil {
		r.cps.mu.Lock()
		r.cps.full = full
		r.cps.mu.Unlock()
	}
	send(BarrierMsg(Barrier{Epoch: n, Checkpoint: cp}))
	<-done
	if r.env.Ctx.Err() != nil { // (Env.Err before a failure would disarm Fail)
		r.t.Fatalf("epoch %d: %v", n, r.env.Err())
	}
	r.mu.Lock()
	late := r.late
	r.late = nil
	r.mu.Unlock()
	slices.Sort(late)
	got = append(got, "late "+strings.Join(late, ","))
	return strings.Join(got, "\n")
}

// canonChunk renders a chunk's rows with their ops, an update pair as one
// unit, sorted.
func canonChunk(c *Chunk, cols []types.Column) string {
	var units []string
	for i := 0; i < c.Len(); i++ {
		u := c.Op(i).String() + " " + showRow(c, i, cols)
		if c.Op(i) == UpdateBefore && i+1 < c.Len() && c.Op(i+1) == UpdateAfter {
			i++
			u += " / " + showRow(c, i, cols)
		}
		units = append(units, u)
	}
	slices.Sort(units)
	return "chunk{" + strings.Join(units, "; ") + "}"
}

// checkRecords checks that the folded state holds one record per live
// group, entry and key, the meta and the stash (no stale record). Called
// after the barrier came out: the run waits for input.
func (r *wsRun) checkRecords(st memState) {
	r.t.Helper()
	r.cps.mu.Lock()
	run := r.cps.last
	r.cps.mu.Unlock()
	want := 1 + run.liveGroups()
	if len(run.stash) > 0 {
		want++
	}
	for _, live := range run.elive {
		if live {
			want++
		}
	}
	for k := 0; k < run.nkeys; k++ {
		if run.keyRefs[k] > 0 {
			want++
		}
	}
	if len(st) != want {
		var tags []byte
		for k := range st {
			tags = append(tags, k[0])
		}
		slices.Sort(tags)
		r.t.Fatalf("checkpoint holds %d records (%s), the run %d", len(st), tags, want)
	}
}

func TestWindowAggCheckpointResume(t *testing.T) {
	epochs, seeds := 60, int64(4)
	if testing.Short() {
		epochs, seeds = 40, 2
	}
	for ci, cfg := range wpConfigs() {
		t.Run(cfg.name, func(t *testing.T) {
			for seed := int64(1); seed <= seeds; seed++ {
				rng := rand.New(rand.NewSource(int64(ci)*7919 + seed))
				w, _ := wpPlans(t, cfg)
				script := wsScript(t, rng, cfg, epochs)

				// Without checkpoints: the reference output.
				ref := startWS(t, w, false, nil)
				want := make([]string, epochs+1)
				for i, e := range script {
					want[i+1] = ref.epoch(uint64(i+1), e, false, false)
				}
				ref.stop()

				// With checkpoints at random barriers.
				a := startWS(t, w, true, nil)
				states := map[int]memState{}
				for i, e := range script {
					n := i + 1
					cp := rng.Intn(3) == 0
					got := a.epoch(uint64(n), e, cp, cp && rng.Intn(5) == 0)
					if got != want[n] {
						t.Fatalf("seed %d epoch %d: checkpointing changed the output:\n%s\nwant\n%s", seed, n, got, want[n])
					}
					if cp {
						states[n] = a.cps.copyState(w)
						a.checkRecords(states[n])
					}
				}
				a.stop()

				// Runs restored from some of the checkpoints (the first,
				// full one and random incremental ones).
				var cpEpochs []int
				for n := range states {
					cpEpochs = append(cpEpochs, n)
				}
				slices.Sort(cpEpochs)
				if len(cpEpochs) > 4 {
					rng.Shuffle(len(cpEpochs)-1, func(i, j int) { cpEpochs[i+1], cpEpochs[j+1] = cpEpochs[j+1], cpEpochs[i+1] })
					cpEpochs = cpEpochs[:4]
				}
				for _, n := range cpEpochs {
					st := states[n]
					b := startWS(t, w, true, st)
					for i := n; i < epochs; i++ {
						cp := rng.Intn(4) == 0
						got := b.epoch(uint64(i+1), script[i], cp, false)
						if got != want[i+1] {
							t.Fatalf("seed %d: restored at epoch %d, epoch %d:\n%s\nwant\n%s", seed, n, i+1, got, want[i+1])
						}
						if cp {
							b.checkRecords(b.cps.copyState(w))
						}
					}
					b.stop()
				}

				// A chain of restores at random points: each run stops
				// (crashes) after a few epochs and the next one replays
				// from the last checkpoint.
				var st memState
				from := 0
				for {
					c := startWS(t, w, true, st)
					i, stopAt, last := from, from+1+rng.Intn(12), 0
					for ; i < epochs && i < stopAt; i++ {
						cp := rng.Intn(3) == 0
						got := c.epoch(uint64(i+1), script[i], cp, cp && rng.Intn(6) == 0)
						if got != want[i+1] {
							t.Fatalf("seed %d: chain from epoch %d, epoch %d:\n%s\nwant\n%s", seed, from, i+1, got, want[i+1])
						}
						if cp {
							last = i + 1
						}
					}
					c.stop()
					if last > 0 {
						st, from = c.cps.copyState(w), last
					}
					if i == epochs {
						break
					}
				}
			}
		})
	}
}
