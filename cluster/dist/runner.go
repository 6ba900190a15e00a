package dist

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/objstore"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/dataflow/netx"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
)

// Runner is one streamsqld node's part in running views over the
// cluster (docs/contributing/cluster.md, "Views on a cluster"). On the
// coordinator it places each new view's instances over the live nodes
// (PlaceView: an assignment, fenced, logged with the statement) and is
// the runtime's dataflow.Placement for them; on a worker it follows the
// statement log (Follow) and runs the instances a logged view gives it
// (ServeView). Safe for concurrent use.
type Runner struct {
	node  *cluster.Node
	srv   *netx.Server
	opt   netx.Options
	store *objstore.Store // checkpoints; nil: none
	logf  func(string, ...any)
	// UploadTimeout bounds each upload of an instance's state (set
	// before the runner is used; 0: 30 s): a stalled store fails the
	// upload, and the instance reports the failure.
	UploadTimeout time.Duration
	// Splits, when set (on every node, before the runner is used), runs
	// the split readers of a view's placeable operators on the nodes of
	// their instances, with N×N exchanges between the nodes (splits.go);
	// nil: every source runs on the coordinator.
	Splits *dataflow.Runtime

	mu      sync.Mutex
	assigns map[uint32]cluster.Assignment // a view's job -> the assignment it runs with
	// splitsOf is the --cluster-node-splits a view's last logged entry
	// was placed with ("": not said).
	splitsOf map[uint32]string
	envs     map[uint32]*stream.Env // a worker's running instances, by job
	placed   map[string]time.Time   // the coordinator's instances on other nodes (instanceName): when placed
	// cancelCommit cancels the CommitEpoch in flight (nil: none); a
	// restart does not wait for a commit that waits for a dead node.
	cancelCommit context.CancelFunc
	// coordObjs are the coordinator's checkpoint files uploaded so far,
	// by file name (commit.go): a chain's older segments are uploaded once.
	coordObjs map[string]objstore.Object
	// tables are the table images uploaded and whether the tables are
	// the committed checkpoint's in this term (tables.go).
	tables tableState
	// ownTerms are the coordinator terms this process logged statements
	// in: Follow skips those entries (it ran them), not the ones an
	// earlier process of this node logged (a restarted cluster replays
	// them).
	ownTerms map[int64]bool
	// followed is the last log entry Follow passed (applied or
	// skipped); running are the views this process started as
	// coordinator (PlaceView, a restart): CommitEpoch commits only once
	// it has followed the whole log and runs every view in it, so that a
	// coordinator that has not restarted the views yet (a cluster
	// started again) does not commit a checkpoint without them.
	followed   uint64
	running    map[uint32]bool
	lastCommit CommitStats
	// restarting counts the restarts waiting for commitMu.
	restarting int
	// restarted is when the last restart ended: an epoch that began
	// before it is not committed (restart.go).
	restarted time.Time

	commitMu sync.Mutex // one CommitEpoch (or restart) at a time
}

// NewRunner is node's runner; srv is its exchange server (its address is
// the node's registered Exchange), opt the options of its streams, store
// where instances checkpoint (nil: they do not).
func NewRunner(node *cluster.Node, srv *netx.Server, opt netx.Options, store *objstore.Store, logf func(string, ...any)) *Runner {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Runner{node: node, srv: srv, opt: opt, store: store, logf: logf, assigns: map[uint32]cluster.Assignment{}, splitsOf: map[uint32]string{},
		envs: map[uint32]*stream.Env{}, ownTerms: map[int64]bool{}, running: map[uint32]bool{}, placed: map[string]time.Time{}, coordObjs: map[string]objstore.Object{}}
}

// Place implements dataflow.Placement: an instance of a view placed by
// PlaceView runs on its assigned node; everything else runs here.
func (r *Runner) Place(in dataflow.InstancePlace, ins []<-chan stream.Message) (<-chan stream.Message, bool) {
	r.mu.Lock()
	a, ok := r.assigns[in.Job]
	r.mu.Unlock()
	if !ok {
		return nil, false
	}
	p := Placement{Self: r.node.ID(), Assign: a, Server: r.srv, Opt: r.opt}
	out, ok := p.Place(in, ins)
	r.mu.Lock()
	name := instanceName(in.Job, in.Op, in.Instance)
	if ok {
		r.placed[name] = time.Now()
	} else {
		delete(r.placed, name) // runs here now (after a restart): in the local checkpoint
	}
	r.mu.Unlock()
	if ok {
		r.logf("cluster: job %d: instance %d of operator %d runs on another node, its inputs sent from the coordinator", in.Job, in.Instance, in.Op)
	}
	return out, ok
}

