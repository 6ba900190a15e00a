package dist

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/failpoint"
	"github.com/streamsql/streamsql/cluster/objstore"
	"github.com/streamsql/streamsql/exec/stream"
)

// Restart of views after a node's loss or arrival
// (docs/contributing/cluster.md, "Restart after a node's loss"). The
// coordinator (Restart) stops committing, reads the committed pointer,
// writes an assignment of the live nodes (fenced) and, per view, logs a
// restart entry naming the assignment and the checkpoint; it then
// restarts its own job of the view from its part of the checkpoint
// (Restore.JobCheckpoint). Every worker, following the log
// (RestartView), stops its instances of the view and starts those the
// new assignment gives it, each restored from the checkpoint by instance
// (whichever node wrote it). A view is restarted from its inputs when
// nothing is committed, or the checkpoint does not have it.

// Plan is a restart the coordinator is carrying out: the checkpoint (nil:
// none committed) and the new assignment. End must be called.
type Plan struct {
	r       *Runner
	Assign  cluster.Assignment
	Restore *Restore // nil: views start from their inputs
	Pointer cluster.Pointer
	began   time.Time
	// previous is the pointer's previous checkpoint once Previous opened it.
	previous *Restore
}

// NeedsRestart says whether view job, placed by this coordinator, runs
// with an assignment other than one of exactly the live nodes (a node
// left, joined or came back as another incarnation). ok false when this
// node did not place the view.
func (r *Runner) NeedsRestart(job uint32, nodes []cluster.NodeInfo) (need, ok bool) {
	r.mu.Lock()
	a, ok := r.assigns[job]
	r.mu.Unlock()
	if !ok {
		return false, false
	}
	return !sameNodes(a, nodes), true
}

// Jobs are the views this node knows an assignment of (placed or
// followed), in OID order.
func (r *Runner) Jobs() []uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.assigns))
}

// BeginRestart (the coordinator) starts a restart: it cancels the
// checkpoint commit in flight and holds off others until End, reads the
// committed pointer and opens its checkpoint, and writes an assignment
// of the live nodes.
func (r *Runner) BeginRestart(ctx context.Context) (*Plan, error) {
	r.mu.Lock()
	if r.cancelCommit != nil {
		r.cancelCommit()
	}
	r.restarting++ // a commit that starts meanwhile gives up at once
	r.mu.Unlock()
	r.commitMu.Lock()
	r.mu.Lock()
	r.restarting--
	r.mu.Unlock()
	pl := &Plan{r: r, began: time.Now()}
	ok := false
	defer func() {
		if !ok {
			r.commitMu.Unlock()
		}
	}()
	f, err := r.node.Fence()
	if err != nil {
		return nil, err
	}
	p, _, has, err := cluster.ReadPointer(ctx, r.node.Client(), r.node.Target().Prefix)
	if err != nil {
		return nil, err
	}
	if has && r.store != nil {
		pl.Pointer = p
		pl.Restore, err = OpenRestore(ctx, r.store, p.Manifest)
		if errors.Is(err, objstore.ErrCorrupt) && p.PreviousManifest != "" {
			// A damaged manifest: the previous checkpoint is kept for this.
			r.logf("cluster: committed checkpoint %d cannot be read (%v): restarting from the previous one, %d", p.Epoch, err, p.Previous)
			pl.Pointer.Epoch, pl.Pointer.Manifest = p.Previous, p.PreviousManifest
			pl.Restore, err = OpenRestore(ctx, r.store, p.PreviousManifest)
		}
		if err != nil {
			return nil, fmt.Errorf("cluster: committed checkpoint %d: %w", pl.Pointer.Epoch, err)
		}
	}
	if pl.Assign, err = r.writeAssignment(ctx, f); err != nil {
		return nil, err
	}
	ok = true
	return pl, nil
}

// writeAssignment writes (fenced by f) a new assignment of the live nodes
// and moves this node's exchange server to its generation: streams of
// older ones are refused from now on.
func (r *Runner) writeAssignment(ctx context.Context, f *cluster.Fence) (cluster.Assignment, error) {
	nodes, err := r.node.Nodes(ctx)
	if err != nil {
		return cluster.Assignment{}, err
	}
	if err := r.sameSplits(nodes); err != nil {
		return cluster.Assignment{}, err
	}
	a, err := f.WriteAssignment(ctx, nodes)
	if err != nil {
		return cluster.Assignment{}, err
	}
	r.srv.SetGeneration(a.Generation)
	return a, nil
}

// Reassign gives the plan a new assignment of the live nodes (a new
// generation, so new exchange stream names; streams of the old one are
// refused from now on), for views that restart again within the plan:
// their instances of the first start cannot meet those of the second.
// Commits stay held. The caller logs each view's restart again.
func (pl *Plan) Reassign(ctx context.Context) error {
	f, err := pl.r.node.Fence()
	if err != nil {
		return err
	}
	a, err := pl.r.writeAssignment(ctx, f)
	if err != nil {
		return err
	}
	pl.Assign = a
	return nil
}

// Log records job's restart with the plan's assignment and checkpoint in
// the statement log (fenced) and makes Place use the new assignment; the
// caller then restarts its job of the view. from says whether the job
// resumes from the checkpoint (false: from its inputs).
func (pl *Plan) Log(ctx context.Context, job uint32, from bool) error {
	if from {
		return pl.log(ctx, job, pl.Restore)
	}
	return pl.log(ctx, job, nil)
}

