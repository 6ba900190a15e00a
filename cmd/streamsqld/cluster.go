package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/objstore"
	"github.com/streamsql/streamsql/types"
)

// clusterConfig is the validated cluster part of the command line
// (docs/cluster.md).
type clusterConfig struct {
	target     cluster.Target
	checkpoint cluster.CheckpointURL
	nodeID     string
	leaseTTL   time.Duration
	advertise  string // the pgwire address other nodes list ("": the listen address)
	// ckptTimeout bounds one cluster checkpoint: the coordinator's wait
	// for the reports, its uploads and the manifest; a worker's uploads.
	ckptTimeout time.Duration
	// exchangeListen and exchangeAdvertise are where the exchange server
	// listens and the address other nodes reach it at ("": derived from
	// the pgwire listen and advertised addresses, any port);
	// exchangeTimeout is how long an exchange stream may stay silent.
	exchangeListen, exchangeAdvertise string
	exchangeTimeout                   time.Duration
	// nodeSplits runs split sources on the nodes (dist.Runner.Splits).
	nodeSplits bool
}

// clusterFlagValues are the raw flags, parsed by parse.
type clusterFlagValues struct {
	cluster, checkpointURL, nodeID, advertise *string
	exchangeListen, exchangeAdvertise         *string
	leaseTTL, ckptTimeout, exchangeTimeout    *time.Duration
	nodeSplits                                *bool
}

func clusterFlags(fs *flag.FlagSet) clusterFlagValues {
	return clusterFlagValues{
		cluster: fs.String("cluster", "",
			"join a cluster: etcd://host:2379[,host:2379]/prefix (membership, coordinator election and the committed checkpoint live in that etcd under prefix; needs --node-id and --checkpoint-url; see docs/cluster.md for what a cluster runs today)"),
		checkpointURL: fs.String("checkpoint-url", "",
			"with --cluster: where checkpoints go, s3://bucket/prefix on any S3-compatible store (endpoint and credentials from AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION); checked at start"),
		nodeID: fs.String("node-id", "",
			"with --cluster: this node's id, unique in the cluster (letters, digits, '-', '_', '.'; e.g. the StatefulSet pod name)"),
		advertise: fs.String("advertise-address", "",
			"with --cluster: the host:port other nodes and clients reach this server's --listen at (default: the listen address)"),
		leaseTTL: fs.Duration("cluster-lease-ttl", 10*time.Second,
			"with --cluster: how long this node stays registered, and keeps the coordinator role, without renewing its etcd lease (whole seconds): a dead or paused node is replaced after about this long"),
		ckptTimeout: fs.Duration("cluster-checkpoint-timeout", 30*time.Second,
			"with --cluster: how long one checkpoint may take to reach the object store (the workers' uploads, the coordinator's wait for them, its own uploads and the manifest) before it is given up; the next one is tried"),
		exchangeListen: fs.String("exchange-listen", "",
			"with --cluster: host:port of the data exchange between nodes (default: the --listen host, a random port)"),
		exchangeAdvertise: fs.String("advertise-exchange", "",
			"with --cluster: the host:port other nodes reach this node's exchange at (default: the --advertise-address host and the exchange's port)"),
		exchangeTimeout: fs.Duration("cluster-exchange-timeout", 10*time.Second,
			"with --cluster: how long a data exchange connection between nodes may stay silent (no data, no heartbeat) before the views using it fail and are restarted from the last checkpoint: detects a dead, paused or partitioned peer"),
		nodeSplits: fs.Bool("cluster-node-splits", true,
			"with --cluster (the same on every node; =false on every node reads every source on the coordinator): read each split of a split source (nexmark, datagen, kafka partitions) on the node of the instance of the same number, its stateless operators and hash exchange with it, the exchange sending to every node directly; only for a keyed operator whose every input is such a source; the keyed operators above it at the same parallelism (over filters and projections only) then run on the nodes too, exchanging between them directly"),
	}
}

