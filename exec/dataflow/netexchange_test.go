package dataflow

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster/clustertest/faultproxy"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/dataflow/netx"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// loopRelay is a Relay that carries the outputs of the instances remote
// says over loopback TCP (netx), through a fault proxy: the same code
// path as between two nodes, in one process.
type loopRelay struct {
	srv    *netx.Server
	proxy  *faultproxy.Proxy
	opt    netx.Options
	remote func(k int) bool
	mu     sync.Mutex
	ids    []string // the streams carried
}

func newLoopRelay(t *testing.T, opt netx.Options, remote func(k int) bool) *loopRelay {
	t.Helper()
	srv, err := netx.Listen("127.0.0.1:0", opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &loopRelay{srv: srv, proxy: faultproxy.Start(t, srv.Addr()), opt: opt, remote: remote}
}

func (l *loopRelay) Carry(ex ExchangeOutput, in <-chan stream.Message) <-chan stream.Message {
	if !l.remote(ex.Instance) {
		return in
	}
	id := fmt.Sprintf("%d/x%d/#%d", ex.Job, ex.Exchange, ex.Instance)
	l.mu.Lock()
	l.ids = append(l.ids, id)
	l.mu.Unlock()
	out := l.srv.Inbound(ex.Ctx, id, ex.Fail)
	netx.Outbound(ex.Ctx, l.proxy.Addr(), id, l.opt, in, ex.Fail)
	return out
}

// parJoin is SELECT l.a, r.a FROM l JOIN r ON l.a = r.a over tables 100
// and 101, the join run as n instances (two hash exchanges).
func parJoin(n int) JobSpec {
	l := &stream.Scan{Rel: 100, Name: "l", Kind: stream.ScanTable, Cols: cols}
	r := &stream.Scan{Rel: 101, Name: "r", Kind: stream.ScanTable, Cols: cols}
	col := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}
	out := []types.Column{{Name: "la", Type: types.TInt8}, {Name: "ra", Type: types.TInt8}}
	var plan stream.Node = &stream.HashJoin{Left: l, Right: r, Kind: exec.InnerJoin,
		LeftKeys: []expr.Expr{col}, RightKeys: []expr.Expr{col}, Cols: out}
	if n > 1 {
		plan = &stream.Parallel{Input: plan, Keys: [][]int{{0}, {0}}, KeyTypes: []types.T{types.TInt8}, N: n}
	}
	return JobSpec{ID: 2, Name: "join", Plan: plan, Cols: out}
}

// runEpochs runs spec over random writes to tables 100 and 101 and
// returns the view after every epoch.
func runEpochs(t *testing.T, spec JobSpec, relay Relay, seed uint64) [][]string {
	t.Helper()
	tables := map[uint32]*fakeTable{100: {rows: []int64{1, 2, 2, 3}}, 101: {rows: []int64{2, 3, 3}}}
	rt := New(Config{BarrierInterval: -1, Relay: relay}, &fakeInputs{tables: tables})
	defer rt.Close()
	j, err := rt.StartJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	var got [][]string
	for range 12 {
		randomWrites(tables[100], rng, 1, func() {})
		randomWrites(tables[101], rng, 1, func() {})
		flush(t, rt)
		if err := j.Err(); err != nil {
			t.Fatalf("%s: %v", spec.Name, err)
		}
		got = append(got, anyRows(t, j))
	}
	return got
}

func netTestOptions() netx.Options {
	return netx.Options{Heartbeat: 50 * time.Millisecond, Timeout: 2 * time.Second}
}

// TestNetExchangeEqualsInProcess: a parallel aggregation and a parallel
// join whose hash exchanges reach some (or all) instances over loopback
// TCP give, epoch by epoch, the same view as with in-process exchanges
// and as the serial plan.
func TestNetExchangeEqualsInProcess(t *testing.T) {
	plans := map[string]func(int) JobSpec{"agg": parAgg, "join": parJoin}
	remotes := map[string]func(int) bool{
		"odd": func(k int) bool { return k%2 == 1 },
		"all": func(int) bool { return true },
	}
	for _, name := range []string{"agg", "join"} {
		serial := map[uint64][][]string{}
		for _, c := range []struct {
			n    int
			seed uint64
		}{{3, 0}, {3, 1}, {4, 0}} {
			n, seed := c.n, c.seed
			if serial[seed] == nil {
				serial[seed] = runEpochs(t, plans[name](1), nil, seed)
			}
			want := serial[seed]
			local := runEpochs(t, plans[name](n), nil, seed)
			for _, rname := range []string{"odd", "all"} {
				relay := newLoopRelay(t, netTestOptions(), remotes[rname])
				remote := runEpochs(t, plans[name](n), relay, seed)
				if len(relay.ids) == 0 {
					t.Fatalf("%s: nothing went over the network", name)
				}
				for e := range want {
					if !slices.Equal(local[e], want[e]) || !slices.Equal(remote[e], want[e]) {
						t.Fatalf("%s n=%d seed %d %s, epoch %d:\nserial %v\nlocal  %v\nremote %v", name, n, seed, rname, e, want[e], local[e], remote[e])
					}
				}
			}
		}
	}
}

// TestNetExchangePeerLost: a network stream of a running job dies in the
// middle (connections reset: the peer's process was killed) or goes
// silent (paused peer, partition): the job fails with 08000 naming the
// exchange stream, within the timeout, and Flush does not hang.
func TestNetExchangePeerLost(t *testing.T) {
	for _, fault := range []string{"kill", "pause"} {
		t.Run(fault, func(t *testing.T) {
			opt := netTestOptions()
			opt.Timeout = 500 * time.Millisecond
			relay := newLoopRelay(t, opt, func(k int) bool { return k == 1 })
			tbl := &fakeTable{rows: []int64{1, 2, 3}}
			rt := New(Config{BarrierInterval: -1, Relay: relay}, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
			defer rt.Close()
			j, err := rt.StartJob(parAgg(3))
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			randomWrites(tbl, rng, 3, func() { flush(t, rt) })
			if err := j.Err(); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if fault == "kill" {
				relay.proxy.Reset()
			} else {
				relay.proxy.Cut()
			}
			deadline := time.Now().Add(15 * time.Second)
			for j.Err() == nil {
				if time.Now().After(deadline) {
					t.Fatal("the job still runs after its network stream was lost")
				}
				randomWrites(tbl, rng, 1, func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					if err := rt.Flush(ctx); err != nil && ctx.Err() != nil {
						t.Fatal("Flush hangs after the network stream was lost")
					}
				})
			}
			err = j.Err()
			if pgerr.CodeOf(err) != pgerr.ConnectionException || !strings.Contains(err.Error(), "exchange stream 1/x0/#1") {
				t.Fatalf("job failed with %v (%s)", err, pgerr.CodeOf(err))
			}
			t.Logf("%s: the job failed %s after the fault: %v", fault, time.Since(start), err)
		})
	}
}