// log logs job's restart from rs (nil: its inputs).
func (pl *Plan) log(ctx context.Context, job uint32, from *Restore) error {
	r := pl.r
	f, err := r.node.Fence()
	if err != nil {
		return err
	}
	// Instances this node ran as a worker (before it became the
	// coordinator) stop: its job runs them now, or another node does.
	r.stopInstances(job, "this node coordinates it now")
	rs := &cluster.Restart{}
	if from != nil {
		rs.Epoch, rs.Manifest = from.Epoch(), from.Key()
	}
	a := pl.Assign
	r.ownTerm(f)
	if _, err := f.AppendStatement(ctx, cluster.Statement{OID: job, Assignment: &a, Restart: rs, NodeSplits: r.nodeSplits()}); err != nil {
		return err
	}
	r.mu.Lock()
	r.assigns[job] = a
	r.running[job] = true
	prefix := fmt.Sprintf("%d.", job)
	for name := range r.placed {
		if strings.HasPrefix(name, prefix) {
			delete(r.placed, name) // Place records the new run's
		}
	}
	r.mu.Unlock()
	return nil
}

// End ends the restart: commits resume, for epochs that began after it.
func (pl *Plan) End() {
	pl.r.mu.Lock()
	pl.r.restarted = time.Now()
	pl.r.mu.Unlock()
	pl.r.commitMu.Unlock()
}

// RestartView (a worker, following the log) restarts its part of view
// st.OID, whose plan on this node is plan, as the restart entry st says:
// it stops the instances it runs and starts those st's assignment gives
// it, restored from st's checkpoint.
func (r *Runner) RestartView(ctx context.Context, st cluster.Statement, plan stream.Node) error {
	if st.Restart == nil || st.Assignment == nil {
		return fmt.Errorf("cluster: statement %d is not a restart", st.Seq)
	}
	job := st.OID
	named := false
	for _, n := range st.Assignment.Nodes {
		named = named || (n.NodeID == r.node.ID() && n.Lease == r.node.Lease())
	}
	if !named {
		// Not this incarnation's: an entry of before this process (the
		// log replayed after a restart), or one that gives it nothing.
		r.stopInstances(job, "restarted with assignment %d without this node", st.Assignment.Generation)
		return nil
	}

	start := time.Now() // the restore's reads included
	var rs *Restore
	if st.Restart.Manifest != "" {
		if r.store == nil {
			return fmt.Errorf("cluster: restart of view %d from checkpoint %d: no checkpoint store", job, st.Restart.Epoch)
		}
		var err error
		if rs, err = r.openRestore(ctx, st, plan); err != nil {
			r.stopInstances(job, "its checkpoint cannot be read")
			return fmt.Errorf("cluster: restart of view %d: %w", job, err)
		}
	}
	if rs != nil {
		failpoint.Hit(failpoint.WorkerDuringRestore, "checkpoint %d", rs.Epoch())
	}
	if err := r.serveView(ctx, job, plan, *st.Assignment, rs); err != nil {
		return err
	}
	from := "its inputs"
	if rs != nil {
		from = fmt.Sprintf("checkpoint %d", rs.Epoch())
	}
	r.logf("cluster: job %d restarted on this node from %s with assignment %d in %s", job, from, st.Assignment.Generation, time.Since(start).Round(time.Millisecond))
	return nil
}

// RestoreRetry bounds how long a worker retries reading the checkpoint
// a restart entry names (the store erroring or unreachable): within the
// coordinator's connect timeout (60 s), so that its job waits for the
// instances rather than failing on their absence.
const RestoreRetry = 30 * time.Second

// openRestore (a worker) opens the checkpoint of the restart entry st
// and reads the state of every instance it gives this node, retrying
// with backoff up to RestoreRetry while the store fails or stalls (each
// attempt bounded by ReadContext); a damaged
// checkpoint (objstore.ErrCorrupt) is not retried. An instance never
// starts from empty state because its checkpoint could not be read: the
// restart fails on this node instead (its instances do not start; the
// coordinator's job fails, and the view is restarted again).
func (r *Runner) openRestore(ctx context.Context, st cluster.Statement, plan stream.Node) (*Restore, error) {
	deadline := time.Now().Add(RestoreRetry)
	wait := 100 * time.Millisecond
	var rs *Restore
	for attempt := 1; ; attempt++ {
		// One attempt is bounded (a stalled store: the read is given up
		// and tried again); what it read is kept for the next one.
		actx, cancel := r.ReadContext(ctx)
		var err error
		if rs == nil {
			rs, err = OpenRestore(actx, r.store, st.Restart.Manifest)
		}
		if err == nil {
			err = rs.Prefetch(actx, plan, st.OID, *st.Assignment, r.node.ID())
		}
		cancel()
		if err == nil {
			if attempt > 1 {
				r.logf("cluster: restart of view %d: checkpoint %d read at attempt %d", st.OID, st.Restart.Epoch, attempt)
			}
			return rs, nil
		}
		if errors.Is(err, objstore.ErrCorrupt) || ctx.Err() != nil || time.Now().Add(wait).After(deadline) {
			return nil, fmt.Errorf("checkpoint %d, after %d attempts: %w", st.Restart.Epoch, attempt, err)
		}
		r.logf("cluster: restart of view %d: checkpoint %d cannot be read (attempt %d): %v; retrying in %s", st.OID, st.Restart.Epoch, attempt, err, wait)
		select {
		case <-ctx.Done():
		case <-time.After(wait): // backoff between attempts, bounded by deadline
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// IsCoordinator says whether this node is the coordinator now.
func (r *Runner) IsCoordinator() bool { return r.node.IsCoordinator() }

// Orphaned reports whether this node was the coordinator and lost its
// lease while etcd was unreachable (cluster.Node.Orphaned): its views
// still run here until etcd answers again.
func (r *Runner) Orphaned() bool { return r.node.Orphaned() }

// Nodes lists the live nodes.
func (r *Runner) Nodes(ctx context.Context) ([]cluster.NodeInfo, error) { return r.node.Nodes(ctx) }
