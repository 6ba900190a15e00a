package dist

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster/clustertest"
	"github.com/streamsql/streamsql/cluster/objstore"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/stream"
)

// TestStateEncoding: what stateWriter writes, DecodeState reads back
// (puts in order; deletes and resets skipped); truncated bytes fail.
func TestStateEncoding(t *testing.T) {
	var w stateWriter
	w.Reset()
	var want []string
	for i := range 300 {
		k, v := fmt.Appendf(nil, "key%d", i), make([]byte, i)
		w.Put(k, v)
		want = append(want, fmt.Sprintf("%s=%d", k, len(v)))
		if i%7 == 0 {
			w.Delete(k)
		}
	}
	var got []string
	if err := DecodeState(w.buf, func(k, v []byte) { got = append(got, fmt.Sprintf("%s=%d", k, len(v))) }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("decoded %d records, wrote %d", len(got), len(want))
	}
	for _, cut := range []int{1, 5, len(w.buf) / 2, len(w.buf) - 1} {
		if err := DecodeState(w.buf[:cut], func(_, _ []byte) {}); !errors.Is(err, errBadState) && cut != 1 {
			t.Fatalf("%d of %d bytes: %v", cut, len(w.buf), err)
		}
	}
	if err := DecodeState([]byte{'X'}, func(_, _ []byte) {}); !errors.Is(err, errBadState) {
		t.Fatalf("unknown record: %v", err)
	}
}

// TestInstanceVNodes: an instance's object range is exactly the vnodes
// stream.VNodeOwner gives it.
func TestInstanceVNodes(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 7, 256} {
		for k := range n {
			lo, hi := instanceVNodes(k, n)
			for v := range stream.VNodes {
				if (stream.VNodeOwner(uint16(v), n) == k) != (v >= lo && v <= hi) {
					t.Fatalf("n=%d k=%d: vnode %d and range %d-%d", n, k, v, lo, hi)
				}
			}
		}
	}
}

// modelState is a stream.Stateful over a map that tracks the keys
// changed since its previous snapshot, as the operators do.
type modelState struct {
	kv    map[string]string
	dirty map[string]bool
	based bool
}

func (m *modelState) set(k, v string) { m.kv[k] = v; m.dirty[k] = true }
func (m *modelState) del(k string)    { delete(m.kv, k); m.dirty[k] = true }

func (m *modelState) Snapshot(w stream.StateWriter, full bool) error {
	if full || !m.based {
		w.Reset()
		for k, v := range m.kv {
			w.Put([]byte(k), []byte(v))
		}
	} else {
		for k := range m.dirty {
			if v, ok := m.kv[k]; ok {
				w.Put([]byte(k), []byte(v))
			} else {
				w.Delete([]byte(k))
			}
		}
	}
	clear(m.dirty)
	m.based = true
	return nil
}

func (m *modelState) Restore(stream.StateReader) error { return nil }

