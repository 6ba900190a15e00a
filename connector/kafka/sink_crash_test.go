package kafka

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamsql/streamsql/connector/sink"
)

// These tests drive an exactly-once writer as the runtime does (rows,
// barriers, PreCommit, a checkpoint made durable, Commit) and crash it at
// every point: the writer is dropped without Close (as by kill -9) and a
// new one opened with Recover from the last durable checkpoint, after
// which the epochs after that checkpoint are written again with the same
// rows (replays are deterministic). Faults come from kfake's request
// control. Each test ends by reading the topic read_committed: every row
// of every epoch must be there exactly once, in order per partition.

// crashPoint is where a step of the simulated runtime goes wrong.
type crashPoint int

const (
	none                crashPoint = iota
	beforePreCommit                // the process dies while the epoch runs
	afterPreCommit                 // dies before the checkpoint is durable
	beforeCommit                   // checkpoint durable, Commit never called
	afterCommit                    // dies after Commit, before the next checkpoint
	lostEndTxn                     // EndTxn applied, its response lost, then the process dies
	endTxnErrApplied               // EndTxn applied but answered with an error
	endTxnErrNotApplied            // EndTxn refused with an error (the transaction stays open)
	produceErr                     // a produce request fails for good
	numCrashPoints
)

var crashNames = [...]string{"none", "beforePreCommit", "afterPreCommit", "beforeCommit", "afterCommit",
	"lostEndTxn", "endTxnErrApplied", "endTxnErrNotApplied", "produceErr"}

// sim is the simulated runtime around one writer.
type sim struct {
	t       *testing.T
	c       *kfake.Cluster
	addr    string
	s       sink.Sink
	w       sink.Writer
	perEp   int64 // rows per epoch: epoch e holds ids [(e-1)*perEp, e*perEp)
	durable uint64
	pending []byte // what PreCommit(durable) returned
	dup     *kgo.Client
	crashes int
	// overlap defers each clean step's Commit until after the first batch
	// of the next step, as the runtime does (the checkpoint becomes
	// durable while the next epoch runs).
	overlap  bool
	deferred bool // a Commit(durable) is owed
}

func newSim(t *testing.T, opts map[string]string, perEp int64) *sim {
	c := newTestCluster(t)
	x := &sim{t: t, c: c, addr: c.ListenAddrs()[0], perEp: perEp}
	x.s = openTestSink(t, testSpec(x.addr, opts))
	w, err := x.s.NewWriter(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	x.w = w
	x.dup, err = kgo.NewClient(kgo.SeedBrokers(x.addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.dup.Close)
	return x
}

// write writes step e's rows in three batches, with a non-checkpoint
// barrier in the middle: step e is runtime epochs 2e-1 (ended by a plain
// barrier) and 2e (ended by the checkpoint barrier).
func (x *sim) write(e uint64) {
	ctx := context.Background()
	lo, hi := int64(e-1)*x.perEp, int64(e)*x.perEp
	mid := lo + (hi-lo)/3
	for _, r := range [][2]int64{{lo, mid}, {mid, hi - 1}, {hi - 1, hi}} {
		if err := x.w.Write(ctx, batch(r[0], r[1], e), nil); err != nil {
			x.t.Fatal(err)
		}
		if r[0] == lo {
			if x.deferred {
				x.deferred = false
				if err := x.w.Commit(ctx, x.durable, x.pending); err != nil {
					x.t.Fatalf("deferred Commit(%d): %v", x.durable, err)
				}
			}
			if err := x.w.Barrier(ctx, 2*e-1); err != nil { // a barrier inside the checkpoint interval
				x.t.Fatal(err)
			}
		}
	}
}

// crash drops the writer as kill -9 would and recovers from the last
// durable checkpoint; it returns the next epoch to write.
func (x *sim) crash() uint64 {
	x.crashes++
	x.deferred = false
	w, err := x.s.Recover(context.Background(), 0, x.durable, x.pending)
	if err != nil {
		x.t.Fatalf("recover from %d: %v", x.durable, err)
	}
	x.w = w // the old writer is abandoned, its producers not closed
	return x.durable/2 + 1
}

// applyEndTxn applies EndTxn r through another connection (while the
// control function that calls it sleeps), so that the control function
// can then lose or spoil the answer to the writer.
func applyEndTxn(t *testing.T, c *kfake.Cluster, dup *kgo.Client, applying *atomic.Bool, r *kmsg.EndTxnRequest) {
	c.SleepControl(func() {
		applying.Store(true)
		defer applying.Store(false)
		d := *r
		_, err := dup.Request(context.Background(), &d)
		if err != nil {
			t.Errorf("applying EndTxn: %v", err)
		}
	})
}

// armEndTxn makes the next EndTxn behave as p says.
func (x *sim) armEndTxn(p crashPoint) {
	var applying atomic.Bool
	x.c.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		r := req.(*kmsg.EndTxnRequest)
		if applying.Load() {
			return nil, nil, false // the copy goes through
		}
		if p != endTxnErrNotApplied {
			applyEndTxn(x.t, x.c, x.dup, &applying, r)
		}
		if p == lostEndTxn {
			return nil, nil, true // no answer ever
		}
		resp := r.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode = kerr.UnknownServerError.Code
		if p == endTxnErrNotApplied {
			resp.ErrorCode = kerr.InvalidTxnState.Code // not retried by the client
		}
		return resp, nil, true
	})
}

