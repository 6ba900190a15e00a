package dist

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/clustertest"
	"github.com/streamsql/streamsql/exec/dataflow"
)

// TestCommitEpochFaults: the coordinator's commit of an epoch with one
// instance placed on another node. A failure report of the instance
// ends the commit at once (long before its timeout); a report of
// objects with the manifest's PUT stalled ends it at the timeout; either
// way the pointer stays. With the store answering again the next epoch
// commits.
func TestCommitEpochFaults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const prefix = "/commit"
	fs3, store, node, r := coordinatorRunner(t, ctx, prefix) // tables_test.go
	ensureTables(t, ctx, r, 0)
	const inst = "7.p0.i1"
	r.placed[inst] = time.Now().Add(-time.Hour)
	report := func(epoch uint64, val string) {
		if _, err := node.Client().Put(ctx, reportKey(prefix, epoch, inst), val); err != nil {
			t.Fatal(err)
		}
	}
	pointer := func() uint64 {
		p, _, ok, err := cluster.ReadPointer(ctx, node.Client(), prefix)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return 0
		}
		return p.Epoch
	}
	local := LocalPart{Files: []LocalFile{{Name: "MANIFEST-1", Size: -1, Data: []byte("local")}}}
	upload := func(epoch uint64) {
		o, err := store.PutState(ctx, epoch, "w1", 1, inst+".n0", 128, 255, []byte("state"))
		if err != nil {
			t.Fatal(err)
		}
		report(epoch, `[{"key":"`+o.Key+`","epoch":`+itoa(epoch)+`,"node":"w1","op":"`+o.Op+`","lo":128,"hi":255,"size":5,"crc":`+itoa(uint64(o.CRC))+`}]`)
	}

	// A failure report: given up at once.
	e1 := dataflow.EpochAt(time.Now())
	report(e1, `{"error":"injected"}`)
	start := time.Now()
	if _, err := r.CommitEpoch(ctx, e1, 20*time.Second, local); err == nil || !strings.Contains(err.Error(), "failed to upload its state: injected") {
		t.Fatalf("commit with a failure report: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the failure report ended the commit only after %s", d)
	}
	if p := pointer(); p != 0 {
		t.Fatalf("pointer moved to %d", p)
	}

	// The manifest's PUT stalls: given up at the timeout.
	e2 := e1 + 1
	upload(e2)
	fs3.Faults.Set(clustertest.FaultStall, "/MANIFEST")
	start = time.Now()
	if _, err := r.CommitEpoch(ctx, e2, 500*time.Millisecond, local); err == nil || !strings.Contains(err.Error(), "MANIFEST") {
		t.Fatalf("commit with the manifest stalled: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the stalled commit ended only after %s", d)
	}
	if p := pointer(); p != 0 {
		t.Fatalf("pointer moved to %d", p)
	}
	fs3.Faults.Set(clustertest.FaultNone, "")

	// The store answers: the next epoch commits, whole.
	e3 := e2 + 1
	upload(e3)
	p, err := r.CommitEpoch(ctx, e3, 20*time.Second, local)
	if err != nil {
		t.Fatal(err)
	}
	if got := pointer(); got != e3 || p.Epoch != e3 {
		t.Fatalf("pointer %d (returned %d), want %d", got, p.Epoch, e3)
	}
	ck, err := store.Load(ctx, p.Manifest)
	if err != nil || len(ck.Manifest.Objects) != 2 {
		t.Fatalf("committed checkpoint: %v %v", ck, err)
	}
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
