package dataflow

import (
	"strings"
	"testing"
	"time"
)

// With Config.DeferSinkCommits (a cluster's coordinator) a checkpoint
// committed here does not commit the sinks: they commit the epoch only
// once SinksDurable names it (the cluster's pointer moved). A job parked
// on that checkpoint (a cluster's restart, RESUME) recovers its writer
// with the checkpoint's pending bytes, not the runtime's recovered
// checkpoint's.
func TestSinkCommitsDeferred(t *testing.T) {
	dir, tbl, in, spec := tableSinkSetup(t)
	store, _ := openStore(t, dir)
	rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store, DeferSinkCommits: true}, in)
	ls := &logSink{}
	if _, err := rt.StartJob(spec(ls)); err != nil {
		t.Fatal(err)
	}
	flush(t, rt)
	e1 := checkpointNow(t, rt)
	tbl.insert(7)
	flush(t, rt)
	e2 := checkpointNow(t, rt)
	flush(t, rt) // the sink's goroutine has seen every wake-up it got
	if got := strings.Join(ls.calls(), "; "); got != "new; precommit [1 5]; precommit [7]" {
		t.Fatalf("calls before SinksDurable: %s", got)
	}
	rt.SinksDurable(e1)
	waitCalls(t, ls, "new; precommit [1 5]; precommit [7]; commit [1 5]")
	rt.SinksDurable(e2)
	waitCalls(t, ls, "new; precommit [1 5]; precommit [7]; commit [1 5]; commit [7]")
	tbl.insert(9)
	flush(t, rt)
	checkpointNow(t, rt) // pre-commits [9]; never named by SinksDurable
	rt.Close()

	// A restart parked on the last checkpoint: the writer recovers [9].
	store2, cp := openStore(t, dir)
	rt2 := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store2, DeferSinkCommits: true}, in)
	defer rt2.Close()
	if ok, err := rt2.ParkFrom(1, cp); !ok || err != nil {
		t.Fatalf("ParkFrom: %v %v", ok, err)
	}
	ls2 := &logSink{}
	if _, err := rt2.StartJob(spec(ls2)); err != nil {
		t.Fatal(err)
	}
	flush(t, rt2)
	if got := ls2.calls(); len(got) == 0 || got[0] != "recover [9]" {
		t.Fatalf("calls after the restart: %s", strings.Join(got, "; "))
	}
}

// waitCalls polls the sink's calls until they are want (the commit runs
// on the sink's goroutine), up to 10 s.
func waitCalls(t *testing.T, ls *logSink, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := strings.Join(ls.calls(), "; ")
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("calls: %s, want %s", got, want)
		}
		time.Sleep(5 * time.Millisecond) // polling for the sink goroutine, with a deadline
	}
}