// step runs step e (epochs 2e-1 and 2e, checkpoint 2e) with the crash
// point p; it returns the next step.
func (x *sim) step(e uint64, p crashPoint) uint64 {
	ctx := context.Background()
	var fault *kfake.FaultHandle
	if p == produceErr {
		fault = x.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "out", Err: kerr.InvalidRecord})
		defer fault.Remove()
	}
	x.write(e)
	if p == beforePreCommit {
		return x.crash()
	}
	pending, err := x.w.PreCommit(ctx, 2*e)
	if err != nil {
		x.t.Fatal(err)
	}
	if p == afterPreCommit {
		return x.crash()
	}
	x.durable, x.pending = 2*e, pending
	if p == beforeCommit {
		return x.crash()
	}
	switch p {
	case lostEndTxn:
		x.armEndTxn(p)
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		err := x.w.Commit(cctx, 2*e, pending) // hangs until the timeout: the process "dies" then
		cancel()
		if err == nil {
			x.t.Fatalf("epoch %d: Commit succeeded without an EndTxn answer", e)
		}
		return x.crash()
	case endTxnErrApplied, endTxnErrNotApplied:
		x.armEndTxn(p)
		if x.overlap {
			x.deferred = true // fails while the next epoch runs
			return e + 1
		}
	case none:
		if x.overlap {
			x.deferred = true
			return e + 1
		}
	}
	if err := x.w.Commit(ctx, 2*e, pending); err != nil {
		x.t.Fatalf("epoch %d (%s): Commit: %v", e, crashNames[p], err)
	}
	if p == afterCommit {
		return x.crash()
	}
	return e + 1
}

// Every crash point once, in order, then a check.
func TestSinkCrashAtEveryPoint(t *testing.T) {
	x := newSim(t, nil, 50)
	e := uint64(1)
	for p := none; p < numCrashPoints; p++ {
		t0 := time.Now()
		e0 := e
		e = x.step(e, p)
		// The epoch after a crash runs cleanly (it may be the same epoch
		// again, replayed).
		e = x.step(e, none)
		t.Logf("epoch %d: %s (%v)", e0, crashNames[p], time.Since(t0))
	}
	last := e - 1
	checkExactlyOnce(t, readCommitted(t, x.addr, "out"), int64(last)*x.perEp)
	if st := x.w.Status(); st.CommittedEpoch != 2*last {
		t.Fatalf("status %+v, want committed epoch %d", st, last)
	}
}

// Random crash points over many epochs, with Commit right after PreCommit
// and with Commit overlapping the next epoch (one partition, so that any
// reordering shows).
func TestSinkCrashRandom(t *testing.T) {
	t.Run("serial", func(t *testing.T) { crashRandom(t, false) })
	t.Run("overlap", func(t *testing.T) { crashRandom(t, true) })
}

