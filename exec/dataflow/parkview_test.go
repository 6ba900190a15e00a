package dataflow

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/storage/checkpoint"
	"github.com/streamsql/streamsql/types"
)

// overAgg is SELECT n, count(*), sum(a) FROM agg GROUP BY n: job 2, an
// aggregation of view 1 (parAgg's), run as n instances.
func overAgg(n int) JobSpec {
	scan := &stream.Scan{Rel: 1, Name: "agg", Kind: stream.ScanView, Cols: []types.Column{{Name: "a", Type: types.TInt8}, {Name: "n", Type: types.TInt8}, {Name: "s", Type: types.TNumeric}}}
	a := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}
	cnt := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "n"}
	out := []types.Column{{Name: "a", Type: types.TInt8}, {Name: "n", Type: types.TInt8}, {Name: "s", Type: types.TNumeric}}
	var plan stream.Node = &stream.HashAgg{Input: scan, GroupBy: []expr.Expr{cnt},
		Aggs: []stream.AggSpec{{Kind: stream.AggCountStar}, {Kind: stream.AggSum, Arg: a}}, Cols: out}
	if n > 1 {
		plan = &stream.Parallel{Input: plan, Keys: [][]int{{1}}, KeyTypes: []types.T{types.TInt8}, N: n}
	}
	return JobSpec{ID: 2, Name: "over", Plan: plan, Key: []int{0}, Cols: out}
}

// TestParkFromViewOverView: a view over a view, both parked on one
// checkpoint read back from its files (a cluster's restart), stopped and
// started again in the same running runtime. Started under HoldEpochs
// (no epoch between the two starts) the downstream view resumes from the
// checkpoint, taking the upstream's changes after it without a
// snapshot, and both equal an uninterrupted run. When an epoch starts
// (with writes) between the two starts, the downstream cannot resume (it
// would miss that epoch's changes) and is rebuilt from the upstream's
// rows, still equal.
func TestParkFromViewOverView(t *testing.T) {
	for _, hold := range []bool{true, false} {
		dir := t.TempDir()
		tbl := &fakeTable{}
		in := &ckInputs{fakeInputs: fakeInputs{tables: map[uint32]*fakeTable{100: tbl}}}
		rng := rand.New(rand.NewPCG(5, 6))
		store, _ := openStore(t, dir)
		rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store}, in)
		up, down := parAgg(3), overAgg(2)
		for _, s := range []JobSpec{up, down} {
			if _, err := rt.StartJob(s); err != nil {
				t.Fatal(err)
			}
		}
		randomWrites(tbl, rng, 5, func() { flush(t, rt) })
		epoch := checkpointNow(t, rt)
		randomWrites(tbl, rng, 3, func() { flush(t, rt) })
		cp, err := checkpoint.LoadEpoch(dir, epoch)
		if err != nil {
			t.Fatal(err)
		}

		release := func() {}
		if hold {
			release = rt.HoldEpochs()
		}
		rt.StopJob(down.ID)
		rt.StopJob(up.ID)
		for _, id := range []uint32{up.ID, down.ID} {
			if ok, err := rt.ParkFrom(id, cp); !ok || err != nil {
				t.Fatalf("ParkFrom %d: %v %v", id, ok, err)
			}
		}
		ju, err := rt.StartJob(up)
		if err != nil {
			t.Fatal(err)
		}
		if !hold {
			// an epoch with writes, complete in the upstream, before the
			// downstream starts
			tbl.insert(7, 7, 8)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := rt.WaitEpoch(ctx, rt.Inject()); err != nil {
				t.Fatal(err)
			}
			cancel()
		}
		jd, err := rt.StartJob(down)
		if err != nil {
			t.Fatal(err)
		}
		release()
		randomWrites(tbl, rng, 3, func() { flush(t, rt) })
		if rec := ju.Recovery(); rec.Epoch != epoch {
			t.Fatalf("hold %v: the upstream restarted from %+v, want checkpoint %d", hold, rec, epoch)
		}
		if rec := jd.Recovery(); hold && rec.Epoch != epoch {
			t.Fatalf("the downstream restarted under HoldEpochs from %+v, want checkpoint %d", rec, epoch)
		} else if !hold && rec.Epoch != 0 {
			t.Fatalf("the downstream resumed from %+v after its upstream had moved on", rec)
		}

		serial := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
		su, err := serial.StartJob(parAgg(1))
		if err != nil {
			t.Fatal(err)
		}
		sd, err := serial.StartJob(overAgg(1))
		if err != nil {
			t.Fatal(err)
		}
		flush(t, serial)
		if got, want := viewRows(t, ju), viewRows(t, su); !slices.Equal(got, want) {
			t.Fatalf("hold %v: upstream %v, want %v", hold, got, want)
		}
		if got, want := viewRows(t, jd), viewRows(t, sd); !slices.Equal(got, want) || len(want) == 0 {
			t.Fatalf("hold %v: downstream %v, want %v", hold, got, want)
		}
		serial.Close()
		rt.Close()
	}
}
