package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster/clustertest"
	"github.com/streamsql/streamsql/exec/stream"
)

// TestAssignmentRanges: every instance of every parallelism has one node,
// nodes own contiguous instance ranges in node id order, and a node's
// vnodes are exactly those stream.VNodeOwner gives its instances.
func TestAssignmentRanges(t *testing.T) {
	if vnodes != stream.VNodes {
		t.Fatalf("cluster's vnodes %d, stream's %d", vnodes, stream.VNodes)
	}
	for m := 1; m <= 4; m++ {
		a := Assignment{}
		for i := range m {
			a.Nodes = append(a.Nodes, Placed{NodeID: string(rune('a' + i))})
		}
		for _, n := range []int{1, 2, 3, 4, 8, 256} {
			count := 0
			for _, p := range a.Nodes {
				lo, hi := a.Instances(p.NodeID, n)
				for k := lo; k < hi; k++ {
					if a.InstanceNode(k, n).NodeID != p.NodeID {
						t.Fatalf("m=%d n=%d: instance %d in %s's range runs on %s", m, n, k, p.NodeID, a.InstanceNode(k, n).NodeID)
					}
				}
				count += hi - lo
				vlo, vhi := a.VNodes(p.NodeID, n)
				for v := range stream.VNodes {
					k := stream.VNodeOwner(uint16(v), n)
					own := k >= lo && k < hi
					if own != (v >= vlo && v < vhi) {
						t.Fatalf("m=%d n=%d: vnode %d (instance %d) and %s's vnodes [%d,%d)", m, n, v, k, p.NodeID, vlo, vhi)
					}
				}
			}
			if count != n {
				t.Fatalf("m=%d n=%d: %d instances placed", m, n, count)
			}
		}
	}
}

// TestAssignmentFenced: the coordinator writes generation after
// generation; a node that is not the coordinator cannot, and neither can
// a coordinator whose term ended.
func TestAssignmentFenced(t *testing.T) {
	e := clustertest.StartEtcd(t)
	a := join(t, e.Endpoint, "/as", "a")
	waitFor(t, "a to be coordinator", a.IsCoordinator)
	b := join(t, e.Endpoint, "/as", "b")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	nodes := []NodeInfo{{NodeID: "b", Exchange: "127.0.0.1:2"}, {NodeID: "a", Exchange: "127.0.0.1:1"}, {NodeID: "c"}}
	if _, ok, err := ReadAssignment(ctx, a.Client(), "/as"); ok || err != nil {
		t.Fatalf("an assignment before any: %v %v", ok, err)
	}
	fa, err := a.Fence()
	if err != nil {
		t.Fatal(err)
	}
	got, err := fa.WriteAssignment(ctx, nodes)
	if err != nil {
		t.Fatal(err)
	}
	if got.Generation != 1 || len(got.Nodes) != 2 || got.Nodes[0].NodeID != "a" || got.Nodes[1].Exchange != "127.0.0.1:2" {
		t.Fatalf("assignment %+v", got)
	}
	if g, _ := fa.WriteAssignment(ctx, nodes); g.Generation != 2 {
		t.Fatalf("second generation %d", g.Generation)
	}
	read, ok, err := ReadAssignment(ctx, b.Client(), "/as")
	if err != nil || !ok || read.Generation != 2 || read.Coordinator != "a" {
		t.Fatalf("read %+v %v %v", read, ok, err)
	}
	if _, err := fa.WriteAssignment(ctx, []NodeInfo{{NodeID: "c"}}); err == nil {
		t.Fatal("an assignment without exchange addresses")
	}

	expireLease(ctx, t, b, a)
	waitFor(t, "b to be coordinator", b.IsCoordinator)
	if _, err := fa.WriteAssignment(ctx, nodes); !errors.Is(err, ErrNotCoordinator) {
		t.Fatalf("stale coordinator's assignment: %v", err)
	}
	fb, err := b.Fence()
	if err != nil {
		t.Fatal(err)
	}
	if g, err := fb.WriteAssignment(ctx, nodes[:1]); err != nil || g.Generation != 3 || len(g.Nodes) != 1 {
		t.Fatalf("new coordinator's assignment %+v: %v", g, err)
	}
}