func crashRandom(t *testing.T, overlap bool) {
	x := newSim(t, map[string]string{"sink.topic.partitions": "1"}, 37)
	x.overlap = overlap
	rng := rand.New(rand.NewPCG(1, 2))
	e := uint64(1)
	for steps := 0; steps < 60; steps++ {
		p := none
		if rng.IntN(2) == 0 {
			p = crashPoint(1 + rng.IntN(int(numCrashPoints)-1))
		}
		e = x.step(e, p)
	}
	x.overlap = false
	for x.durable != 2*(e-1) || x.deferred { // end on a clean commit
		e = x.step(e, none)
	}
	t.Logf("%d epochs, %d crashes", e-1, x.crashes)
	checkExactlyOnce(t, readCommitted(t, x.addr, "out"), int64(e-1)*x.perEp)
}

// An epoch larger than sink.max-epoch-bytes still goes out in its early
// transaction (which is bounded by time, not bytes): it commits every
// part at once, with the progress record of the last. Then every crash
// point with such epochs: nothing lost, nothing twice.
func TestSinkLargeEpochEarly(t *testing.T) {
	x := newSim(t, map[string]string{"sink.max-epoch-bytes": "1024"}, 400) // ~9 parts an epoch
	ctx := context.Background()
	x.step(1, none)
	var counting atomic.Bool
	var endTxns atomic.Int32
	x.c.ControlKey(int16(kmsg.EndTxn), func(kmsg.Request) (kmsg.Response, error, bool) {
		if counting.Load() {
			endTxns.Add(1)
		}
		return nil, nil, false // observe only
	})
	x.write(2)
	w := x.w.(*txnWriter)
	if b := w.cur; b.slot == nil || b.early != b.n || len(b.cuts) < 5 {
		t.Fatalf("epoch 2: %d of %d rows produced early, %d parts cut", b.early, b.n, len(b.cuts))
	}
	pending, err := x.w.PreCommit(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	x.durable, x.pending = 4, pending
	counting.Store(true)
	if err := x.w.Commit(ctx, 4, pending); err != nil {
		t.Fatal(err)
	}
	counting.Store(false)
	if n := endTxns.Load(); n != 1 {
		t.Fatalf("epoch 2 committed in %d transactions, want 1", n)
	}
	p, ok, err := w.prog.read(ctx)
	if err != nil || !ok || p.Epoch != 4 || p.Parts < 5 || p.Part != p.Parts-1 {
		t.Fatalf("progress %+v %v %v: want epoch 4, its last part", p, ok, err)
	}
	e := uint64(3)
	for cp := none; cp < numCrashPoints; cp++ {
		e = x.step(e, cp)
		e = x.step(e, none)
	}
	checkExactlyOnce(t, readCommitted(t, x.addr, "out"), int64(e-1)*x.perEp)
}

// An epoch larger than sink.max-epoch-bytes whose early transaction
// failed is sent again at Commit in several transactions; a crash
// between two of them resends only the parts not committed.
func TestSinkEpochParts(t *testing.T) {
	x := newSim(t, map[string]string{"sink.max-epoch-bytes": "1024"}, 400) // ~22 bytes a record: ~9 parts
	ctx := context.Background()
	x.step(1, none)
	fault := x.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "out", Err: kerr.InvalidRecord})
	x.write(2) // its early transaction fails: every part goes at Commit
	if b := x.w.(*txnWriter).cur; b.slot != nil {
		_ = b.slot.cl.Flush(ctx) // the early records meet the fault
	}
	fault.Remove()
	pending, err := x.w.PreCommit(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := decodePending(pending)
	if err != nil || len(bs) != 1 || bs[0].parts() < 5 {
		t.Fatalf("pending: %v, %d batches", err, len(bs))
	}
	x.durable, x.pending = 4, pending
	// Let three EndTxns through, lose the fourth's answer.
	var n atomic.Int32
	var applying atomic.Bool
	x.c.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		if applying.Load() || n.Add(1) < 4 {
			return nil, nil, false
		}
		applyEndTxn(t, x.c, x.dup, &applying, req.(*kmsg.EndTxnRequest))
		return nil, nil, true
	})
	cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	if err := x.w.Commit(cctx, 4, pending); err == nil {
		t.Fatal("Commit succeeded without an EndTxn answer")
	}
	cancel()
	e := x.crash()
	p, ok, err := x.w.(*txnWriter).prog.read(ctx)
	if err != nil || !ok || p.Epoch != 4 || p.Part != bs[0].parts()-1 {
		t.Fatalf("progress after recovery: %+v %v %v, want epoch 4 complete (%d parts)", p, ok, err, bs[0].parts())
	}
	e = x.step(e, none)
	checkExactlyOnce(t, readCommitted(t, x.addr, "out"), int64(e-1)*x.perEp)
}