// sameNodes says whether a places instances on exactly nodes (ids,
// exchange addresses and incarnations).
func sameNodes(a cluster.Assignment, nodes []cluster.NodeInfo) bool {
	var live []cluster.Placed
	for _, n := range nodes {
		if n.Exchange != "" {
			live = append(live, cluster.Placed{NodeID: n.NodeID, Exchange: n.Exchange, Lease: n.Lease})
		}
	}
	slices.SortFunc(live, func(x, y cluster.Placed) int {
		if x.NodeID < y.NodeID {
			return -1
		}
		if x.NodeID > y.NodeID {
			return 1
		}
		return 0
	})
	return slices.Equal(a.Nodes, live)
}

// nodeSplits is this node's --cluster-node-splits as logged: "on" when
// the runner places split sources (Splits), else "off".
func (r *Runner) nodeSplits() string {
	if r.Splits != nil {
		return "on"
	}
	return "off"
}

// sameSplits fails (55000) when a live node that takes instances
// registered another --cluster-node-splits than this one's: a view
// placed over them would fail on streams one side does not expect.
func (r *Runner) sameSplits(nodes []cluster.NodeInfo) error {
	mine := r.nodeSplits()
	for _, n := range nodes {
		if n.Exchange != "" && n.NodeSplits != "" && n.NodeSplits != mine {
			return pgerr.New(pgerr.ObjectNotInPrerequisiteState,
				"cluster: node %s runs with --cluster-node-splits=%s, the coordinator %s with =%s: start every node with the same setting", n.NodeID, n.NodeSplits, r.node.ID(), mine)
		}
	}
	return nil
}

// CheckPlace (the coordinator) fails (55000) when a live node
// registered another --cluster-node-splits than this one's (sameSplits).
func (r *Runner) CheckPlace(ctx context.Context) error {
	nodes, err := r.node.Nodes(ctx)
	if err != nil {
		return err
	}
	return r.sameSplits(nodes)
}

// Log appends st to the statement log, fenced on this node's term.
func (r *Runner) Log(ctx context.Context, st cluster.Statement) (cluster.Statement, error) {
	f, err := r.node.Fence()
	if err != nil {
		return cluster.Statement{}, err
	}
	r.ownTerm(f)
	return f.AppendStatement(ctx, st)
}

// ownTerm records that this process logs in f's term (before it appends:
// Follow may see the entry before AppendStatement returns).
func (r *Runner) ownTerm(f *cluster.Fence) {
	r.mu.Lock()
	r.ownTerms[f.Term().Rev] = true
	r.mu.Unlock()
}

// PlaceView (the coordinator) places the instances of the view st
// creates over the live nodes and logs st with that assignment: the
// current assignment when the live nodes are the ones it names and this
// term wrote it, else a new generation. From then on Place sends the
// view's remote instances to their nodes.
func (r *Runner) PlaceView(ctx context.Context, st cluster.Statement) (cluster.Statement, error) {
	f, err := r.node.Fence()
	if err != nil {
		return cluster.Statement{}, err
	}
	nodes, err := r.node.Nodes(ctx)
	if err != nil {
		return cluster.Statement{}, err
	}
	a, ok, err := cluster.ReadAssignment(ctx, r.node.Client(), r.node.Target().Prefix)
	if err != nil {
		return cluster.Statement{}, err
	}
	if err := r.sameSplits(nodes); err != nil {
		return cluster.Statement{}, err
	}
	if !ok || a.Term != f.Term().Rev || !sameNodes(a, nodes) {
		if a, err = f.WriteAssignment(ctx, nodes); err != nil {
			return cluster.Statement{}, err
		}
		r.logf("cluster: assignment %d: %d nodes", a.Generation, len(a.Nodes))
	}
	// Before any worker's stream of this generation arrives.
	r.srv.SetGeneration(a.Generation)
	st.Assignment = &a
	st.NodeSplits = r.nodeSplits()
	r.ownTerm(f)
	logged, err := f.AppendStatement(ctx, st)
	if err != nil {
		return cluster.Statement{}, err
	}
	r.mu.Lock()
	r.assigns[st.OID] = a
	r.running[st.OID] = true
	r.mu.Unlock()
	return logged, nil
}

// Follow (every node) calls apply with each statement of the log that
// another coordinator term or node logged, in order, the view's
// assignment made known to ServeView first (unless a later generation is
// known already), until ctx ends or apply fails. Statements this process
// logged itself are skipped: it ran them; those an earlier process of
// this node logged are not (a cluster restarted with empty data
// directories replays the whole log on every node).
func (r *Runner) Follow(ctx context.Context, apply func(cluster.Statement) error) error {
	return cluster.FollowStatements(ctx, r.node.Client(), r.node.Target().Prefix, func(st cluster.Statement) error {
		r.mu.Lock()
		own := st.Coordinator == r.node.ID() && r.ownTerms[st.Term]
		if !own && st.Assignment != nil {
			if cur, ok := r.assigns[st.OID]; !ok || cur.Generation <= st.Assignment.Generation {
				r.assigns[st.OID] = *st.Assignment
				r.splitsOf[st.OID] = st.NodeSplits
			}
		}
		r.mu.Unlock()
		if !own {
			if err := apply(st); err != nil {
				return err
			}
		}
		r.mu.Lock()
		r.followed = max(r.followed, st.Seq)
		r.mu.Unlock()
		return nil
	})
}

