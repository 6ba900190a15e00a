package dist

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/objstore"
	"github.com/streamsql/streamsql/exec/stream"
)

// Tables on a cluster (docs/contributing/cluster.md, "Tables in a
// cluster"): their rows live on the coordinator; each cluster checkpoint
// names one object per table (op "table/<oid>.<crc32c>.<size>", an Arrow
// IPC stream of its rows, engine.ClusterTableImages), uploaded only when
// that name was not uploaded before: an unchanged table is named again
// by every manifest. A node that becomes the coordinator loads the
// tables of the committed checkpoint (EnsureTables) before it accepts
// writes (WaitTables) or commits a checkpoint.

// tableOp is the op prefix of a table's image in a manifest.
const tableOp = "table/"

// tableState is what the runner knows of the tables (guarded by
// Runner.mu).
type tableState struct {
	// objs are the table images uploaded by this process, by name.
	objs map[string]objstore.Object
	// terms are the coordinator terms in which this process's tables
	// were current; current is the term they are current in now (0:
	// none).
	terms   map[int64]bool
	current int64
	// loadedFrom is the epoch of the checkpoint the tables were last
	// replaced from (0: never): a view's checkpoint up to it names table
	// positions of another process's tables.
	loadedFrom uint64
	// changed is closed (and replaced) when current changes.
	changed chan struct{}
}

func (ts *tableState) init() {
	if ts.objs == nil {
		ts.objs, ts.terms, ts.changed = map[string]objstore.Object{}, map[int64]bool{}, make(chan struct{})
	}
}

// TableUploaded says whether the table image name is in the store
// already (uploaded by this process, or loaded from a checkpoint).
func (r *Runner) TableUploaded(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tables.init()
	_, ok := r.tables.objs[name]
	return ok
}

// uploadTables uploads the table images of epoch not uploaded yet (into
// epoch's directory) and returns the objects of all of them; the images
// it remembers are then these.
func (r *Runner) uploadTables(ctx context.Context, epoch uint64, imgs []LocalFile) ([]objstore.Object, error) {
	out := make([]objstore.Object, 0, len(imgs))
	keep := map[string]objstore.Object{}
	for _, img := range imgs {
		r.mu.Lock()
		r.tables.init()
		o, ok := r.tables.objs[img.Name]
		r.mu.Unlock()
		if !ok {
			if img.Data == nil {
				return nil, fmt.Errorf("cluster: checkpoint %d: table image %s was not read", epoch, img.Name)
			}
			var err error
			if o, err = r.store.PutState(ctx, epoch, r.node.ID(), r.node.Lease(), tableOp+img.Name, 0, stream.VNodes-1, img.Data); err != nil {
				return nil, fmt.Errorf("cluster: checkpoint %d: table image %s: %w", epoch, img.Name, err)
			}
		}
		keep[img.Name] = o
		out = append(out, o)
	}
	r.mu.Lock()
	r.tables.objs = keep
	r.mu.Unlock()
	return out, nil
}

// tablesReady reports why this coordinator cannot commit a checkpoint
// yet: its tables are not those of the committed checkpoint in this term.
func (r *Runner) tablesReady(f *cluster.Fence) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tables.init()
	if r.tables.current != f.Term().Rev {
		return fmt.Errorf("the tables are not loaded from the committed checkpoint in this term yet")
	}
	return nil
}

// WaitTables returns once this coordinator's tables are current in its
// term (EnsureTables), or fails when ctx ends first or the node is not
// the coordinator.
func (r *Runner) WaitTables(ctx context.Context) error {
	for {
		f, err := r.node.Fence()
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.tables.init()
		ok, ch := r.tables.current == f.Term().Rev, r.tables.changed
		r.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// TablesLoadedFrom is the epoch of the checkpoint this process last
// replaced its tables from (0: never).
func (r *Runner) TablesLoadedFrom() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tables.loadedFrom
}

// EnsureTables (the coordinator) makes its tables current in its term:
// nothing to do when they are already, or when the committed checkpoint
// was committed by this process (its tables are as new or newer) or
// nothing is committed; else it calls load with the images of the
// committed checkpoint's tables by OID (a table without one must be
// emptied). It waits (done false, no error) until this node has followed
// the whole statement log, so that every table is in its catalog.
func (r *Runner) EnsureTables(ctx context.Context, load func(images map[uint32][]byte) error) (done bool, from uint64, err error) {
	f, err := r.node.Fence()
	if err != nil {
		return false, 0, err
	}
	term := f.Term().Rev
	r.mu.Lock()
	r.tables.init()
	current := r.tables.current == term
	r.mu.Unlock()
	if current {
		return true, 0, nil
	}
	last, err := cluster.LastStatement(ctx, r.node.Client(), r.node.Target().Prefix)
	if err != nil {
		return false, 0, err
	}
	r.mu.Lock()
	followed := r.followed >= last
	r.mu.Unlock()
	if !followed {
		return false, 0, nil
	}
	p, _, has, err := cluster.ReadPointer(ctx, r.node.Client(), r.node.Target().Prefix)
	if err != nil {
		return false, 0, err
	}
	r.mu.Lock()
	mine := has && p.Coordinator == r.node.ID() && r.tables.terms[p.Term]
	r.mu.Unlock()
	objs := map[string]objstore.Object{}
	if has && !mine && r.store != nil {
		rs, err := OpenRestore(ctx, r.store, p.Manifest)
		if err != nil {
			return false, 0, err
		}
		var fetch []objstore.Object
		var oids []uint32
		for _, o := range rs.m.Objects {
			name, ok := strings.CutPrefix(o.Op, tableOp)
			if !ok {
				continue
			}
			oid, err := strconv.ParseUint(name[:strings.IndexByte(name+".", '.')], 10, 32)
			if err != nil {
				return false, 0, fmt.Errorf("cluster: checkpoint %d: table image %s: %w", p.Epoch, o.Op, err)
			}
			fetch, oids = append(fetch, o), append(oids, uint32(oid))
			objs[name] = o
		}
		bs, err := rs.fetchAll(ctx, fetch) // concurrently (restore.go)
		if err != nil {
			return false, 0, err
		}
		images := map[uint32][]byte{}
		for i, oid := range oids {
			images[oid] = bs[i]
		}
		if err := load(images); err != nil {
			return false, 0, err
		}
		from = p.Epoch
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if from != 0 {
		r.tables.loadedFrom, r.tables.objs = from, objs
	}
	r.tables.terms[term], r.tables.current = true, term
	close(r.tables.changed)
	r.tables.changed = make(chan struct{})
	return true, from, nil
}