// A Kafka that does not acknowledge makes Commit wait, showing why; it
// goes on when Kafka does, and nothing is lost.
func TestSinkWaitsForKafka(t *testing.T) {
	defer func(d time.Duration) { waitStep = d }(waitStep)
	waitStep = 20 * time.Millisecond
	x := newSim(t, nil, 20)
	ctx := context.Background()
	x.step(1, none)
	fault := x.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "out", Err: kerr.NotEnoughReplicas, Count: -1})
	x.write(2)
	pending, err := x.w.PreCommit(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- x.w.Commit(ctx, 4, pending) }()
	for {
		st := x.w.Status()
		if len(st.Status) > 9 && st.Status[:9] == "retrying:" && st.OpenTxnAgeMs > 0 {
			t.Logf("status while Kafka refuses: %+v", st)
			break
		}
		select {
		case err := <-done:
			t.Fatalf("Commit returned %v while every produce failed", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	fault.Remove()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := x.w.Status(); st.Status != "running" || st.CommittedEpoch != 4 || st.Rows != 40 {
		t.Fatalf("status after Kafka came back: %+v", st)
	}
	checkExactlyOnce(t, readCommitted(t, x.addr, "out"), 40)
}

// The broker restarts (keeping its data) between PreCommit and Commit:
// Commit retries until it is back and commits the epoch once.
func TestSinkBrokerRestart(t *testing.T) {
	dir := t.TempDir()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(3), kfake.DataDir(dir), kfake.SyncWrites())
	if err != nil {
		t.Fatal(err)
	}
	addr := c.ListenAddrs()[0]
	var port int
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			for _, ch := range addr[i+1:] {
				port = port*10 + int(ch-'0')
			}
			break
		}
	}
	s := openTestSink(t, testSpec(addr, nil))
	ctx := context.Background()
	w, err := s.NewWriter(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	restarted := make(chan *kfake.Cluster, 1)
	commit := func(e uint64) {
		lo := int64(e-1) * 100
		if err := w.Write(ctx, batch(lo, lo+100, e), nil); err != nil {
			t.Fatal(err)
		}
		p, err := w.PreCommit(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		if e == 2 {
			c.Close()
			go func() {
				time.Sleep(300 * time.Millisecond)
				c2, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(3), kfake.DataDir(dir), kfake.SyncWrites(), kfake.Ports(port))
				if err != nil {
					t.Error(err)
				}
				restarted <- c2
			}()
		}
		if err := w.Commit(ctx, e, p); err != nil {
			t.Fatal(err)
		}
	}
	for e := uint64(1); e <= 3; e++ {
		commit(e)
	}
	c2 := <-restarted
	if c2 == nil {
		t.FailNow()
	}
	defer c2.Close()
	checkExactlyOnce(t, readCommitted(t, addr, "out"), 300)
	if st := w.Status(); st.CommittedEpoch != 3 {
		t.Fatalf("status %+v", st)
	}
}

var _ = errors.Is

