package objstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/clustertest"
)

type env struct {
	store *Store
	s3    *clustertest.S3
	node  *cluster.Node
	fence *cluster.Fence
}

func setup(t *testing.T) *env {
	t.Helper()
	e := clustertest.StartEtcd(t)
	fs3 := clustertest.StartS3(t, "ckpt")
	fs3.SetEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := Open(ctx, cluster.CheckpointURL{Bucket: "ckpt", Prefix: "prod/c1"})
	if err != nil {
		t.Fatal(err)
	}
	st.Logf = t.Logf
	n, err := cluster.Join(ctx, cluster.Config{Target: cluster.Target{Endpoints: []string{e.Endpoint}, Prefix: "/c1"},
		NodeID: "n1", Address: "127.0.0.1:1", LeaseTTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	deadline := time.Now().Add(20 * time.Second)
	for !n.IsCoordinator() {
		if time.Now().After(deadline) {
			t.Fatal("no coordinator")
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}
	f, err := n.Fence()
	if err != nil {
		t.Fatal(err)
	}
	return &env{store: st, s3: fs3, node: n, fence: f}
}

// upload writes, for each node, one object of op "j/1#0" per vnode half.
func upload(t *testing.T, ctx context.Context, s *Store, epoch uint64, tag string) []Object {
	t.Helper()
	var objs []Object
	for i, node := range []string{"n1", "n2"} {
		lo, hi := i*128, i*128+127
		o, err := s.PutState(ctx, epoch, node, int64(100+i), "j/1#0", lo, hi, []byte(fmt.Sprintf("%s state of %s at %d", tag, node, epoch)))
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	return objs
}

func pointer(t *testing.T, ctx context.Context, f *cluster.Fence) cluster.Pointer {
	t.Helper()
	p, ok, err := f.Pointer(ctx)
	if err != nil || !ok {
		t.Fatalf("pointer: %v %v", ok, err)
	}
	return p
}

// TestCommitRecoverCollect: per-node objects and a manifest are committed
// through the fenced pointer and read back; an epoch uploaded but never
// committed, and one whose manifest was written but whose pointer move
// was refused (a stale coordinator), are ignored by recovery and removed
// by Collect, while an epoch after the pointer (in flight) and the epochs
// the kept checkpoints' objects live in stay.
func TestCommitRecoverCollect(t *testing.T) {
	e := setup(t)
	s := e.store
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	objs1 := upload(t, ctx, s, 1, "a")
	if _, err := s.Commit(ctx, e.fence, Manifest{Epoch: 1, Objects: objs1, Meta: []byte(`{"kafka":{"0":42}}`)}); err != nil {
		t.Fatal(err)
	}
	upload(t, ctx, s, 2, "crashed") // a node died before the manifest

	objs3 := upload(t, ctx, s, 3, "zombie")
	stale := cluster.NewFence(e.node.Client(), "/c1", cluster.Term{Key: e.fence.Term().Key, Rev: e.fence.Term().Rev - 1}, "old")
	if _, err := s.Commit(ctx, stale, Manifest{Epoch: 3, Objects: objs3}); !errors.Is(err, cluster.ErrNotCoordinator) {
		t.Fatalf("stale commit: err = %v, want ErrNotCoordinator", err)
	}
	p := pointer(t, ctx, e.fence)
	if p.Epoch != 1 {
		t.Fatalf("pointer after refused commit = %+v", p)
	}
	c, err := s.Recover(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.State("j/1#0", 200); len(got) != 1 || string(got[0]) != "a state of n2 at 1" {
		t.Fatalf("vnode 200 state = %q", got)
	}
	if string(c.Manifest.Meta) != `{"kafka":{"0":42}}` {
		t.Fatalf("meta = %s", c.Manifest.Meta)
	}

	// Epoch 4 is incremental: n1 wrote anew, n2's object of epoch 1 is kept.
	o4, err := s.PutState(ctx, 4, "n1", 100, "j/1#0", 0, 127, []byte("b state of n1 at 4"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, e.fence, Manifest{Epoch: 4, Objects: []Object{o4, objs1[1]}}); err != nil {
		t.Fatal(err)
	}
	upload(t, ctx, s, 5, "in flight")
	p = pointer(t, ctx, e.fence)
	if p.Epoch != 4 || p.Previous != 1 {
		t.Fatalf("pointer = %+v", p)
	}
	deleted, err := s.Collect(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(deleted, []uint64{2, 3}) {
		t.Fatalf("collected %v, want [2 3]", deleted)
	}
	left, err := s.listEpochs(ctx)
	if err != nil || !reflect.DeepEqual(left, []uint64{1, 4, 5}) {
		t.Fatalf("epochs left = %v (%v)", left, err)
	}
	c, err = s.Recover(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.State("j/1#0", 3); len(got) != 1 || string(got[0]) != "b state of n1 at 4" {
		t.Fatalf("vnode 3 = %q", got)
	}
	if got := c.State("j/1#0", 255); len(got) != 1 || string(got[0]) != "a state of n2 at 1" {
		t.Fatalf("vnode 255 = %q", got)
	}

	// A damaged object of the committed epoch: recovery falls back to
	// the previous one; a missing one likewise.
	if err := s.put(ctx, o4.Key, []byte("b state of n1 at 4, overwritten")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, p.Manifest); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Load of a damaged checkpoint: err = %v", err)
	}
	c, err = s.Recover(ctx, p)
	if err != nil || c.Manifest.Epoch != 1 {
		t.Fatalf("fallback: %v, %v", c, err)
	}
	if _, err := e.s3.Backend.DeleteObject("ckpt", o4.Key); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, p.Manifest); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("Load with a missing object: err = %v", err)
	}
}

// TestStoreDownCommitsNothing: when the object store fails, the manifest
// PUT fails and the pointer does not move.
func TestStoreDownCommitsNothing(t *testing.T) {
	e := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	objs := upload(t, ctx, e.store, 7, "x")
	if _, err := e.store.Commit(ctx, e.fence, Manifest{Epoch: 7, Objects: objs}); err != nil {
		t.Fatal(err)
	}
	e.s3.Close()
	shortCtx, cancel2 := context.WithTimeout(ctx, 5*time.Second)
	defer cancel2()
	if _, err := e.store.PutState(shortCtx, 8, "n1", 1, "op", 0, 255, []byte("y")); err == nil {
		t.Fatal("PutState with the store down succeeded")
	}
	if _, err := e.store.Commit(shortCtx, e.fence, Manifest{Epoch: 8, Objects: objs}); err == nil || !strings.Contains(err.Error(), "epoch 8 not committed") {
		t.Fatalf("Commit with the store down: err = %v", err)
	}
	if p := pointer(t, ctx, e.fence); p.Epoch != 7 {
		t.Fatalf("pointer moved to %d", p.Epoch)
	}
}

// TestCollectChains: checkpoints whose manifests name chains of objects
// from older epochs (a base and deltas, as the workers' incremental
// uploads). Collect keeps every object the pointer's and the previous
// manifest name, deletes the others in the epochs it keeps (a superseded
// base, an older manifest) and deletes an epoch whole once neither names
// anything in it; both kept checkpoints load after each Collect.
func TestCollectChains(t *testing.T) {
	e := setup(t)
	s := e.store
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	put := func(epoch uint64, op string) Object {
		t.Helper()
		o, err := s.PutState(ctx, epoch, "n1", 100, op, 0, 255, fmt.Appendf(nil, "%s at %d", op, epoch))
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	commit := func(epoch uint64, objs ...Object) cluster.Pointer {
		t.Helper()
		if _, err := s.Commit(ctx, e.fence, Manifest{Epoch: epoch, Objects: objs}); err != nil {
			t.Fatal(err)
		}
		p := pointer(t, ctx, e.fence)
		for _, key := range []string{p.Manifest, p.PreviousManifest} {
			if key == "" {
				continue
			}
			if _, err := s.Load(ctx, key); err != nil {
				t.Fatalf("before Collect at %d: %v", epoch, err)
			}
		}
		return p
	}
	collect := func(p cluster.Pointer, want []uint64) {
		t.Helper()
		deleted, err := s.Collect(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(deleted) != fmt.Sprint(want) {
			t.Fatalf("Collect at %d deleted epochs %v, want %v", p.Epoch, deleted, want)
		}
		for _, key := range []string{p.Manifest, p.PreviousManifest} {
			if key == "" {
				continue
			}
			if _, err := s.Load(ctx, key); err != nil {
				t.Fatalf("after Collect at %d: %v", p.Epoch, err)
			}
		}
	}
	gone := func(o Object, want bool) {
		t.Helper()
		_, err := s.Fetch(ctx, o)
		if (err != nil) != want || (want && !errors.Is(err, ErrCorrupt)) {
			t.Fatalf("object %s: %v (want gone: %v)", o.Key, err, want)
		}
	}
	a1, b1 := put(1, "a"), put(1, "b")
	collect(commit(1, a1, b1), []uint64{})
	b2 := put(2, "b") // b's delta
	collect(commit(2, a1, b1, b2), []uint64{})
	a3 := put(3, "a") // a's new base
	p3 := commit(3, a3, b1, b2)
	collect(p3, []uint64{})
	gone(a1, false)                    // the previous checkpoint (2) names it
	a4, b4 := put(4, "a"), put(4, "b") // a's delta, b's new base
	collect(commit(4, a3, a4, b4), []uint64{})
	gone(a1, true) // neither 4 nor 3 names it; epoch 1 stays for b1
	gone(b1, false)
	if _, err := s.ReadManifest(ctx, s.ManifestKey(2)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("the manifest of epoch 2, named by no pointer: %v", err)
	}
	put(6, "in flight")
	collect(commit(5, a3, a4, b4, put(5, "b")), []uint64{1, 2})
	gone(b1, true)
	gone(b2, true)
	gone(a3, false)
	if _, err := s.ReadManifest(ctx, p3.Manifest); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("the manifest of epoch 3, kept for the objects its epoch holds: %v", err)
	}
	left, err := s.listEpochs(ctx)
	if err != nil || fmt.Sprint(left) != "[3 4 5 6]" {
		t.Fatalf("epochs left %v (%v)", left, err)
	}
}

// TestCollectReadsNoManifestItWrote: a coordinator's garbage collection
// after a commit takes the new manifest and the previous one from memory,
// so it does not read them back (and does not race a restart reading
// them); a store that did not write them reads them.
func TestCollectReadsNoManifestItWrote(t *testing.T) {
	e := setup(t)
	s := e.store
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for epoch := uint64(1); epoch <= 2; epoch++ {
		if _, err := s.Commit(ctx, e.fence, Manifest{Epoch: epoch, Objects: upload(t, ctx, s, epoch, "x")}); err != nil {
			t.Fatal(err)
		}
	}
	p := pointer(t, ctx, e.fence)
	e.s3.Faults.SetMethod(http.MethodGet, clustertest.FaultFail, "/MANIFEST")
	defer e.s3.Faults.Set(clustertest.FaultNone, "")
	if _, err := s.Collect(ctx, p); err != nil {
		t.Fatalf("Collect read a manifest it wrote: %v", err)
	}
	other, err := Open(ctx, cluster.CheckpointURL{Bucket: "ckpt", Prefix: "prod/c1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Collect(ctx, p); err == nil {
		t.Fatal("a store that wrote no manifest collected without reading them")
	}
}
