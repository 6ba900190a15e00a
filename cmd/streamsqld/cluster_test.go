package main

import (
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster"
)

func TestClusterFlagsParse(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	if err != nil || cfg.cluster != nil {
		t.Fatalf("without --cluster: %+v, %v", cfg.cluster, err)
	}
	cfg, err = parseFlags([]string{"--cluster", "etcd://e1:2379,e2/sq/prod", "--checkpoint-url", "s3://b/ck", "--node-id", "n-1",
		"--cluster-lease-ttl", "3s", "--advertise-address", "n1.internal:5433"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := &clusterConfig{target: cluster.Target{Endpoints: []string{"e1:2379", "e2:2379"}, Prefix: "/sq/prod"},
		checkpoint: cluster.CheckpointURL{Bucket: "b", Prefix: "ck"}, nodeID: "n-1", leaseTTL: 3 * time.Second, advertise: "n1.internal:5433",
		ckptTimeout: 30 * time.Second, exchangeTimeout: 10 * time.Second, nodeSplits: true}
	if !reflect.DeepEqual(cfg.cluster, want) {
		t.Fatalf("cluster = %+v, want %+v", cfg.cluster, want)
	}
	cfg, err = parseFlags([]string{"--cluster", "etcd://e/p", "--checkpoint-url", "s3://b", "--node-id", "n", "--cluster-node-splits=false"}, io.Discard)
	if err != nil || cfg.cluster.nodeSplits {
		t.Fatalf("--cluster-node-splits=false: %+v, %v", cfg.cluster, err)
	}
	base := []string{"--cluster", "etcd://e/p", "--checkpoint-url", "s3://b", "--node-id", "n"}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{append(base, "--cluster-lease-ttl", "0s"), "at least 1s"},
		{append(base, "--advertise-address", "nohost"), "--advertise-address"},
		{[]string{"--advertise-address", "h:1"}, "--advertise-address needs --cluster"},
		{[]string{"--cluster-lease-ttl", "5s"}, "--cluster-lease-ttl needs --cluster"},
		{append(base, "--cluster-checkpoint-timeout", "0s"), "--cluster-checkpoint-timeout must be positive"},
		{[]string{"--cluster-checkpoint-timeout", "5s"}, "--cluster-checkpoint-timeout needs --cluster"},
		{[]string{"--exchange-listen", "h:1"}, "--exchange-listen needs --cluster"},
		{[]string{"--advertise-exchange", "h:1"}, "--advertise-exchange needs --cluster"},
		{[]string{"--cluster-exchange-timeout", "5s"}, "--cluster-exchange-timeout needs --cluster"},
		{[]string{"--cluster-node-splits"}, "--cluster-node-splits needs --cluster"},
		{append(base, "--cluster-exchange-timeout", "10ms"), "--cluster-exchange-timeout must be at least 100ms"},
		{append(base, "--exchange-listen", "nohost"), "--exchange-listen \"nohost\""},
		{append(base, "--advertise-exchange", "nohost"), "--advertise-exchange \"nohost\""},
	} {
		if _, err := parseFlags(c.args, io.Discard); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: err = %v, want %q", c.args, err, c.msg)
		}
	}
}
