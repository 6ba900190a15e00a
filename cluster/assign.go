package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Assignment says which node runs which instances of the parallel
// operators: <prefix>/assignment, written only by the coordinator in a
// transaction fenced on its term (Fence.WriteAssignment). Instance k of a
// parallel operator with N instances runs on Nodes[k*M/N] (M nodes), so a
// node owns a contiguous range of instances and so of vnodes (instance k
// owns the vnodes v with v*N/256 == k, stream.VNodeOwner): the vnode
// ranges per node of the design. Immutable.
type Assignment struct {
	// Generation grows by one with every assignment written; exchange
	// streams carry it, and a node refuses a stream of another
	// generation (a zombie of an older assignment).
	Generation  uint64    `json:"generation"`
	Coordinator string    `json:"coordinator"`
	Term        int64     `json:"term"`
	Nodes       []Placed  `json:"nodes"`
	Time        time.Time `json:"time"`
}

// Placed is one node of an assignment.
type Placed struct {
	NodeID   string `json:"node_id"`
	Exchange string `json:"exchange"` // its exchange server's address
	Lease    int64  `json:"lease"`    // its incarnation when assigned
}

// vnodes is stream.VNodes (kept here so that the membership package does
// not link the executor; cluster/assign_test.go checks they agree).
const vnodes = 256

func assignmentKey(prefix string) string { return prefix + "/assignment" }

// InstanceNode is the node that runs instance k of n.
func (a Assignment) InstanceNode(k, n int) Placed {
	return a.Nodes[k*len(a.Nodes)/max(n, 1)]
}

// Instances is the range [lo, hi) of the instances of n that node runs
// (empty when it runs none or is not in the assignment).
func (a Assignment) Instances(node string, n int) (lo, hi int) {
	lo, hi = -1, -1
	for k := range n {
		if a.InstanceNode(k, n).NodeID == node {
			if lo < 0 {
				lo = k
			}
			hi = k + 1
		}
	}
	if lo < 0 {
		return 0, 0
	}
	return lo, hi
}

// VNodes is the range [lo, hi) of vnodes that node owns at parallelism n.
func (a Assignment) VNodes(node string, n int) (lo, hi int) {
	klo, khi := a.Instances(node, n)
	if klo == khi {
		return 0, 0
	}
	lo, hi = -1, 0
	for v := range vnodes {
		if k := v * n / vnodes; k >= klo && k < khi {
			if lo < 0 {
				lo = v
			}
			hi = v + 1
		}
	}
	if lo < 0 {
		return 0, 0
	}
	return lo, hi
}

// ReadAssignment reads the current assignment; ok is false when none was
// ever written.
func ReadAssignment(ctx context.Context, cli *clientv3.Client, prefix string) (a Assignment, ok bool, err error) {
	resp, err := cli.Get(ctx, assignmentKey(prefix))
	if err != nil {
		return a, false, fmt.Errorf("cluster: read assignment: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return a, false, nil
	}
	if err := json.Unmarshal(resp.Kvs[0].Value, &a); err != nil {
		return a, false, fmt.Errorf("cluster: assignment: %w", err)
	}
	return a, true, nil
}

// WriteAssignment assigns the instances over nodes (those with an
// exchange address, in node id order) as the next generation, in one
// transaction that succeeds only while the fence's term holds and the
// assignment is the one just read (ErrNotCoordinator, ErrStalePointer
// otherwise).
func (f *Fence) WriteAssignment(ctx context.Context, nodes []NodeInfo) (Assignment, error) {
	key := assignmentKey(f.prefix)
	resp, err := f.cli.Get(ctx, key)
	if err != nil {
		return Assignment{}, fmt.Errorf("cluster: read assignment: %w", err)
	}
	var cur Assignment
	var rev int64
	if len(resp.Kvs) > 0 {
		if err := json.Unmarshal(resp.Kvs[0].Value, &cur); err != nil {
			return Assignment{}, fmt.Errorf("cluster: assignment: %w", err)
		}
		rev = resp.Kvs[0].ModRevision
	}
	a := Assignment{Generation: cur.Generation + 1, Coordinator: f.node, Term: f.term.Rev, Time: time.Now().UTC()}
	for _, n := range nodes {
		if n.Exchange != "" {
			a.Nodes = append(a.Nodes, Placed{NodeID: n.NodeID, Exchange: n.Exchange, Lease: n.Lease})
		}
	}
	if len(a.Nodes) == 0 {
		return Assignment{}, fmt.Errorf("cluster: no live node has an exchange address to assign instances to")
	}
	sort.Slice(a.Nodes, func(i, j int) bool { return a.Nodes[i].NodeID < a.Nodes[j].NodeID })
	val, err := json.Marshal(a)
	if err != nil {
		return Assignment{}, fmt.Errorf("cluster: encode assignment: %w", err)
	}
	err = f.fencedPut(ctx, key, clientv3.Compare(clientv3.ModRevision(key), "=", rev), string(val),
		fmt.Sprintf("assignment %d not written", a.Generation), fmt.Sprintf("the assignment moved while generation %d was written", a.Generation))
	if err != nil {
		return Assignment{}, err
	}
	return a, nil
}
