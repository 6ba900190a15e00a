package dist

import (
	"bytes"
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
	"github.com/streamsql/streamsql/exec/stream"
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

// LocalFile is one file of the coordinator's local checkpoint of an
// epoch (storage/checkpoint.Files), its part of the cluster's checkpoint.
type LocalFile struct {
	Name string
	// Size is its size as the local checkpoint's manifest names it (a
	// segment; -1 for the manifest itself): a file uploaded before is
	// named again only if it had that size.
	Size int64
	// Data are its bytes; nil for a file uploaded before
	// (CoordinatorUploaded), an older segment of the chain.
	Data []byte
}

// LocalPart is the coordinator's local checkpoint of an epoch: its
// files and the jobs (views) it holds.
type LocalPart struct {
	Files []LocalFile
	Jobs  []uint32
	// Tables are the images of the tables (tables.go; Name is the
	// image's name, Data nil when TableUploaded).
	Tables []LocalFile
}

// CoordinatorUploaded says whether the coordinator's checkpoint file
// name is in the object store already, with size bytes (size < 0: any).
func (r *Runner) CoordinatorUploaded(name string, size int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	o, ok := r.coordObjs[name]
	return ok && (size < 0 || o.Size == size)
}

// CommitEpoch (the coordinator) commits checkpoint epoch once its own
// part, local, is committed locally: it waits for every
// instance it placed on another node to report its state objects for
// epoch, uploads the files of local not uploaded yet, then writes the
// manifest (every object, the coordinator's files included) and moves
// the committed pointer, fenced on this node's term
// (objstore.Store.Commit); then it drops the reports up to epoch and
// collects the object store's garbage. An epoch that misses a report,
// has an instance's failure report (its upload failed), or began before
// a restart's end, is not committed (error); the next one is tried.
// timeout bounds all of it up to the manifest's PUT and the pointer's
// move (a stalled store: the epoch is given up). BeginRestart cancels
// it.
func (r *Runner) CommitEpoch(ctx context.Context, epoch uint64, timeout time.Duration, local LocalPart) (cluster.Pointer, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r.mu.Lock()
	r.cancelCommit = cancel
	r.mu.Unlock()
	r.commitMu.Lock()
	defer r.commitMu.Unlock()
	defer func() {
		r.mu.Lock()
		r.cancelCommit = nil
		r.mu.Unlock()
	}()
	r.mu.Lock()
	restarting := r.restarting > 0
	r.mu.Unlock()
	if ctx.Err() != nil || restarting {
		return cluster.Pointer{}, fmt.Errorf("cluster: checkpoint %d: a restart began", epoch)
	}
	if r.store == nil {
		return cluster.Pointer{}, fmt.Errorf("cluster: no checkpoint store")
	}
	f, err := r.node.Fence()
	if err != nil {
		return cluster.Pointer{}, err
	}
	if err := r.runsAllViews(ctx, local.Jobs); err != nil {
		return cluster.Pointer{}, fmt.Errorf("cluster: checkpoint %d: %w", epoch, err)
	}
	if err := r.tablesReady(f); err != nil { // tables.go
		return cluster.Pointer{}, fmt.Errorf("cluster: checkpoint %d: %w", epoch, err)
	}
	// The instances placed before the epoch began (its time, to the
	// millisecond) have its barrier; one placed later is in a job that
	// started after it and is not in this checkpoint.
	began := dataflow.EpochTime(epoch).UnixMilli()
	r.mu.Lock()
	if !r.restarted.IsZero() && began <= r.restarted.UnixMilli() {
		r.mu.Unlock()
		return cluster.Pointer{}, fmt.Errorf("cluster: checkpoint %d began before the last restart of views", epoch)
	}
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
			name := strings.TrimPrefix(string(kv.Key), dir)
			if bytes.HasPrefix(kv.Value, []byte("{")) {
				var f failedReport
				if err := json.Unmarshal(kv.Value, &f); err != nil {
					return cluster.Pointer{}, fmt.Errorf("cluster: report %s: %w", kv.Key, err)
				}
				if slices.Contains(want, name) {
					return cluster.Pointer{}, fmt.Errorf("cluster: checkpoint %d not committed: instance %s failed to upload its state: %s", epoch, name, f.Error)
				}
				continue
			}
			var o []objstore.Object
			if err := json.Unmarshal(kv.Value, &o); err != nil {
				return cluster.Pointer{}, fmt.Errorf("cluster: report %s: %w", kv.Key, err)
			}
			got[name] = o
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
			return cluster.Pointer{}, fmt.Errorf("cluster: checkpoint %d not committed: waiting for the reports: %w", epoch, ctx.Err())
		case <-time.After(20 * time.Millisecond): // polling the reports with a deadline
		}
	}
	waited := time.Since(deadline.Add(-timeout))
	t0 := time.Now()
	coord, err := r.uploadLocal(ctx, epoch, local.Files)
	if err != nil {
		return cluster.Pointer{}, err
	}
	tabs, err := r.uploadTables(ctx, epoch, local.Tables) // tables.go
	if err != nil {
		return cluster.Pointer{}, err
	}
	coord = append(coord, tabs...)
	st := CommitStats{Objects: len(objs) + len(coord), ReportsWait: waited, CoordUpload: time.Since(t0)}
	for _, o := range objs {
		st.WorkerBytes += o.Size
		if o.Epoch == epoch {
			st.WorkerUploaded += o.Size
			st.WorkerObjects++
		}
	}
	for _, o := range coord {
		st.CoordBytes += o.Size
		if o.Epoch == epoch {
			st.CoordUploaded += o.Size
		}
	}
	objs = append(objs, coord...)
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
	r.mu.Lock()
	r.lastCommit = st
	r.mu.Unlock()
	return p, nil
}

