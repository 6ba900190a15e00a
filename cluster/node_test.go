package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster/clustertest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// join starts a node in the cluster of etcd at endpoint under prefix.
func join(t *testing.T, endpoint, prefix, id string) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := Join(ctx, Config{Target: Target{Endpoints: []string{endpoint}, Prefix: prefix}, NodeID: id,
		Address: "127.0.0.1:5" + fmt.Sprint(len(id)), LeaseTTL: time.Second, Logf: t.Logf})
	if err != nil {
		t.Fatalf("join %s: %v", id, err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// waitFor polls cond until it holds or 20 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}
}

// expireLease revokes n's lease through via's client, as its expiry
// would (n's session ends; another node may win the election).
func expireLease(ctx context.Context, t *testing.T, via, n *Node) {
	t.Helper()
	n.mu.Lock()
	lease := n.info.Lease
	n.mu.Unlock()
	if _, err := via.Client().Revoke(ctx, clientv3.LeaseID(lease)); err != nil {
		t.Fatal(err)
	}
}

func listing(t *testing.T, n *Node) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	nodes, err := n.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, x := range nodes {
		parts = append(parts, x.NodeID+":"+x.Role+":"+x.State)
	}
	return strings.Join(parts, " ")
}

func coordinators(nodes ...*Node) (c []*Node) {
	for _, n := range nodes {
		if n.IsCoordinator() {
			c = append(c, n)
		}
	}
	return c
}

// TestMembershipAndElection: two nodes register, exactly one is the
// coordinator and both listings agree; a duplicate id is refused; when
// the coordinator leaves, the other takes over and the listing follows.
func TestMembershipAndElection(t *testing.T) {
	e := clustertest.StartEtcd(t)
	a := join(t, e.Endpoint, "/c1", "a")
	waitFor(t, "a to be coordinator", a.IsCoordinator)
	b := join(t, e.Endpoint, "/c1", "b")
	if got, want := listing(t, b), "a:coordinator:running b:worker:running"; got != want {
		t.Fatalf("listing on b = %q, want %q", got, want)
	}
	if got := coordinators(a, b); len(got) != 1 || got[0] != a {
		t.Fatalf("coordinators = %v", got)
	}
	// Another cluster in the same etcd sees none of it.
	other := join(t, e.Endpoint, "/c2", "a")
	waitFor(t, "the other cluster's own coordinator", other.IsCoordinator)
	if got, want := listing(t, other), "a:coordinator:running"; got != want {
		t.Fatalf("other cluster's listing = %q, want %q", got, want)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Join(ctx, Config{Target: Target{Endpoints: []string{e.Endpoint}, Prefix: "/c1"}, NodeID: "b", Address: "x:1", LeaseTTL: time.Second})
	if !errors.Is(err, ErrDuplicateNode) || !strings.Contains(err.Error(), b.cfg.Address) {
		t.Fatalf("duplicate id: err = %v, want ErrDuplicateNode naming %s", err, b.cfg.Address)
	}

	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b to take over", b.IsCoordinator)
	if got, want := listing(t, b), "b:coordinator:running"; got != want {
		t.Fatalf("after a left: listing = %q, want %q", got, want)
	}
}

// TestLeaseExpiryRemovesNode: a node whose lease ends (as when it is
// killed or paused past its TTL) disappears from the listing and loses
// the coordinator role; it then registers again with a new lease.
func TestLeaseExpiryRemovesNode(t *testing.T) {
	e := clustertest.StartEtcd(t)
	a := join(t, e.Endpoint, "/c", "a")
	waitFor(t, "a to be coordinator", a.IsCoordinator)
	b := join(t, e.Endpoint, "/c", "b")
	a.mu.Lock()
	old := a.info.Lease
	a.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := b.Client().Revoke(ctx, clientv3.LeaseID(old)); err != nil { // what expiry does
		t.Fatal(err)
	}
	waitFor(t, "b to take over", b.IsCoordinator)
	waitFor(t, "a to notice", func() bool { return !a.IsCoordinator() })
	waitFor(t, "a to register again", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.info.Lease != old && listing(t, b) == "a:worker:running b:coordinator:running"
	})
}

// TestRestartAfterCrashWaitsForOldLease: the id of a node that crashed
// is held by its old lease until it expires; a new Join with that id
// waits for it instead of failing.
func TestRestartAfterCrashWaitsForOldLease(t *testing.T) {
	e := clustertest.StartEtcd(t)
	cli, err := NewClient(Target{Endpoints: []string{e.Endpoint}, Prefix: "/c"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lease, err := cli.Grant(ctx, 2) // the crashed run's lease, no keepalive
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, "/c/nodes/a", `{"node_id":"a","address":"old:1"}`, clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	n, err := Join(ctx, Config{Target: Target{Endpoints: []string{e.Endpoint}, Prefix: "/c"}, NodeID: "a", Address: "new:1", LeaseTTL: 2 * time.Second})
	if err != nil {
		t.Fatalf("Join after the old lease: %v", err)
	}
	defer n.Close()
	t.Logf("joined %.2f s after the crash's lease was granted", time.Since(start).Seconds())
	if got := listing(t, n); !strings.HasPrefix(got, "a:") {
		t.Fatalf("listing = %q", got)
	}
	ns, _ := n.Nodes(ctx)
	if ns[0].Address != "new:1" {
		t.Fatalf("address = %q", ns[0].Address)
	}
}
