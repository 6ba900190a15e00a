package dist

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/clustertest"
	"github.com/streamsql/streamsql/cluster/objstore"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/dataflow/netx"
)

// ensureTables runs r.EnsureTables and checks it loaded from the
// checkpoint of epoch from (0: loaded nothing); it returns the images.
func ensureTables(t *testing.T, ctx context.Context, r *Runner, from uint64) map[uint32][]byte {
	t.Helper()
	var got map[uint32][]byte
	done, at, err := r.EnsureTables(ctx, func(images map[uint32][]byte) error { got = images; return nil })
	if err != nil || !done || at != from || (from == 0) != (got == nil) {
		t.Fatalf("EnsureTables: done %v, from %d (want %d), loaded %v, %v", done, at, from, got != nil, err)
	}
	return got
}

// TestTablesCommittedAndLoaded: a coordinator commits nothing before its
// tables are current in its term; each commit names every table image,
// uploading only those not uploaded before (an unchanged table is named
// again, an object of the earlier epoch); the next coordinator loads the
// committed checkpoint's images, and its writes wait until then.
func TestTablesCommittedAndLoaded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e, _, store := etcdAndStore(t, ctx)
	const prefix = "/tables"
	join := func(id string) (*cluster.Node, *Runner) {
		node, err := cluster.Join(ctx, cluster.Config{Target: cluster.Target{Endpoints: []string{e.Endpoint}, Prefix: prefix},
			NodeID: id, Address: "127.0.0.1:1", LeaseTTL: 2 * time.Second, Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { node.Close() })
		return node, NewRunner(node, nil, netx.Options{}, store, t.Logf)
	}
	n0, r0 := join("c0")
	for !n0.IsCoordinator() {
		if ctx.Err() != nil {
			t.Fatal("not elected")
		}
		time.Sleep(10 * time.Millisecond) // polling with the context's deadline
	}
	local := func(tables ...LocalFile) LocalPart {
		return LocalPart{Files: []LocalFile{{Name: "MANIFEST-1", Size: -1, Data: []byte("local")}}, Tables: tables}
	}
	e1 := dataflow.EpochAt(time.Now())
	if _, err := r0.CommitEpoch(ctx, e1, 10*time.Second, local()); err == nil || !strings.Contains(err.Error(), "tables are not loaded") {
		t.Fatalf("a commit before the tables are current: %v", err)
	}
	ensureTables(t, ctx, r0, 0) // nothing committed
	a1 := LocalFile{Name: "16384.0000aaaa.3", Size: -1, Data: []byte("abc")}
	b1 := LocalFile{Name: "16390.0000bbbb.2", Size: -1, Data: []byte("xy")}
	if _, err := r0.CommitEpoch(ctx, e1, 10*time.Second, local(a1, b1)); err != nil {
		t.Fatal(err)
	}
	// a changed, b not (named, not read again).
	a2 := LocalFile{Name: "16384.0000cccc.4", Size: -1, Data: []byte("abcd")}
	if !r0.TableUploaded(b1.Name) || r0.TableUploaded(a2.Name) {
		t.Fatal("TableUploaded does not know what was uploaded")
	}
	e2 := e1 + 1
	p, err := r0.CommitEpoch(ctx, e2, 10*time.Second, local(a2, LocalFile{Name: b1.Name, Size: -1}))
	if err != nil {
		t.Fatal(err)
	}
	m, err := store.ReadManifest(ctx, p.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	epochs := map[string]uint64{}
	for _, o := range m.Objects {
		epochs[o.Op] = o.Epoch
	}
	if epochs["table/"+a2.Name] != e2 || epochs["table/"+b1.Name] != e1 || len(epochs) != 3 {
		t.Fatalf("checkpoint %d's objects by epoch: %v", e2, epochs)
	}

	// The next coordinator loads the committed images.
	n1, r1 := join("c1")
	waitDone := make(chan error, 1)
	n0.Close()
	for !n1.IsCoordinator() {
		if ctx.Err() != nil {
			t.Fatal("c1 not elected")
		}
		time.Sleep(10 * time.Millisecond) // polling with the context's deadline
	}
	go func() { waitDone <- r1.WaitTables(ctx) }()
	select {
	case err := <-waitDone:
		t.Fatalf("WaitTables returned before the tables were loaded: %v", err)
	case <-time.After(100 * time.Millisecond): // what must not happen, given time to happen
	}
	got := ensureTables(t, ctx, r1, e2)
	if string(got[16384]) != "abcd" || string(got[16390]) != "xy" || len(got) != 2 {
		t.Fatalf("loaded %v", got)
	}
	if err := <-waitDone; err != nil {
		t.Fatalf("WaitTables: %v", err)
	}
	if !r1.TableUploaded(b1.Name) || r1.TablesLoadedFrom() != e2 {
		t.Fatalf("the loaded images are not known as uploaded (%v) or loaded from %d", r1.TableUploaded(b1.Name), r1.TablesLoadedFrom())
	}
	ensureTables(t, ctx, r1, 0) // current in this term: nothing more to load
}

// etcdAndStore starts an etcd and an S3 store for a test and opens the
// checkpoint store on it.
func etcdAndStore(t *testing.T, ctx context.Context) (*clustertest.Etcd, *clustertest.S3, *objstore.Store) {
	t.Helper()
	e := clustertest.StartEtcd(t)
	fs3 := clustertest.StartS3(t, "ckpt")
	fs3.SetEnv(t)
	store, err := objstore.Open(ctx, cluster.CheckpointURL{Bucket: "ckpt", Prefix: "c"})
	if err != nil {
		t.Fatal(err)
	}
	return e, fs3, store
}

// coordinatorRunner starts etcd and the store, joins node c0 under
// prefix, waits until it is the coordinator and returns its runner
// (without tables ensured). The node is closed at the test's end.
func coordinatorRunner(t *testing.T, ctx context.Context, prefix string) (*clustertest.S3, *objstore.Store, *cluster.Node, *Runner) {
	t.Helper()
	e, fs3, store := etcdAndStore(t, ctx)
	node, err := cluster.Join(ctx, cluster.Config{Target: cluster.Target{Endpoints: []string{e.Endpoint}, Prefix: prefix},
		NodeID: "c0", Address: "127.0.0.1:1", LeaseTTL: 2 * time.Second, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	for !node.IsCoordinator() {
		if ctx.Err() != nil {
			t.Fatal("not elected")
		}
		time.Sleep(10 * time.Millisecond) // polling with the context's deadline
	}
	return fs3, store, node, NewRunner(node, nil, netx.Options{}, store, t.Logf)
}
