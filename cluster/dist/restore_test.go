package dist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/clustertest"
	"github.com/streamsql/streamsql/cluster/objstore"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/storage/checkpoint"
)

// pointerOnly commits without etcd (the restore reads only the store).
type pointerOnly struct{}

func (pointerOnly) CommitPointer(_ context.Context, epoch uint64, manifest string) (cluster.Pointer, error) {
	return cluster.Pointer{Epoch: epoch, Manifest: manifest}, nil
}

func stateOf(t *testing.T, r stream.StateReader) map[string]string {
	t.Helper()
	out := map[string]string{}
	if r == nil {
		return out
	}
	if err := r.Range(func(k, v []byte) error { out[string(k)] = string(v); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRestoreByInstance: a committed checkpoint made of a worker's upload
// of instance 1 and the coordinator's local checkpoint (holding instance
// 0 and the job's record): each instance restores from whichever has it
// (2 from neither: empty), the coordinator's job checkpoint gets the
// worker's instance under its own id, and an object whose bytes differ
// from the manifest's fails the restore with ErrCorrupt.
func TestRestoreByInstance(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, store := testStore(t, ctx)
	spec := aggJob(3)
	const job, epoch = 1, 42
	if spec.ID != job {
		t.Fatalf("job %d", spec.ID)
	}
	// The coordinator's local checkpoint: instance 0's state and the job.
	dir := t.TempDir()
	ls, _, err := checkpoint.Open(dir, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	w, err := ls.Begin(epoch)
	if err != nil {
		t.Fatal(err)
	}
	ow := w.Op(dataflow.InstanceStateID(spec.Plan, job, 0, 0))
	ow.Put([]byte("k0"), []byte("coordinator"))
	if err := ow.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit([]byte(`{"epoch":42,"jobs":[{"id":1,"name":"agg","resumable":true}]}`)); err != nil {
		t.Fatal(err)
	}
	files, err := checkpoint.Files(dir, epoch)
	if err != nil {
		t.Fatal(err)
	}
	var objs []objstore.Object
	for _, f := range files {
		b, err := checkpoint.ReadFile(dir, f.Name)
		if err != nil {
			t.Fatal(err)
		}
		o, err := store.PutState(ctx, epoch, "n1", 1, coordOp+f.Name, 0, stream.VNodes-1, b)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	// A worker's upload of instance 1.
	var sw stateWriter
	sw.Reset()
	sw.Put([]byte("k1"), []byte("worker"))
	lo, hi := instanceVNodes(1, 3)
	o, err := store.PutState(ctx, epoch, "n2", 2, instanceName(job, 0, 1)+".n0", lo, hi, sw.buf)
	if err != nil {
		t.Fatal(err)
	}
	objs = append(objs, o)
	meta, _ := json.Marshal(CommitMeta{Coordinator: "n1", LocalEpoch: epoch, Instances: []string{instanceName(job, 0, 1)}})
	p, err := store.Commit(ctx, pointerOnly{}, objstore.Manifest{Epoch: epoch, Objects: objs, Meta: meta})
	if err != nil {
		t.Fatal(err)
	}

	rs, err := OpenRestore(ctx, store, p.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []string{"k0=coordinator", "k1=worker", ""} {
		st, err := rs.InstanceState(ctx, spec.Plan, job, 0, k)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for key, v := range stateOf(t, st) {
			got = key + "=" + v
		}
		if got != want {
			t.Fatalf("instance %d restores %q, want %q", k, got, want)
		}
	}
	cp, err := rs.JobCheckpoint(ctx, spec.Plan, job)
	if err != nil {
		t.Fatal(err)
	}
	if !dataflow.CheckpointHasJob(cp, job) {
		t.Fatal("the job checkpoint lost the job's record")
	}
	for k, want := range []string{"coordinator", "worker"} {
		if v, ok := cp.Op(dataflow.InstanceStateID(spec.Plan, job, 0, k)).Get(fmt.Appendf(nil, "k%d", k)); !ok || string(v) != want {
			t.Fatalf("job checkpoint, instance %d: %q %v", k, v, ok)
		}
	}

	// The worker's object damaged after the commit.
	if _, err := store.PutState(ctx, epoch, "n2", 2, instanceName(job, 0, 1)+".n0", lo, hi, []byte("Rbad")); err != nil {
		t.Fatal(err)
	}
	rs, err = OpenRestore(ctx, store, p.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.InstanceState(ctx, spec.Plan, job, 0, 1); !errors.Is(err, objstore.ErrCorrupt) {
		t.Fatalf("a damaged object restored: %v", err)
	}

	// A checkpoint whose objects are the committed bytes but do not
	// decode (a worker's state), or without the coordinator's part, is
	// damaged too (ErrCorrupt: the restart falls back to the previous
	// checkpoint instead of waiting for it forever).
	junk, err := store.PutState(ctx, epoch+1, "n2", 2, instanceName(job, 0, 1)+".n0", lo, hi, []byte("Xjunk"))
	if err != nil {
		t.Fatal(err)
	}
	damaged := func(e uint64, objs []objstore.Object, what string) {
		t.Helper()
		p, err := store.Commit(ctx, pointerOnly{}, objstore.Manifest{Epoch: e, Objects: objs, Meta: meta})
		if err != nil {
			t.Fatal(err)
		}
		rs, err := OpenRestore(ctx, store, p.Manifest)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rs.JobCheckpoint(ctx, spec.Plan, job); !errors.Is(err, objstore.ErrCorrupt) {
			t.Fatalf("%s: %v, want ErrCorrupt", what, err)
		}
	}
	damaged(epoch+1, append(objs[:len(objs)-1:len(objs)-1], junk), "an object that does not decode")
	damaged(epoch+2, []objstore.Object{o}, "no coordinator's part")
}

// restoreChains commits a checkpoint in which each of n instances of
// aggJob(n) has a chain of links objects (a whole state, then deltas that
// overwrite and delete keys), uploaded by worker n2 at epochs 1..links;
// it returns the store, the manifest's key and each instance's state as
// applying its chain in order gives it.
func restoreChains(tb testing.TB, ctx context.Context, store *objstore.Store, n, links int) (string, []map[string]string) {
	tb.Helper()
	var objs []objstore.Object
	want := make([]map[string]string, n)
	for k := range n {
		want[k] = map[string]string{}
		lo, hi := instanceVNodes(k, n)
		for e := 1; e <= links; e++ {
			var sw stateWriter
			if e == 1 {
				sw.Reset()
			}
			for i := range 20 {
				key := fmt.Sprintf("k%02d", (i+e)%25)
				if (i+e)%7 == 0 {
					sw.Delete([]byte(key))
					delete(want[k], key)
					continue
				}
				v := fmt.Sprintf("i%d e%d", k, e)
				sw.Put([]byte(key), []byte(v))
				want[k][key] = v
			}
			o, err := store.PutState(ctx, uint64(e), "n2", 2, instanceName(1, 0, k)+".n0", lo, hi, sw.buf)
			if err != nil {
				tb.Fatal(err)
			}
			objs = append(objs, o)
		}
	}
	meta, _ := json.Marshal(CommitMeta{Coordinator: "n1", LocalEpoch: uint64(links)})
	p, err := store.Commit(ctx, pointerOnly{}, objstore.Manifest{Epoch: uint64(links), Objects: objs, Meta: meta})
	if err != nil {
		tb.Fatal(err)
	}
	return p.Manifest, want
}

// TestRestoreChainsConcurrently: the objects of a chain are fetched
// concurrently but applied in order, and the instances of a node are
// prefetched concurrently: each instance's state is its chain applied
// oldest first (a delta applied out of order would leave another value
// or a deleted key).
func TestRestoreChainsConcurrently(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	fs3, store := testStore(t, ctx)
	spec := aggJob(4)
	key, want := restoreChains(t, ctx, store, 4, 12)
	fs3.Faults.SetLatency("", 2*time.Millisecond) // so that fetches overlap
	rs, err := OpenRestore(ctx, store, key)
	if err != nil {
		t.Fatal(err)
	}
	a := cluster.Assignment{Nodes: []cluster.Placed{{NodeID: "n2"}}}
	if err := rs.Prefetch(ctx, spec.Plan, 1, a, "n2"); err != nil {
		t.Fatal(err)
	}
	for k := range 4 {
		st, err := rs.InstanceState(ctx, spec.Plan, 1, 0, k)
		if err != nil {
			t.Fatal(err)
		}
		if got := stateOf(t, st); !maps.Equal(got, want[k]) {
			t.Fatalf("instance %d restores %v, want %v", k, got, want[k])
		}
	}
}

// BenchmarkRestoreChains restores 4 instances' chains of 16 objects from
// a store answering each request after 10 ms (a cloud store's round
// trip): one object at a time, that is 64 round trips.
func BenchmarkRestoreChains(b *testing.B) {
	ctx := context.Background()
	fs3, store := testStore(b, ctx)
	spec := aggJob(4)
	key, _ := restoreChains(b, ctx, store, 4, 16)
	fs3.Faults.SetLatency("", 10*time.Millisecond)
	a := cluster.Assignment{Nodes: []cluster.Placed{{NodeID: "n2"}}}
	b.ResetTimer()
	for range b.N {
		rs, err := OpenRestore(ctx, store, key)
		if err != nil {
			b.Fatal(err)
		}
		if err := rs.Prefetch(ctx, spec.Plan, 1, a, "n2"); err != nil {
			b.Fatal(err)
		}
	}
}

// testStore starts a fake S3 with bucket "ckpt" and opens a store on it.
func testStore(tb testing.TB, ctx context.Context) (*clustertest.S3, *objstore.Store) {
	tb.Helper()
	fs3 := clustertest.StartS3(tb, "ckpt")
	fs3.SetEnv(tb)
	store, err := objstore.Open(ctx, cluster.CheckpointURL{Bucket: "ckpt", Prefix: "c"})
	if err != nil {
		tb.Fatal(err)
	}
	return fs3, store
}
