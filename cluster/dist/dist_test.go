package dist

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/clustertest"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/dataflow/netx"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// The jobs both nodes know (the catalog's distribution is not built: the
// worker builds the same plans).
var cols = []types.Column{{Name: "a", Type: types.TInt8}}

// aggJob is SELECT a, count(*), sum(a) FROM t GROUP BY a, as n instances.
func aggJob(n int) dataflow.JobSpec {
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	col := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}
	out := []types.Column{{Name: "a", Type: types.TInt8}, {Name: "n", Type: types.TInt8}, {Name: "s", Type: types.TNumeric}}
	var plan stream.Node = &stream.HashAgg{Input: scan, GroupBy: []expr.Expr{col},
		Aggs: []stream.AggSpec{{Kind: stream.AggCountStar}, {Kind: stream.AggSum, Arg: col}}, Cols: out}
	plan = &stream.Parallel{Input: plan, Keys: [][]int{{0}}, KeyTypes: []types.T{types.TInt8}, N: n}
	return dataflow.JobSpec{ID: 1, Name: "agg", Plan: plan, Key: []int{0}, Cols: out}
}

// joinJob is SELECT l.a, r.a FROM l JOIN r ON l.a = r.a, as n instances.
func joinJob(n int) dataflow.JobSpec {
	l := &stream.Scan{Rel: 100, Name: "l", Kind: stream.ScanTable, Cols: cols}
	r := &stream.Scan{Rel: 101, Name: "r", Kind: stream.ScanTable, Cols: cols}
	col := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}
	out := []types.Column{{Name: "la", Type: types.TInt8}, {Name: "ra", Type: types.TInt8}}
	var plan stream.Node = &stream.HashJoin{Left: l, Right: r, Kind: exec.InnerJoin,
		LeftKeys: []expr.Expr{col}, RightKeys: []expr.Expr{col}, Cols: out}
	plan = &stream.Parallel{Input: plan, Keys: [][]int{{0}, {0}}, KeyTypes: []types.T{types.TInt8}, N: n}
	return dataflow.JobSpec{ID: 2, Name: "join", Plan: plan, Cols: out}
}

func jobs() []dataflow.JobSpec { return []dataflow.JobSpec{aggJob(4), joinJob(3)} }

func testOpt() netx.Options {
	return netx.Options{Heartbeat: 100 * time.Millisecond, Timeout: 3 * time.Second, ConnectTimeout: 20 * time.Second}
}

const workerEnv = "DIST_TEST_WORKER" // "<etcd endpoint> <prefix>"

// TestWorkerProcess is the worker node's body (a child process of
// TestTwoProcesses); it does nothing in a normal run.
func TestWorkerProcess(t *testing.T) {
	arg := os.Getenv(workerEnv)
	if arg == "" {
		t.Skip("the worker process of TestTwoProcesses")
	}
	f := strings.Fields(arg)
	die := func(err error) { fmt.Println("worker:", err); os.Exit(2) }
	ctx := context.Background()
	srv, err := netx.Listen("127.0.0.1:0", testOpt())
	if err != nil {
		die(err)
	}
	node, err := cluster.Join(ctx, cluster.Config{Target: cluster.Target{Endpoints: []string{f[0]}, Prefix: f[1]},
		NodeID: "w1", Address: "127.0.0.1:1", Exchange: srv.Addr(), LeaseTTL: 2 * time.Second})
	if err != nil {
		die(err)
	}
	// Wait for an assignment that names this node, then run its instances.
	var a cluster.Assignment
	for {
		var ok bool
		a, ok, err = cluster.ReadAssignment(ctx, node.Client(), f[1])
		if err != nil {
			die(err)
		}
		if ok && slices.ContainsFunc(a.Nodes, func(p cluster.Placed) bool { return p.NodeID == "w1" }) {
			break
		}
		time.Sleep(20 * time.Millisecond) // polling; the parent bounds the test
	}
	var envs []*stream.Env
	for _, j := range jobs() {
		env, err := Serve(ctx, "w1", a, srv, j.ID, j.Plan, testOpt())
		if err != nil {
			die(err)
		}
		envs = append(envs, env)
	}
	fmt.Println("serving", a.Generation)
	for _, env := range envs {
		<-env.Ctx.Done()
		fmt.Println("job ended:", env.Err())
	}
	os.Exit(0)
}

