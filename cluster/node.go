package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// Config says how a node joins a cluster.
type Config struct {
	Target  Target
	NodeID  string
	Address string // the pgwire address other nodes and clients reach it at
	// Exchange is the address of the node's exchange server (netx), where
	// other nodes send the streams of the instances it runs ("": none).
	Exchange string
	// Role is the node's configured role, "worker" when empty; the
	// elected node is listed as "coordinator" whatever it is.
	Role string
	// LeaseTTL is how long the node stays registered without renewing
	// its lease (whole seconds, at least 1; default 10 s): a node that
	// dies or is paused disappears, and a coordinator loses its role,
	// after at most this long.
	LeaseTTL time.Duration
	// DialTimeout bounds the first connection to etcd (default 5 s).
	DialTimeout time.Duration
	// Logf logs membership changes (nil: none).
	Logf func(format string, args ...any)
	// NodeSplits is the node's --cluster-node-splits, "on" or "off"
	// ("": not said), registered with it: a coordinator refuses to place
	// a view over nodes that disagree.
	NodeSplits string
}

// NodeInfo is one node's registration, the value of <prefix>/nodes/<id>.
type NodeInfo struct {
	NodeID  string `json:"node_id"`
	Address string `json:"address"`
	// Exchange is Config.Exchange ("": the node takes no instances).
	Exchange string    `json:"exchange,omitempty"`
	Role     string    `json:"role"`
	State    string    `json:"state"`
	Runs     string    `json:"runs"`
	Started  time.Time `json:"started"`
	// Lease is the etcd lease the registration lives under: the node's
	// incarnation (a node that lost its lease registers again with
	// another).
	Lease int64 `json:"lease"`
	// NodeSplits is Config.NodeSplits.
	NodeSplits string `json:"node_splits,omitempty"`
}

// ErrDuplicateNode is returned by Join when another live process is
// registered with the same node id.
var ErrDuplicateNode = errors.New("cluster: node id already registered")

// Node is this process's membership: registration, keepalive and
// candidacy. Make one with Join; Close leaves the cluster.
type Node struct {
	cfg     Config
	cli     *clientv3.Client
	started time.Time
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}

	mu   sync.Mutex
	term Term // valid while this node is the coordinator (Rev != 0)
	info NodeInfo
	// orphaned: this node was the coordinator when it lost its lease
	// and has not registered again since (etcd unreachable, or the
	// process was paused): see Orphaned.
	orphaned bool
}

func (c *Config) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

func (c *Config) ttlSeconds() int {
	if c.LeaseTTL <= 0 {
		return 10
	}
	s := int((c.LeaseTTL + time.Second - 1) / time.Second)
	return max(s, 1)
}

// reconnect paces the etcd client's attempts to connect again after
// etcd was unreachable: gRPC's default backoff grows to 2 minutes, so
// that after a long etcd outage the nodes would come back up to that
// long after etcd; here at most a second after it.
var reconnect = grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
	MinConnectTimeout: 3 * time.Second,
}

// NewClient connects to the target's etcd endpoints.
func NewClient(t Target, dialTimeout time.Duration) (*clientv3.Client, error) {
	if dialTimeout <= 0 {
		dialTimeout = 5 * time.Second
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: t.Endpoints, DialTimeout: dialTimeout, Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(reconnect)}})
	if err != nil {
		return nil, fmt.Errorf("cluster: connect to etcd %s: %w", t, err)
	}
	return cli, nil
}

// Join connects to etcd, registers the node under a new lease and starts
// campaigning for the coordinator role. It fails if etcd cannot be
// reached within ctx or the node id stays taken for longer than the
// lease TTL (ErrDuplicateNode: another live node holds it; the lease of
// a crashed previous run of this node expires within that time).
func Join(ctx context.Context, cfg Config) (*Node, error) {
	if err := ValidNodeID(cfg.NodeID); err != nil {
		return nil, err
	}
	if cfg.Role == "" {
		cfg.Role = "worker"
	}
	cli, err := NewClient(cfg.Target, cfg.DialTimeout)
	if err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, cli: cli, started: time.Now().UTC(), done: make(chan struct{})}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	// A node restarted right after a crash finds its id still held by
	// its previous lease until that expires: wait up to one TTL (and a
	// second) for it; a live holder keeps it and Join fails.
	deadline := time.Now().Add(time.Duration(cfg.ttlSeconds()+1) * time.Second)
	var sess *concurrency.Session
	for {
		sess, err = n.register(ctx)
		if err == nil || !errors.Is(err, ErrDuplicateNode) || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond): // until the old lease expires
		}
	}
	if err != nil {
		n.cancel()
		cli.Close()
		return nil, err
	}
	go n.run(sess)
	return n, nil
}

