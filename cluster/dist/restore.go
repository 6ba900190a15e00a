package dist

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/objstore"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/storage/checkpoint"
)

// Restoring a view from a committed cluster checkpoint
// (docs/contributing/cluster.md, "Restart after a node's loss"). The
// checkpoint is made of two kinds of objects: each worker's instance
// states (op "<job>.p<op>.i<k>.n<pos>", a chain of objects in the
// encoding of stateWriter: a base and the deltas on it, ckpt.go) and the
// coordinator's own checkpoint, its local files (op "coord/<file>":
// manifest and chain segments of storage/checkpoint),
// which holds the sources' positions, the view's rows and the state of
// the instances the coordinator ran. An instance is restored from
// whichever of the two has it, so it may move between any nodes.

// coordOp is the op prefix of the coordinator's files in a manifest.
const coordOp = "coord/"

// Restore is one committed checkpoint being restored from: its manifest,
// and the objects read from the store as they are needed. Safe for
// concurrent use.
type Restore struct {
	store *objstore.Store
	key   string
	m     *objstore.Manifest
	meta  CommitMeta

	mu     sync.Mutex
	coord  *checkpoint.Checkpoint        // read on first use
	states map[string]stream.StateReader // InstanceState's results, by instanceName
}

// OpenRestore reads the manifest at key (a committed pointer's).
func OpenRestore(ctx context.Context, store *objstore.Store, key string) (*Restore, error) {
	m, err := store.ReadManifest(ctx, key)
	if err != nil {
		return nil, err
	}
	rs := &Restore{store: store, key: key, m: m}
	if err := json.Unmarshal(m.Meta, &rs.meta); err != nil {
		return nil, fmt.Errorf("cluster: checkpoint %d: bad record: %w", m.Epoch, err)
	}
	return rs, nil
}

// Epoch is the checkpoint's epoch.
func (rs *Restore) Epoch() uint64 { return rs.m.Epoch }

// chain is the manifest's objects of op, oldest first: an operator's
// base and the deltas on it (ckpt.go).
func (rs *Restore) chain(op string) []objstore.Object {
	var out []objstore.Object
	for _, o := range rs.m.Objects {
		if o.Op == op {
			out = append(out, o)
		}
	}
	slices.SortStableFunc(out, func(a, b objstore.Object) int { return cmp.Compare(a.Epoch, b.Epoch) })
	return out
}

// instance reads the state a worker uploaded for instance k of operator
// op of job (its operator at position 0, the only one an instance runs):
// its chain's objects applied in order; ok false when no worker ran it
// at the checkpoint.
func (rs *Restore) instance(ctx context.Context, job uint32, op, k int) (kv map[string][]byte, ok bool, err error) {
	objs := rs.chain(instanceName(job, op, k) + ".n0")
	if len(objs) == 0 {
		return nil, false, nil
	}
	bs, err := rs.fetchAll(ctx, objs)
	if err != nil {
		return nil, false, err
	}
	kv = map[string][]byte{}
	for i, o := range objs {
		b := bs[i]
		if i == 0 && (len(b) == 0 || b[0] != 'R') {
			// Every snapshot a chain starts with begins with a reset.
			return nil, false, fmt.Errorf("%w: %s: the chain of %s does not start with a whole state", objstore.ErrCorrupt, o.Key, o.Op)
		}
		if err := ApplyState(kv, b); err != nil {
			// Its bytes are the committed ones (size and CRC checked): a
			// checkpoint that never decodes is damaged, not unreachable.
			return nil, false, fmt.Errorf("%w: %s: %w", objstore.ErrCorrupt, o.Key, err)
		}
	}
	return kv, true, nil
}