// table is an in-memory table with a change feed (dataflow.Inputs).
type table struct {
	mu   sync.Mutex
	rows []int64
	log  []dataflow.Delta
}

func rec(vals ...int64) arrow.RecordBatch {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues(vals, nil)
	return array.NewRecordBatch(types.ArrowSchema(cols), []arrow.Array{b.NewArray()}, int64(len(vals)))
}

func (t *table) write(rng *rand.Rand) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for range 1 + rng.IntN(10) {
		if len(t.rows) > 0 && rng.IntN(3) == 0 {
			i := rng.IntN(len(t.rows))
			v := t.rows[i]
			t.rows = slices.Delete(t.rows, i, i+1)
			t.log = append(t.log, dataflow.Delta{Deleted: []arrow.RecordBatch{rec(v)}})
			continue
		}
		vals := make([]int64, 1+rng.IntN(30))
		for i := range vals {
			vals[i] = rng.Int64N(60) - 10
		}
		t.rows = append(t.rows, vals...)
		t.log = append(t.log, dataflow.Delta{Inserted: []arrow.RecordBatch{rec(vals...)}})
	}
}

type feed struct {
	t  *table
	at int
}

func (f *feed) PollTo(p dataflow.Position) ([]dataflow.Delta, error) {
	f.t.mu.Lock()
	defer f.t.mu.Unlock()
	to := p.(int)
	if to <= f.at {
		return nil, nil
	}
	d := f.t.log[f.at:to]
	f.at = to
	return d, nil
}
func (f *feed) Close() {}

type inputs map[uint32]*table

func (in inputs) SubscribeTable(oid uint32) ([]arrow.RecordBatch, dataflow.Feed, error) {
	t := in[oid]
	t.mu.Lock()
	defer t.mu.Unlock()
	return []arrow.RecordBatch{rec(slices.Clone(t.rows)...)}, &feed{t: t, at: len(t.log)}, nil
}

func (in inputs) TablePosition(oid uint32) dataflow.Position {
	t := in[oid]
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.log)
}

func (in inputs) OpenSource(oid uint32, _ func(error)) (dataflow.RunFunc, bool, error) {
	return nil, false, fmt.Errorf("no source %d", oid)
}

// rows renders a job's view as sorted lines.
func rows(t *testing.T, j *dataflow.Job) []string {
	t.Helper()
	_, recs, err := j.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		for i := 0; i < int(r.NumRows()); i++ {
			var b strings.Builder
			for c := 0; c < int(r.NumCols()); c++ {
				fmt.Fprintf(&b, "%s ", r.Column(c).ValueStr(i))
			}
			out = append(out, b.String())
		}
	}
	slices.Sort(out)
	return out
}