// TestIncrementalUploads: an instance's operator checkpointed over 40
// epochs through the coordinator's commit (CommitEpoch, with its
// Collect), 10 000 keys then a trickle of puts and deletes: each
// committed checkpoint (and the pointer's previous one) restores exactly
// the model's state of its epoch; epochs with few changes upload a small
// delta, not the state; chains stay within maxChain objects and are
// re-based when the deltas outgrow the base (a rewrite of every key) or
// after a failed upload (that epoch not committed, the next one whole);
// epochs not committed (their commit skipped) stay restorable through the
// next ones' chains; a base no kept checkpoint names any more is
// collected.
func TestIncrementalUploads(t *testing.T) {
	defer func(n int) { maxChain = n }(maxChain)
	maxChain = 8
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	const prefix = "/incr"
	fs3, store, _, r := coordinatorRunner(t, ctx, prefix) // tables_test.go
	r.UploadTimeout = 5 * time.Second
	ensureTables(t, ctx, r, 0)
	spec := aggJob(3)
	const k = 1
	p := dataflow.ParallelNodes(spec.Plan)[0]
	ck := newInstanceCkpt(r, spec.ID, 0, k, p)
	r.placed[instanceName(spec.ID, 0, k)] = time.Now().Add(-time.Hour)
	local := LocalPart{Files: []LocalFile{{Name: "MANIFEST-1", Size: -1, Data: []byte("local")}}}
	op := instanceName(spec.ID, 0, k) + ".n0"

	st := &modelState{kv: map[string]string{}, dirty: map[string]bool{}}
	rng := rand.New(rand.NewPCG(1, 2))
	models := map[uint64]map[string]string{} // the model at each epoch
	restores := func(key string, epoch uint64) {
		t.Helper()
		rs, err := OpenRestore(ctx, store, key)
		if err != nil {
			t.Fatal(err)
		}
		kv, ok, err := rs.instance(ctx, spec.ID, 0, k)
		if err != nil || !ok {
			t.Fatalf("checkpoint %d: instance %v %v", epoch, ok, err)
		}
		want := models[epoch]
		if len(kv) != len(want) {
			t.Fatalf("checkpoint %d restores %d keys, want %d", epoch, len(kv), len(want))
		}
		for key, v := range want {
			if string(kv[key]) != v {
				t.Fatalf("checkpoint %d restores %s=%q, want %q", epoch, key, kv[key], v)
			}
		}
	}
	e0 := dataflow.EpochAt(time.Now())
	var firstBase objstore.Object
	var full int64 // bytes of the whole state at the first epoch
	rebased, committed := 0, 0
	for i := range 40 {
		epoch := e0 + uint64(i)
		switch {
		case i == 0:
			for j := range 10000 {
				st.set(fmt.Sprintf("key%05d", j), fmt.Sprintf("v%d", j))
			}
		case i == 20: // every key rewritten: the delta is as big as the base
			for key := range st.kv {
				st.set(key, "w"+key)
			}
		default:
			for range 20 {
				key := fmt.Sprintf("key%05d", rng.IntN(12000))
				if rng.IntN(4) == 0 {
					st.del(key)
				} else {
					st.set(key, fmt.Sprintf("e%d", i))
				}
			}
		}
		models[epoch] = maps.Clone(st.kv)
		failing := i == 12
		if failing {
			fs3.Faults.Set(clustertest.FaultFail, "/nodes/")
		}
		ck.mu.Lock()
		long := ck.chains[0] != nil && len(ck.chains[0].links) >= ck.chains[0].limit
		ck.mu.Unlock()
		if err := ck.Snapshot(p.Input, stream.Barrier{Epoch: epoch, Checkpoint: true}, st); err != nil {
			t.Fatal(err)
		}
		ck.passed(epoch)
		if i%9 == 4 {
			continue // this epoch's commit is not tried: the next ones name its objects
		}
		ptr, err := r.CommitEpoch(ctx, epoch, 20*time.Second, local)
		fs3.Faults.Set(clustertest.FaultNone, "")
		if failing {
			if err == nil || !strings.Contains(err.Error(), "failed to upload its state") {
				t.Fatalf("epoch %d with its upload failing: %v", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("epoch %d: %v", i, err)
		}
		committed++
		stats := r.LastCommit()
		m, err := store.ReadManifest(ctx, ptr.Manifest)
		if err != nil {
			t.Fatal(err)
		}
		var chain []objstore.Object
		for _, o := range m.Objects {
			if o.Op == op {
				chain = append(chain, o)
			}
		}
		if len(chain) == 0 || len(chain) > maxChain {
			t.Fatalf("epoch %d: a chain of %d objects (at most %d)", i, len(chain), maxChain)
		}
		base := chain[0]
		if i == 0 {
			firstBase, full = base, base.Size
		}
		if base.Epoch == epoch {
			rebased++
		}
		switch {
		case i == 0 || i == 13 || i == 21 || long:
			// The first, the one after a failed upload, the one after
			// the deltas outgrew the base, the one after maxChain
			// objects: a new base.
			if base.Epoch != epoch || len(chain) != 1 {
				t.Fatalf("epoch %d: chain %v, want a base of this epoch", i, chain)
			}
		case i == 20:
		default:
			if stats.WorkerUploaded*20 > full || base.Epoch == epoch {
				t.Fatalf("epoch %d: %d bytes uploaded in %d objects (the whole state: %d), base of epoch %d", i, stats.WorkerUploaded, stats.WorkerObjects, full, base.Epoch-e0)
			}
		}
		restores(ptr.Manifest, epoch)
		if ptr.PreviousManifest != "" {
			restores(ptr.PreviousManifest, ptr.Previous)
		}
	}
	if committed < 30 {
		t.Fatalf("%d epochs committed", committed)
	}
	t.Logf("%d of %d commits began a new base; the whole state %d bytes", rebased, committed, full)
	// The first base is named by no kept checkpoint: collected.
	if _, err := store.Fetch(ctx, firstBase); !errors.Is(err, objstore.ErrCorrupt) {
		t.Fatalf("the first base is still there: %v", err)
	}
}

// TestFirstLimits: the first chains of a view's instances (which start
// together) end at different checkpoints, none shorter than half of
// maxChain, so their new bases do not all come at once.
func TestFirstLimits(t *testing.T) {
	seen := map[int]bool{}
	for k := range 6 {
		l := firstLimit(k, 0)
		if l > maxChain || l <= maxChain/2 || seen[l] {
			t.Fatalf("instance %d: first chain of %d objects (maxChain %d, seen %v)", k, l, maxChain, seen)
		}
		seen[l] = true
	}
}