// Coordinator reads the coordinator's part: its local checkpoint of the
// epoch, downloaded into a temporary directory and loaded from there.
func (rs *Restore) Coordinator(ctx context.Context) (*checkpoint.Checkpoint, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.coord != nil {
		return rs.coord, nil
	}
	dir, err := os.MkdirTemp("", "streamsql-restore-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var objs []objstore.Object
	for _, o := range rs.m.Objects {
		if strings.HasPrefix(o.Op, coordOp) {
			objs = append(objs, o)
		}
	}
	bs, err := rs.fetchAll(ctx, objs)
	if err != nil {
		return nil, err
	}
	found := false
	for i, o := range objs {
		name := strings.TrimPrefix(o.Op, coordOp)
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(name)), bs[i], 0o644); err != nil {
			return nil, err
		}
		found = found || name == checkpoint.ManifestFile(rs.meta.LocalEpoch)
	}
	if !found {
		return nil, fmt.Errorf("%w: cluster: checkpoint %d has no coordinator part", objstore.ErrCorrupt, rs.m.Epoch)
	}
	cp, err := checkpoint.LoadEpoch(dir, rs.meta.LocalEpoch)
	if err != nil {
		return nil, fmt.Errorf("%w: cluster: checkpoint %d, the coordinator's part: %w", objstore.ErrCorrupt, rs.m.Epoch, err)
	}
	rs.coord = cp
	return cp, nil
}

// InstanceState is the state instance k of operator op of job (plan)
// restores: a worker's upload, else the coordinator's part; nil when
// neither has it (it starts empty).
// A result is kept: a second call (Prefetch, then the instance's start)
// reads nothing.
func (rs *Restore) InstanceState(ctx context.Context, plan stream.Node, job uint32, op, k int) (stream.StateReader, error) {
	name := instanceName(job, op, k)
	rs.mu.Lock()
	st, ok := rs.states[name]
	rs.mu.Unlock()
	if ok {
		return st, nil
	}
	kv, ok, err := rs.instance(ctx, job, op, k)
	if err != nil {
		return nil, err
	}
	if ok {
		st = checkpoint.NewState(kv)
	} else {
		cp, err := rs.Coordinator(ctx)
		if err != nil {
			return nil, err
		}
		if s := cp.Op(dataflow.InstanceStateID(plan, job, op, k)); s != nil {
			st = s
		}
	}
	rs.mu.Lock()
	if rs.states == nil {
		rs.states = map[string]stream.StateReader{}
	}
	rs.states[name] = st
	rs.mu.Unlock()
	return st, nil
}

// Prefetch reads the state of every instance of job (plan) that node
// self runs with assignment a, so that starting them reads nothing more.
func (rs *Restore) Prefetch(ctx context.Context, plan stream.Node, job uint32, a cluster.Assignment, self string) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(restoreInstances)
	for op, p := range dataflow.ParallelNodes(plan) {
		lo, hi := a.Instances(self, max(p.N, 1))
		for k := lo; k < hi; k++ {
			g.Go(func() error {
				if _, err := rs.InstanceState(gctx, plan, job, op, k); err != nil {
					return fmt.Errorf("instance %d of operator %d: %w", k, op, err)
				}
				return nil
			})
		}
	}
	return g.Wait()
}

// Restores read the store concurrently: up to restoreInstances instances
// at a time, each reading up to restoreFetches objects of its chain at a
// time (a chain is a base and up to 15 deltas); a store's GET costs a
// round trip (tens of milliseconds on a cloud store) that a restore
// should not pay once per object.
const (
	restoreInstances = 4
	restoreFetches   = 8
)

// fetchAll reads objs from the store, up to restoreFetches at a time; the
// bytes are in objs' order. The first error ends it.
func (rs *Restore) fetchAll(ctx context.Context, objs []objstore.Object) ([][]byte, error) {
	out := make([][]byte, len(objs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(restoreFetches)
	for i, o := range objs {
		g.Go(func() (err error) {
			out[i], err = rs.store.Fetch(gctx, o)
			return err
		})
	}
	return out, g.Wait()
}

// JobCheckpoint is the checkpoint the coordinator's job of view job
// (plan) resumes from: the coordinator's part, with the state of every
// instance a worker uploaded added under the id the job's own checkpoint
// gives it, so that an instance now run by the coordinator restores
// too.
func (rs *Restore) JobCheckpoint(ctx context.Context, plan stream.Node, job uint32) (*checkpoint.Checkpoint, error) {
	cp, err := rs.Coordinator(ctx)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex // guards cp's SetOp
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(restoreInstances)
	for op, p := range dataflow.ParallelNodes(plan) {
		for k := range max(p.N, 1) {
			g.Go(func() error {
				kv, ok, err := rs.instance(gctx, job, op, k)
				if err != nil || !ok {
					return err
				}
				mu.Lock()
				cp.SetOp(dataflow.InstanceStateID(plan, job, op, k), kv)
				mu.Unlock()
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return cp, nil
}