// run runs the jobs over the same random writes, epoch by epoch, on rt's
// inputs, calling after(epoch) after each flush; it returns each job's view
// after every epoch.
func run(t *testing.T, rt *dataflow.Runtime, in inputs, epochs int) [][][]string {
	t.Helper()
	var js []*dataflow.Job
	for _, spec := range jobs() {
		j, err := rt.StartJob(spec)
		if err != nil {
			t.Fatal(err)
		}
		js = append(js, j)
	}
	rng := rand.New(rand.NewPCG(4, 2))
	var out [][][]string
	for range epochs {
		in[100].write(rng)
		in[101].write(rng)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := rt.Flush(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		var views [][]string
		for _, j := range js {
			if err := j.Err(); err != nil {
				t.Fatalf("%s: %v", j.Spec().Name, err)
			}
			views = append(views, rows(t, j))
		}
		out = append(out, views)
	}
	return out
}

func newInputs() inputs {
	return inputs{100: {rows: []int64{1, 2, 2, 3}}, 101: {rows: []int64{2, 3, 3}}}
}

// TestTwoProcesses: a coordinator (this process) and a worker (a child
// process) join an etcd cluster; the coordinator assigns the instances
// over both from the membership (fenced, generation 1); a parallel
// aggregation (4 instances) and a parallel join (3) run with the
// worker's instances in the worker, and give epoch by epoch the same
// views as one process. Then the worker is killed with SIGKILL: both jobs
// fail with 08000 naming an exchange stream, and nothing hangs.
func TestTwoProcesses(t *testing.T) {
	const epochs = 10
	// The single-node run.
	in1 := newInputs()
	rt1 := dataflow.New(dataflow.Config{BarrierInterval: -1}, in1)
	single := run(t, rt1, in1, epochs)
	rt1.Close()

	e := clustertest.StartEtcd(t)
	const prefix = "/dist"
	srv, err := netx.Listen("127.0.0.1:0", testOpt())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	coord, err := cluster.Join(ctx, cluster.Config{Target: cluster.Target{Endpoints: []string{e.Endpoint}, Prefix: prefix},
		NodeID: "c0", Address: "127.0.0.1:1", Exchange: srv.Addr(), LeaseTTL: 2 * time.Second, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer coord.Close()

	cmd := osexec.Command(os.Args[0], "-test.run=^TestWorkerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), workerEnv+"="+e.Endpoint+" "+prefix)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()

	var nodes []cluster.NodeInfo
	for len(nodes) < 2 || !coord.IsCoordinator() {
		if ctx.Err() != nil {
			t.Fatal("the worker did not join")
		}
		if nodes, err = coord.Nodes(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // polling with the context's deadline
	}
	fence, err := coord.Fence()
	if err != nil {
		t.Fatal(err)
	}
	a, err := fence.WriteAssignment(ctx, nodes)
	if err != nil {
		t.Fatal(err)
	}
	srv.SetGeneration(a.Generation) // before any worker's stream arrives
	for _, spec := range jobs() {
		p := dataflow.ParallelNodes(spec.Plan)[0]
		lo, hi := a.Instances("w1", p.N)
		vlo, vhi := a.VNodes("w1", p.N)
		t.Logf("%s: worker w1 runs instances [%d,%d) of %d, vnodes [%d,%d)", spec.Name, lo, hi, p.N, vlo, vhi)
		if hi <= lo {
			t.Fatalf("%s: the worker runs nothing", spec.Name)
		}
	}
	select {
	case l := <-lines:
		if !strings.HasPrefix(l, "serving") {
			t.Fatalf("worker: %s", l)
		}
	case <-ctx.Done():
		t.Fatal("the worker did not start serving")
	}

	in2 := newInputs()
	rt2 := dataflow.New(dataflow.Config{BarrierInterval: -1,
		Placement: &Placement{Self: "c0", Assign: a, Server: srv, Opt: testOpt()}}, in2)
	defer rt2.Close()
	spread := run(t, rt2, in2, epochs)
	for ep := range single {
		for j := range single[ep] {
			if !slices.Equal(single[ep][j], spread[ep][j]) {
				t.Fatalf("epoch %d, job %d:\none node  %v\ntwo nodes %v", ep, j, single[ep][j], spread[ep][j])
			}
		}
	}
	if len(single[epochs-1][0]) == 0 || len(single[epochs-1][1]) == 0 {
		t.Fatal("empty views prove nothing")
	}

	// kill -9 of the worker: the jobs fail, with the stream's error.
	start := time.Now()
	_ = cmd.Process.Kill()
	rng := rand.New(rand.NewPCG(9, 9))
	for _, j := range rt2.Jobs() {
		for j.Err() == nil {
			if time.Since(start) > 20*time.Second {
				t.Fatalf("%s still runs after the worker's death", j.Spec().Name)
			}
			in2[100].write(rng)
			in2[101].write(rng)
			fctx, fcancel := context.WithTimeout(ctx, 20*time.Second)
			if err := rt2.Flush(fctx); err != nil && fctx.Err() != nil {
				t.Fatal("Flush hangs after the worker's death")
			}
			fcancel()
		}
		err := j.Err()
		if pgerr.CodeOf(err) != pgerr.ConnectionException || !strings.Contains(err.Error(), "exchange stream") {
			t.Fatalf("%s failed with %v (%s)", j.Spec().Name, err, pgerr.CodeOf(err))
		}
		t.Logf("%s failed %s after the kill: %v", j.Spec().Name, time.Since(start), err)
	}
}