func (n *Node) nodeKey(id string) string { return n.cfg.Target.Prefix + "/nodes/" + id }
func (n *Node) electionPrefix() string   { return n.cfg.Target.Prefix + "/election" }

// register grants a lease and creates the node's key under it, unless
// the key exists (another live process, or this node's previous lease
// not yet expired).
func (n *Node) register(ctx context.Context) (*concurrency.Session, error) {
	// The lease is granted here, under ctx, so that an unreachable etcd
	// fails Join instead of blocking it; the session keeps it alive on
	// the client's own context, so that Close can still revoke it.
	lease, err := n.cli.Grant(ctx, int64(n.cfg.ttlSeconds()))
	if err != nil {
		return nil, fmt.Errorf("cluster: grant lease in etcd %s: %w", n.cfg.Target, err)
	}
	sess, err := concurrency.NewSession(n.cli, concurrency.WithLease(lease.ID), concurrency.WithTTL(n.cfg.ttlSeconds()))
	if err != nil {
		return nil, fmt.Errorf("cluster: keep lease alive in etcd %s: %w", n.cfg.Target, err)
	}
	info := NodeInfo{NodeID: n.cfg.NodeID, Address: n.cfg.Address, Exchange: n.cfg.Exchange, Role: n.cfg.Role, State: "running",
		Runs: "nothing", Started: n.started, Lease: int64(sess.Lease()), NodeSplits: n.cfg.NodeSplits}
	val, _ := json.Marshal(info)
	key := n.nodeKey(n.cfg.NodeID)
	resp, err := n.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(val), clientv3.WithLease(sess.Lease()))).
		Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		sess.Close()
		return nil, fmt.Errorf("cluster: register node %s: %w", n.cfg.NodeID, err)
	}
	if !resp.Succeeded {
		sess.Close()
		var other NodeInfo
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			_ = json.Unmarshal(kvs[0].Value, &other)
		}
		return nil, fmt.Errorf("%w: node id %s is registered by %s (lease %x); stop that process or wait for its lease to expire (%d s), or give another --node-id",
			ErrDuplicateNode, n.cfg.NodeID, other.Address, other.Lease, n.cfg.ttlSeconds())
	}
	n.mu.Lock()
	n.info = info
	n.orphaned = false
	n.mu.Unlock()
	n.cfg.logf("cluster: node %s registered in %s (lease %x, ttl %d s)", n.cfg.NodeID, n.cfg.Target, sess.Lease(), n.cfg.ttlSeconds())
	return sess, nil
}

// run campaigns with sess until it ends, then registers again with a new
// lease, until Close.
func (n *Node) run(sess *concurrency.Session) {
	defer close(n.done)
	for {
		lost := n.serve(sess)
		n.mu.Lock()
		n.orphaned = lost && n.term.Rev != 0
		n.term = Term{}
		n.mu.Unlock()
		if !lost {
			return
		}
		n.cfg.logf("cluster: node %s lost its lease (etcd unreachable or the process was paused past %d s); registering again", n.cfg.NodeID, n.cfg.ttlSeconds())
		// If the lease still lives in etcd (its keepalives stopped
		// arriving but it has not expired there; etcd also extends
		// every lease by its TTL when it starts again after an outage),
		// revoking it frees the node id and the old candidacy at once;
		// it fails harmlessly if it expired. Tried before each attempt
		// to register: etcd may be unreachable for a while.
		old := sess.Lease()
		sess.Orphan() // stops its keepalive
		for {
			var err error
			rctx, cancel := context.WithTimeout(n.ctx, time.Duration(n.cfg.ttlSeconds())*time.Second)
			if old != 0 {
				if _, rerr := n.cli.Revoke(rctx, old); rerr == nil || errors.Is(rerr, rpctypes.ErrLeaseNotFound) {
					old = 0
				}
			}
			sess, err = n.register(rctx)
			cancel()
			if err == nil {
				break
			}
			n.cfg.logf("%v", err)
			select {
			case <-n.ctx.Done():
				return
			case <-time.After(time.Second): // retry pacing
			}
		}
	}
}

