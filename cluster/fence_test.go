package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster/clustertest"
)

// TestStaleCoordinatorCannotCommit: coordinator a takes its fence, then
// is "paused" past its lease (the lease is revoked, as expiry would) while
// b is elected. a still holds its fence and believes nothing changed, but
// its commit fails with ErrNotCoordinator and leaves the pointer as b
// committed it; b's commits go on.
func TestStaleCoordinatorCannotCommit(t *testing.T) {
	e := clustertest.StartEtcd(t)
	a := join(t, e.Endpoint, "/c", "a")
	waitFor(t, "a to be coordinator", a.IsCoordinator)
	b := join(t, e.Endpoint, "/c", "b")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	fa, err := a.Fence()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Fence(); !errors.Is(err, ErrNotCoordinator) {
		t.Fatalf("b.Fence() err = %v, want ErrNotCoordinator", err)
	}
	if _, err := fa.CommitPointer(ctx, 10, "m10"); err != nil {
		t.Fatalf("a's first commit: %v", err)
	}
	if _, err := fa.CommitPointer(ctx, 10, "again"); !errors.Is(err, ErrStalePointer) {
		t.Fatalf("same epoch again: err = %v, want ErrStalePointer", err)
	}

	expireLease(ctx, t, b, a)
	waitFor(t, "b to be coordinator", b.IsCoordinator)
	fb, err := b.Fence()
	if err != nil {
		t.Fatal(err)
	}
	if fb.Term() == fa.Term() {
		t.Fatalf("new term %v equals the old one", fb.Term())
	}
	if _, err := fb.CommitPointer(ctx, 20, "m20"); err != nil {
		t.Fatalf("b's commit: %v", err)
	}
	// The zombie tries to commit a newer epoch: refused by etcd.
	if _, err := fa.CommitPointer(ctx, 30, "zombie"); !errors.Is(err, ErrNotCoordinator) {
		t.Fatalf("stale coordinator's commit: err = %v, want ErrNotCoordinator", err)
	}
	p, _, ok, err := ReadPointer(ctx, b.Client(), "/c")
	if err != nil || !ok {
		t.Fatalf("read pointer: %v %v", ok, err)
	}
	if p.Epoch != 20 || p.Manifest != "m20" || p.Coordinator != "b" || p.Previous != 10 || p.PreviousManifest != "m10" {
		t.Fatalf("pointer = %+v", p)
	}
	// Even when a comes back as a candidate it gets a new term, never its old one.
	waitFor(t, "a to register again", func() bool {
		ns, err := b.Nodes(ctx)
		return err == nil && len(ns) == 2
	})
	if _, err := fa.CommitPointer(ctx, 40, "zombie"); !errors.Is(err, ErrNotCoordinator) {
		t.Fatalf("after re-registering, the old fence: err = %v", err)
	}
}

// TestFenceReplacedLeaderSameNode: a coordinator that resigns and wins
// again has a new term; a fence of its first term cannot commit.
func TestFenceReplacedLeaderSameNode(t *testing.T) {
	e := clustertest.StartEtcd(t)
	a := join(t, e.Endpoint, "/c", "a")
	waitFor(t, "a to be coordinator", a.IsCoordinator)
	old, _ := a.Fence()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	expireLease(ctx, t, a, a)
	waitFor(t, "a to win a new term", func() bool {
		f, err := a.Fence()
		return err == nil && f.Term() != old.Term()
	})
	if _, err := old.CommitPointer(ctx, 1, "m"); !errors.Is(err, ErrNotCoordinator) {
		t.Fatalf("old term's commit: err = %v, want ErrNotCoordinator", err)
	}
	f, _ := a.Fence()
	if _, err := f.CommitPointer(ctx, 1, "m"); err != nil {
		t.Fatalf("new term's commit: %v", err)
	}
}

// TestEtcdOutage: etcd is stopped for longer than the lease TTL, then
// started again. While it is down nobody can commit; afterwards there
// is exactly one coordinator, both nodes are listed, and only the
// coordinator's fence commits (no split brain).
func TestEtcdOutage(t *testing.T) {
	e := clustertest.StartEtcd(t)
	a := join(t, e.Endpoint, "/c", "a")
	waitFor(t, "a to be coordinator", a.IsCoordinator)
	b := join(t, e.Endpoint, "/c", "b")
	fa, _ := a.Fence()

	e.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	if _, err := fa.CommitPointer(ctx, 1, "m1"); err == nil {
		t.Fatal("commit with etcd down succeeded")
	}
	cancel()
	// Down for more than the TTL (1 s): the nodes' keepalives fail.
	waitFor(t, "the nodes to notice", func() bool { return !a.IsCoordinator() })
	e.Restart(t)

	waitFor(t, "one coordinator and two nodes", func() bool {
		c := coordinators(a, b)
		if len(c) != 1 {
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		ns, err := c[0].Nodes(ctx)
		if err != nil || len(ns) != 2 {
			return false
		}
		for _, n := range ns {
			if (n.Role == "coordinator") != (n.NodeID == c[0].ID()) {
				return false
			}
		}
		return true
	})
	leader := coordinators(a, b)[0]
	other := a
	if leader == a {
		other = b
	}
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := other.Fence(); !errors.Is(err, ErrNotCoordinator) {
		t.Fatalf("the worker has a fence: %v", err)
	}
	if _, err := fa.CommitPointer(ctx, 1, "old"); !errors.Is(err, ErrNotCoordinator) {
		t.Fatalf("a's fence from before the outage: err = %v, want ErrNotCoordinator", err)
	}
	f, err := leader.Fence()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.CommitPointer(ctx, 1, "m1"); err != nil {
		t.Fatalf("the coordinator's commit after the outage: %v", err)
	}
}
