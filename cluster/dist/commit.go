package dist

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/objstore"
	"github.com/streamsql/streamsql/exec/dataflow"
)

// CommitMeta is the runtime record of a cluster checkpoint's manifest
// (objstore.Manifest.Meta).
type CommitMeta struct {
	Coordinator string `json:"coordinator"`
	// LocalEpoch is the coordinator's own checkpoint of the same epoch,
	// in its data directory: its sources' positions and the state of
	// the operators it runs (not uploaded yet).
	LocalEpoch uint64 `json:"local_epoch"`
	// Instances are the instances on other nodes whose objects the
	// manifest names (instanceName).
	Instances []string `json:"instances"`
}

// CommitEpoch (the coordinator) commits checkpoint epoch once its own
// part is committed locally: it waits, up to timeout, for every instance
// it placed on another node to report its state objects for epoch, then
// writes the manifest and moves the committed pointer, fenced on this
// node's term (objstore.Store.Commit); then it drops the reports up to
// epoch and collects the object store's garbage. An epoch that misses a
// report is not committed (error); the next one is tried.
func (r *Runner) CommitEpoch(ctx context.Context, epoch uint64, timeout time.Duration) (cluster.Pointer, error) {
	r.commitMu.Lock()
	defer r.commitMu.Unlock()
	if r.store == nil {
		return cluster.Pointer{}, fmt.Errorf("cluster: no checkpoint store")
	}
	f, err := r.node.Fence()
	if err != nil {
		return cluster.Pointer{}, err
	}
	// The instances placed before the epoch began (its time, to the
	// millisecond) have its barrier; one placed later is in a job that
	// started after it and is not in this checkpoint.
	began := dataflow.EpochTime(epoch).UnixMilli()
	r.mu.Lock()
	var want []string
	for name, at := range r.placed {
		if at.UnixMilli() < began {
			want = append(want, name)
		}
	}
	r.mu.Unlock()
	slices.Sort(want)
	prefix := r.node.Target().Prefix
	dir := fmt.Sprintf("%s%020d/", reportPrefix(prefix), epoch)
	deadline := time.Now().Add(timeout)
	var objs []objstore.Object
	for {
		resp, err := r.node.Client().Get(ctx, dir, clientv3.WithPrefix())
		if err != nil {
			return cluster.Pointer{}, fmt.Errorf("cluster: read the reports of checkpoint %d: %w", epoch, err)
		}
		got := map[string][]objstore.Object{}
		for _, kv := range resp.Kvs {
			var o []objstore.Object
			if err := json.Unmarshal(kv.Value, &o); err != nil {
				return cluster.Pointer{}, fmt.Errorf("cluster: report %s: %w", kv.Key, err)
			}
			got[strings.TrimPrefix(string(kv.Key), dir)] = o
		}
		missing := ""
		objs = objs[:0]
		for _, name := range want {
			o, ok := got[name]
			if !ok {
				missing = name
				break
			}
			objs = append(objs, o...)
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			return cluster.Pointer{}, fmt.Errorf("cluster: checkpoint %d not committed: instance %s did not report within %s", epoch, missing, timeout)
		}
		select {
		case <-ctx.Done():
			return cluster.Pointer{}, ctx.Err()
		case <-time.After(20 * time.Millisecond): // polling the reports with a deadline
		}
	}
	meta, err := json.Marshal(CommitMeta{Coordinator: r.node.ID(), LocalEpoch: epoch, Instances: want})
	if err != nil {
		return cluster.Pointer{}, err
	}
	p, err := r.store.Commit(ctx, f, objstore.Manifest{Epoch: epoch, Objects: objs, Meta: meta})
	if err != nil {
		return cluster.Pointer{}, err
	}
	// The reports of this epoch and older ones are no longer needed.
	end := fmt.Sprintf("%s%020d/", reportPrefix(prefix), epoch+1)
	if _, err := r.node.Client().Delete(ctx, reportPrefix(prefix), clientv3.WithRange(end)); err != nil {
		r.logf("cluster: drop the reports up to checkpoint %d: %v", epoch, err)
	}
	if _, err := r.store.Collect(ctx, p); err != nil {
		r.logf("cluster: collect the garbage of the checkpoint store: %v", err)
	}
	return p, nil
}