// CommitStats describe the last committed checkpoint (for the log).
type CommitStats struct {
	Objects int
	// WorkerBytes are the workers' instance states it names (their
	// chains: bases and deltas, ckpt.go), WorkerUploaded those uploaded
	// for this epoch, in WorkerObjects objects; CoordBytes the
	// coordinator's files, CoordUploaded those uploaded for this epoch.
	WorkerBytes, WorkerUploaded, CoordBytes, CoordUploaded int64
	WorkerObjects                                          int
	// ReportsWait is how long the commit waited for the workers'
	// reports after the coordinator's local commit; CoordUpload how long
	// the coordinator's files took to upload.
	ReportsWait, CoordUpload time.Duration
}

// LastCommit describes the last checkpoint CommitEpoch committed.
func (r *Runner) LastCommit() CommitStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastCommit
}

// uploadLocal uploads the coordinator's files of epoch not uploaded yet
// (into epoch's directory, as op "coord/<name>") and returns the objects
// of all of them, older ones as uploaded before. The files it remembers
// are then those of this epoch's chain.
func (r *Runner) uploadLocal(ctx context.Context, epoch uint64, local []LocalFile) ([]objstore.Object, error) {
	var out []objstore.Object
	keep := map[string]objstore.Object{}
	for _, lf := range local {
		r.mu.Lock()
		o, ok := r.coordObjs[lf.Name]
		r.mu.Unlock()
		if ok && lf.Size >= 0 && o.Size != lf.Size {
			ok = false // another file of that name was uploaded: upload this one
		}
		if !ok {
			if lf.Data == nil {
				return nil, fmt.Errorf("cluster: checkpoint %d: the coordinator's file %s was not read", epoch, lf.Name)
			}
			if lf.Size >= 0 && int64(len(lf.Data)) != lf.Size {
				// Never commit a checkpoint whose coordinator's part
				// cannot be loaded back.
				return nil, fmt.Errorf("cluster: checkpoint %d: the coordinator's file %s has %d bytes, its local manifest says %d", epoch, lf.Name, len(lf.Data), lf.Size)
			}
			var err error
			if o, err = r.store.PutState(ctx, epoch, r.node.ID(), r.node.Lease(), coordOp+lf.Name, 0, stream.VNodes-1, lf.Data); err != nil {
				return nil, err
			}
		}
		keep[lf.Name] = o
		out = append(out, o)
	}
	r.mu.Lock()
	r.coordObjs = keep
	r.mu.Unlock()
	return out, nil
}

// runsAllViews reports why this coordinator cannot commit a checkpoint
// whose local part holds jobs: it has not followed the whole statement
// log, a view of it is not running under it (not restarted yet after it
// became coordinator), or the local part does not hold a view (its job
// started after the epoch began, or failed).
func (r *Runner) runsAllViews(ctx context.Context, jobs []uint32) error {
	last, err := cluster.LastStatement(ctx, r.node.Client(), r.node.Target().Prefix)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.followed < last {
		// Entries this process logged count as followed once Follow
		// passed them; until then, wait for the next epoch.
		return fmt.Errorf("the statement log is followed up to entry %d of %d", r.followed, last)
	}
	for job := range r.assigns {
		if !r.running[job] {
			return fmt.Errorf("view %d is not restarted under this coordinator yet", job)
		}
		if !slices.Contains(jobs, job) {
			return fmt.Errorf("view %d is not in this node's checkpoint of the epoch", job)
		}
	}
	return nil
}