// serve campaigns under sess and holds the role while sess lives. It
// returns true when the session was lost, false on Close.
func (n *Node) serve(sess *concurrency.Session) (lost bool) {
	el := concurrency.NewElection(sess, n.electionPrefix())
	cctx, ccancel := context.WithCancel(n.ctx)
	defer ccancel()
	won := make(chan error, 1)
	inflight := true // a Campaign goroutine has not sent on won yet
	campaign := func() { won <- el.Campaign(cctx, n.cfg.NodeID) }
	go campaign()
	var retry <-chan time.Time
	for {
		select {
		case <-retry:
			retry, inflight = nil, true
			go campaign() // Campaign reuses the candidate key it created
		case err := <-won:
			inflight = false
			if err != nil {
				if cctx.Err() == nil {
					// A transient etcd error: the candidacy must go on
					// being watched, or this node could be the oldest
					// candidate without knowing it.
					n.cfg.logf("cluster: campaign of node %s: %v; retrying", n.cfg.NodeID, err)
					retry = time.After(500 * time.Millisecond)
				}
				continue // the session ending or Close ends the loop
			}
			won = nil
			n.setTerm(Term{Key: el.Key(), Rev: el.Rev()})
			n.cfg.logf("cluster: node %s is the coordinator (term %d)", n.cfg.NodeID, el.Rev())
		case <-sess.Done():
			return n.ctx.Err() == nil
		case <-n.ctx.Done():
			ccancel()
			if inflight {
				<-won // it returns at once: its context is cancelled
			}
			rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			if n.IsCoordinator() {
				_ = el.Resign(rctx)
			}
			cancel()
			n.setTerm(Term{})
			_ = sess.Close() // revokes the lease: the node key goes at once
			return false
		}
	}
}

func (n *Node) setTerm(t Term) {
	n.mu.Lock()
	n.term = t
	n.mu.Unlock()
}

// ID is the node's id.
func (n *Node) ID() string { return n.cfg.NodeID }

// Target is the cluster the node joined.
func (n *Node) Target() Target { return n.cfg.Target }

// Lease is the node's current incarnation: the etcd lease its
// registration lives under (0 before it registered).
func (n *Node) Lease() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.info.Lease
}

// Client is the node's etcd client (owned by the node; closed by Close).
func (n *Node) Client() *clientv3.Client { return n.cli }

// IsCoordinator reports whether this node believes it is the
// coordinator. Only a commit through Fence can make that belief safe.
func (n *Node) IsCoordinator() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.term.Rev != 0
}

// Orphaned reports whether this node was the coordinator when it lost
// its lease and has not been able to register again since: etcd is
// unreachable (or was, while the process was paused). Its views' jobs
// still run here, so it goes on answering reads of them; it commits
// nothing (it has no Fence) and takes no decision. Once it registers
// again it is a candidate like any other node.
func (n *Node) Orphaned() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.orphaned
}

// Fence returns the node's current term as a fence for commits, or
// ErrNotCoordinator when it is not the coordinator.
func (n *Node) Fence() (*Fence, error) {
	n.mu.Lock()
	t := n.term
	n.mu.Unlock()
	if t.Rev == 0 {
		return nil, fmt.Errorf("%w: node %s", ErrNotCoordinator, n.cfg.NodeID)
	}
	return &Fence{cli: n.cli, prefix: n.cfg.Target.Prefix, term: t, node: n.cfg.NodeID}, nil
}

// Nodes lists the live nodes, sorted by id, by one linearizable read of
// the node keys and the election: the node whose candidacy is the oldest
// is listed with role "coordinator".
func (n *Node) Nodes(ctx context.Context) ([]NodeInfo, error) {
	return ListNodes(ctx, n.cli, n.cfg.Target.Prefix)
}

// ListNodes is Nodes for any client of the cluster under prefix.
func ListNodes(ctx context.Context, cli *clientv3.Client, prefix string) ([]NodeInfo, error) {
	resp, err := cli.Txn(ctx).Then(
		clientv3.OpGet(prefix+"/nodes/", clientv3.WithPrefix()),
		clientv3.OpGet(prefix+"/election/", clientv3.WithFirstCreate()...),
	).Commit()
	if err != nil {
		return nil, fmt.Errorf("cluster: list nodes: %w", err)
	}
	leader := ""
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
		leader = string(kvs[0].Value)
	}
	var out []NodeInfo
	for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
		var info NodeInfo
		if err := json.Unmarshal(kv.Value, &info); err != nil {
			return nil, fmt.Errorf("cluster: node key %s: %w", kv.Key, err)
		}
		if info.NodeID == leader {
			info.Role = "coordinator"
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeID < out[j].NodeID })
	return out, nil
}

// Close resigns, revokes the lease (the node's key disappears at once)
// and closes the etcd client.
func (n *Node) Close() error {
	n.cancel()
	<-n.done
	return n.cli.Close()
}