// Another writer's transaction left open in the progress topic hides our
// later progress records from read_committed readers: recovery waits for
// it to end rather than taking an older epoch for the last committed one
// (which would send a committed epoch again).
func TestSinkRecoverWaitsForOpenProgress(t *testing.T) {
	x := newSim(t, nil, 30)
	ctx := context.Background()
	x.step(1, none)
	other, err := kgo.NewClient(kgo.SeedBrokers(x.addr), kgo.TransactionalID("another-sink"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := other.ProduceSync(ctx, &kgo.Record{Topic: defaultProgressTopic, Key: []byte("another/0"), Value: []byte(`{}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// The other transaction ends while the recovery below reads (the
	// delay only makes that likely; the check holds either way).
	ended := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		ended <- other.EndTransaction(ctx, kgo.TryAbort)
	}()
	t0 := time.Now()
	e := x.step(2, afterCommit) // step 2 (epoch 4) committed, its progress behind the open transaction; crash, recover
	t.Logf("commit and recovery took %v", time.Since(t0))
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	x.step(e, none)
	checkExactlyOnce(t, readCommitted(t, x.addr, "out"), 90)
}

// The runtime falls back to an older checkpoint (the newest was corrupt)
// while a later epoch was already committed: the replayed rows of the
// epochs the progress topic shows committed are dropped (the replay cuts
// the same epochs here).
func TestSinkRecoverFromOlderCheckpoint(t *testing.T) {
	x := newSim(t, nil, 25)
	ctx := context.Background()
	x.step(1, none)
	x.step(2, none)
	older, olderPending := x.durable, x.pending
	x.step(3, none)
	x.step(4, none)
	x.durable, x.pending = older, olderPending // the checkpoints of steps 3 and 4 are "lost"
	e := x.crash()
	if e != 3 {
		t.Fatalf("next epoch %d", e)
	}
	for ; e <= 5; e++ {
		x.step(e, none) // 3 and 4 again (dropped), then 5
	}
	checkExactlyOnce(t, readCommitted(t, x.addr, "out"), 5*x.perEp)
	if st := x.w.Status(); st.CommittedEpoch != 10 {
		t.Fatalf("status %+v", st)
	}
	_ = ctx
}

// The broker aborts a transaction that outlived its timeout (a checkpoint
// that took too long to become durable): Commit notices, and sends the
// epoch again in a fresh transaction.
func TestSinkTransactionTimeout(t *testing.T) {
	x := newSim(t, map[string]string{"properties.transaction.timeout.ms": "1000"}, 40)
	ctx := context.Background()
	x.step(1, none)
	x.write(2)
	pending, err := x.w.PreCommit(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // the broker's timeout passes (this test is about time)
	if err := x.w.Commit(ctx, 4, pending); err != nil {
		t.Fatal(err)
	}
	x.durable, x.pending = 4, pending
	x.step(3, none)
	checkExactlyOnce(t, readCommitted(t, x.addr, "out"), 3*x.perEp)
	if st := x.w.Status(); st.Errors == 0 || st.Status != "running" {
		t.Fatalf("status %+v: the aborted transaction should show as an error, then running", st)
	}
}

// Commits that lag: several checkpoints are pre-committed before the first
// Commit, so the pool of transactional ids runs out (later epochs are only
// buffered) and pending carries several epochs. One Commit commits them
// all; a crash with such a pending commits them all once.
func TestSinkLaggingCommits(t *testing.T) {
	for _, crash := range []bool{false, true} {
		x := newSim(t, nil, 30)
		ctx := context.Background()
		var pending []byte
		var err error
		for e := uint64(1); e <= 5; e++ {
			x.write(e)
			if pending, err = x.w.PreCommit(ctx, 2*e); err != nil {
				t.Fatal(err)
			}
		}
		bs, err := decodePending(pending)
		if err != nil || len(bs) != 5 {
			t.Fatalf("pending holds %d epochs (%v), want 5", len(bs), err)
		}
		if pr := x.w.(*txnWriter).prepared; pr[0].slot == nil || pr[2].slot == nil || pr[3].slot != nil || pr[4].slot != nil {
			t.Fatal("epochs 1-3 should have early transactions, 4-5 none (the pool has 3)")
		}
		x.durable, x.pending = 10, pending
		if crash {
			x.crash()
		} else if err := x.w.Commit(ctx, 10, pending); err != nil {
			t.Fatal(err)
		}
		x.step(6, none)
		checkExactlyOnce(t, readCommitted(t, x.addr, "out"), 6*x.perEp)
		if st := x.w.Status(); st.CommittedEpoch != 12 {
			t.Fatalf("status %+v", st)
		}
	}
}

// Commit comes while the next epoch already produces into its own early
// transaction (the runtime's normal overlap), and the commit fails: the
// epoch is sent again, and the next epoch's records, already appended,
// must not come before it. The next epoch's early transaction is aborted
// and its rows sent at its own commit, after.
func TestSinkOrderAfterFailedCommit(t *testing.T) {
	for _, p := range []crashPoint{none, endTxnErrNotApplied, endTxnErrApplied, produceErr} {
		x := newSim(t, map[string]string{"sink.topic.partitions": "1"}, 40) // one log: order is visible
		ctx := context.Background()
		var fault *kfake.FaultHandle
		if p == produceErr {
			// Fails a produce of epoch 1's early transaction.
			fault = x.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "out", Err: kerr.InvalidRecord})
		}
		x.write(1)
		pending1, err := x.w.PreCommit(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if fault != nil {
			fault.Remove()
		}
		x.write(2) // epoch 2's first rows go out before epoch 1 commits
		x.durable, x.pending = 2, pending1
		if p == endTxnErrNotApplied || p == endTxnErrApplied {
			x.armEndTxn(p)
		}
		if err := x.w.Commit(ctx, 2, pending1); err != nil {
			t.Fatal(err)
		}
		pending2, err := x.w.PreCommit(ctx, 4)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.w.Commit(ctx, 4, pending2); err != nil {
			t.Fatal(err)
		}
		checkExactlyOnce(t, readCommitted(t, x.addr, "out"), 2*x.perEp)
	}
}

// A producer whose buffer fills while Kafka refuses every produce makes
// Write wait (backpressure), saying so in Status, and go on when Kafka
// does.
func TestSinkFullBufferWaits(t *testing.T) {
	defer func(d time.Duration) { waitStep = d }(waitStep)
	waitStep = 20 * time.Millisecond
	for _, g := range []string{"exactly-once", "at-least-once"} {
		x := newSim(t, map[string]string{"sink.delivery-guarantee": g}, 1)
		ctx := context.Background()
		fault := x.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "out", Err: kerr.NotEnoughReplicas, Count: -1})
		const n = maxBufRecords + 1000
		done := make(chan error, 1)
		go func() {
			for i := int64(0); i < n; i += 10000 {
				if err := x.w.Write(ctx, batch(i, min(i+10000, n), 1), nil); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		for {
			if st := x.w.Status(); strings.Contains(st.Status, "buffer is full") {
				t.Logf("%s: %s", g, st.Status)
				break
			}
			select {
			case err := <-done:
				t.Fatalf("%s: Write returned (%v) while Kafka refused everything", g, err)
			case <-time.After(5 * time.Millisecond):
			}
		}
		fault.Remove()
		t0 := time.Now()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: writes done %v after Kafka came back", g, time.Since(t0))
		p, err := x.w.PreCommit(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.w.Commit(ctx, 2, p); err != nil {
			t.Fatal(err)
		}
		checkExactlyOnce(t, readCommitted(t, x.addr, "out"), n)
	}
}

// TestSinkStartsLate: an epoch that began while every producer of the
// pool was busy with uncommitted epochs starts its early transaction at
// the first Write after they commit, its rows kept so far going first
// (without that, every later epoch would be sent at its commit). Then it
// commits, or the process dies and its rows come again once.
func TestSinkStartsLate(t *testing.T) {
	for _, crash := range []bool{false, true} {
		x := newSim(t, nil, 30)
		ctx := context.Background()
		var pending []byte
		var err error
		for e := uint64(1); e <= 3; e++ {
			x.write(e)
			if pending, err = x.w.PreCommit(ctx, 2*e); err != nil {
				t.Fatal(err)
			}
		}
		w := x.w.(*txnWriter)
		lo, mid, hi := 3*x.perEp, 3*x.perEp+10, 4*x.perEp
		if err := x.w.Write(ctx, batch(lo, mid, 4), nil); err != nil {
			t.Fatal(err)
		}
		if w.cur.slot != nil {
			t.Fatal("epoch 4 started early with every producer busy")
		}
		x.durable, x.pending = 6, pending
		if err := x.w.Commit(ctx, 6, pending); err != nil {
			t.Fatal(err)
		}
		if err := x.w.Write(ctx, batch(mid, hi, 4), nil); err != nil {
			t.Fatal(err)
		}
		if b := w.cur; b.slot == nil || b.early != b.n || b.n != int(x.perEp) {
			t.Fatalf("epoch 4 after the commits: slot %v, %d of %d rows produced early", b.slot != nil, b.early, b.n)
		}
		if crash {
			x.step(x.crash(), none)
		} else {
			if pending, err = x.w.PreCommit(ctx, 8); err != nil {
				t.Fatal(err)
			}
			if err := x.w.Commit(ctx, 8, pending); err != nil {
				t.Fatal(err)
			}
		}
		checkExactlyOnce(t, readCommitted(t, x.addr, "out"), 4*x.perEp)
	}
}
