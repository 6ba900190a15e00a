package dataflow

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamsql/streamsql/storage/checkpoint"
)

// TestParkFromRestartsMidRun: a running job's checkpoint, read back from
// its files (as a cluster coordinator restores its part), holds each
// parallel instance's state under InstanceStateID; after ParkFrom the
// job, stopped and started again in the same runtime, resumes from it
// (not from its inputs), reads only the writes after the cut, and its
// view equals an uninterrupted serial run. A checkpoint without the job
// parks nothing.
func TestParkFromRestartsMidRun(t *testing.T) {
	dir := t.TempDir()
	tbl := &fakeTable{}
	in := &ckInputs{fakeInputs: fakeInputs{tables: map[uint32]*fakeTable{100: tbl}}}
	rng := rand.New(rand.NewPCG(3, 4))
	store, _ := openStore(t, dir)
	rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store}, in)
	defer rt.Close()
	spec := parAgg(3)
	if _, err := rt.StartJob(spec); err != nil {
		t.Fatal(err)
	}
	randomWrites(tbl, rng, 5, func() { flush(t, rt) })
	epoch := checkpointNow(t, rt)
	before := len(tbl.log)
	randomWrites(tbl, rng, 3, func() { flush(t, rt) })

	cp, err := checkpoint.LoadEpoch(dir, epoch)
	if err != nil {
		t.Fatal(err)
	}
	states := 0
	for k := range 3 {
		if cp.Op(InstanceStateID(spec.Plan, spec.ID, 0, k)) != nil {
			states++
		}
	}
	if states != 3 { // every instance has groups (50 keys over 3 instances)
		t.Fatalf("no instance state under InstanceStateID in %v", cp.Ops())
	}
	if InstanceStateID(spec.Plan, spec.ID, 1, 0) != "" {
		t.Fatal("an id for an operator the plan does not have")
	}
	if !CheckpointHasJob(cp, spec.ID) || CheckpointHasJob(cp, 99) {
		t.Fatal("CheckpointHasJob")
	}
	if ok, err := rt.ParkFrom(99, cp); ok || err != nil {
		t.Fatalf("ParkFrom of a job the checkpoint does not have: %v %v", ok, err)
	}

	rt.StopJob(spec.ID)
	if ok, err := rt.ParkFrom(spec.ID, cp); !ok || err != nil {
		t.Fatalf("ParkFrom: %v %v", ok, err)
	}
	j, err := rt.StartJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	flush(t, rt)
	if rec := j.Recovery(); rec.Epoch != epoch {
		t.Fatalf("restarted from %+v, want checkpoint %d", rec, epoch)
	}
	var after int64
	for _, d := range tbl.log[before:] {
		for _, r := range append(d.Inserted, d.Deleted...) {
			after += r.NumRows()
		}
	}
	if got := j.Counters().RowsIn; got != after {
		t.Fatalf("the restarted job read %d rows, want the %d written after the checkpoint", got, after)
	}
	serial := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	js, err := serial.StartJob(parAgg(1))
	if err != nil {
		t.Fatal(err)
	}
	flush(t, serial)
	if got, want := viewRows(t, j), viewRows(t, js); !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
	serial.Close()
}