// ServeView (a worker) starts the instances of job's plan that the
// view's logged assignment gives this node (none when the node joined
// after it, or when it names an earlier incarnation of this node: a
// restart entry of the log, or the coordinator's next one, places it).
// They run until the coordinator's job ends or one fails.
func (r *Runner) ServeView(ctx context.Context, job uint32, plan stream.Node) error {
	r.mu.Lock()
	a, ok := r.assigns[job]
	r.mu.Unlock()
	if !ok {
		return fmt.Errorf("cluster: view %d has no logged assignment", job)
	}
	return r.serveView(ctx, job, plan, a, nil)
}

// serveView starts this node's instances of job with assignment a,
// restored from rs when it is not nil, in place of those it ran.
func (r *Runner) serveView(ctx context.Context, job uint32, plan stream.Node, a cluster.Assignment, rs *Restore) error {
	r.stopInstances(job, "restarted with assignment %d", a.Generation)
	r.mu.Lock()
	logged := r.splitsOf[job]
	r.mu.Unlock()
	if mine := r.nodeSplits(); logged != "" && logged != mine {
		// Its instances would expect streams the coordinator's job does
		// not send (or send streams nobody expects): refused, not run.
		r.logf("ERROR: cluster: job %d (assignment %d): the coordinator %s runs it with --cluster-node-splits=%s, this node has =%s: its instances do not start here; start every node with the same setting",
			job, a.Generation, a.Coordinator, logged, mine)
		return nil
	}
	for _, n := range a.Nodes {
		if n.NodeID == r.node.ID() && n.Lease != r.node.Lease() {
			r.logf("cluster: job %d: assignment %d names an earlier incarnation of this node: no instances until the coordinator places them again", job, a.Generation)
			return nil
		}
	}
	// The instances outlive the statement that started them.
	env, err := serve(context.WithoutCancel(ctx), r.node.ID(), a, r.srv, job, plan, r.opt, r, rs)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.envs[job] = env
	r.mu.Unlock()
	for op, p := range dataflow.ParallelNodes(plan) {
		n := max(p.N, 1)
		lo, hi := a.Instances(r.node.ID(), n)
		vlo, vhi := a.VNodes(r.node.ID(), n)
		r.logf("cluster: job %d operator %d: this node runs instances [%d,%d) of %d, vnodes [%d,%d), assignment %d",
			job, op, lo, hi, n, vlo, vhi, a.Generation)
	}
	go func() {
		<-env.Ctx.Done()
		r.logf("cluster: this node's instances of job %d (assignment %d) ended: %v", job, a.Generation, env.Err())
	}()
	return nil
}

// Forget drops every job for which keep is false (a view or sink
// dropped from the catalog, DROP on the coordinator or its replay): this
// node's instances of it stop, and the coordinator no longer places it,
// restarts it, or waits for its instances' reports at a commit.
func (r *Runner) Forget(keep func(job uint32) bool) {
	r.mu.Lock()
	var gone []uint32
	for job := range r.assigns {
		if !keep(job) {
			gone = append(gone, job)
			delete(r.assigns, job)
			delete(r.running, job)
		}
	}
	for name := range r.placed {
		var job uint32
		if _, err := fmt.Sscanf(name, "%d.", &job); err == nil && !keep(job) {
			delete(r.placed, name)
		}
	}
	r.mu.Unlock()
	for _, job := range gone {
		r.stopInstances(job, "dropped")
		r.logf("cluster: job %d dropped", job)
	}
}

// stopInstances stops this worker's instances of job, if it runs any.
func (r *Runner) stopInstances(job uint32, why string, args ...any) {
	r.mu.Lock()
	env := r.envs[job]
	delete(r.envs, job)
	r.mu.Unlock()
	if env != nil {
		env.Fail(pgerr.New(pgerr.AdminShutdown, "cluster: job %d: "+why, append([]any{job}, args...)...))
	}
}

// Close stops this worker's instances.
func (r *Runner) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, env := range r.envs {
		env.Fail(pgerr.New(pgerr.AdminShutdown, "cluster node %s is shutting down", r.node.ID()))
	}
}

// CaughtUp waits until this node has followed the statement log up to
// the entry that is its last now (a worker's read-your-writes after a
// statement it forwarded to the coordinator), or ctx ends.
func (r *Runner) CaughtUp(ctx context.Context) error {
	last, err := cluster.LastStatement(ctx, r.node.Client(), r.node.Target().Prefix)
	if err != nil {
		return err
	}
	for {
		r.mu.Lock()
		done := r.followed >= last
		r.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: the statement log followed up to entry %d of %d: %w", r.followedSeq(), last, ctx.Err())
		case <-time.After(5 * time.Millisecond): // polling: Follow has no notification
		}
	}
}

// followedSeq is the last log entry Follow passed.
func (r *Runner) followedSeq() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.followed
}