// parse validates the cluster flags; nil without --cluster. given says
// which flags the command line set.
func (v clusterFlagValues) parse(given map[string]bool) (*clusterConfig, error) {
	if *v.cluster == "" {
		for _, f := range []string{"checkpoint-url", "node-id", "advertise-address", "cluster-lease-ttl", "cluster-checkpoint-timeout",
			"exchange-listen", "advertise-exchange", "cluster-exchange-timeout", "cluster-node-splits"} {
			if given[f] {
				return nil, fmt.Errorf("--%s needs --cluster", f)
			}
		}
		return nil, nil
	}
	t, err := cluster.ParseTarget(*v.cluster)
	if err != nil {
		return nil, err
	}
	if *v.nodeID == "" {
		return nil, fmt.Errorf("--cluster needs --node-id")
	}
	if err := cluster.ValidNodeID(*v.nodeID); err != nil {
		return nil, err
	}
	if *v.checkpointURL == "" {
		return nil, fmt.Errorf("--cluster needs --checkpoint-url (s3://bucket/prefix)")
	}
	cu, err := cluster.ParseCheckpointURL(*v.checkpointURL)
	if err != nil {
		return nil, err
	}
	if *v.leaseTTL < time.Second || *v.leaseTTL%time.Second != 0 {
		return nil, fmt.Errorf("--cluster-lease-ttl must be a whole number of seconds, at least 1s, not %s", *v.leaseTTL)
	}
	if *v.ckptTimeout <= 0 {
		return nil, fmt.Errorf("--cluster-checkpoint-timeout must be positive, not %s", *v.ckptTimeout)
	}
	if *v.exchangeTimeout < 100*time.Millisecond {
		return nil, fmt.Errorf("--cluster-exchange-timeout must be at least 100ms, not %s", *v.exchangeTimeout)
	}
	for flag, a := range map[string]string{"advertise-address": *v.advertise, "exchange-listen": *v.exchangeListen, "advertise-exchange": *v.exchangeAdvertise} {
		if a != "" {
			if _, _, err := net.SplitHostPort(a); err != nil {
				return nil, fmt.Errorf("--%s %q: %w", flag, a, err)
			}
		}
	}
	return &clusterConfig{target: t, checkpoint: cu, nodeID: *v.nodeID, leaseTTL: *v.leaseTTL, advertise: *v.advertise,
		ckptTimeout: *v.ckptTimeout, exchangeListen: *v.exchangeListen, exchangeAdvertise: *v.exchangeAdvertise,
		exchangeTimeout: *v.exchangeTimeout, nodeSplits: *v.nodeSplits}, nil
}

// joinCluster checks the checkpoint store and joins the cluster; the
// node is the engine's Config.Cluster. listen is the bound pgwire
// address, exchange the node's exchange server's.
func joinCluster(cc *clusterConfig, listen net.Addr, exchange string, logf func(string, ...any)) (*cluster.Node, *objstore.Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, err := objstore.Open(ctx, cc.checkpoint)
	if err != nil {
		return nil, nil, fmt.Errorf("--checkpoint-url %s: %w", cc.checkpoint, err)
	}
	addr := cc.advertise
	if addr == "" {
		addr = listen.String()
	}
	splits := "off"
	if cc.nodeSplits {
		splits = "on"
	}
	n, err := cluster.Join(ctx, cluster.Config{Target: cc.target, NodeID: cc.nodeID, Address: addr, Exchange: exchange, LeaseTTL: cc.leaseTTL, Logf: logf,
		NodeSplits: splits})
	if err != nil {
		return nil, nil, fmt.Errorf("--cluster %s: %w", cc.target, err)
	}
	return n, store, nil
}

func (c *clusterNode) Nodes(ctx context.Context) ([]catalog.NodeStatus, error) {
	nodes, err := c.n.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]catalog.NodeStatus, len(nodes))
	for i, x := range nodes {
		out[i] = catalog.NodeStatus{NodeID: x.NodeID, Address: x.Address, Role: x.Role, State: x.State, Runs: x.Runs,
			Started: types.TimestampValue(x.Started.UnixMicro()), Self: x.NodeID == c.n.ID()}
	}
	return out, nil
}
