package dataflow

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/storage/checkpoint"
	"github.com/streamsql/streamsql/types"
)

// parRoute is SELECT a, n, count(*), sum(a) FROM (SELECT a, count(*) AS n
// FROM t GROUP BY a) GROUP BY a, n, both aggregations run as n instances.
// The outer one routes by (a, n) through an exchange, or, noShuffle, by a
// alone: its input is already partitioned by a (the inner one's routing),
// so instance k consumes the inner instance k's output directly. Every
// change of a count moves the outer group (a, n) to (a, n'): with (a, n)
// routing the delete and the insert reach two instances.
func parRoute(n int, noShuffle bool) JobSpec {
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	a := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}
	innerCols := []types.Column{{Name: "a", Type: types.TInt8}, {Name: "n", Type: types.TInt8}}
	inner := parAt(&stream.HashAgg{Input: scan, GroupBy: []expr.Expr{a}, Aggs: []stream.AggSpec{{Kind: stream.AggCountStar}}, Cols: innerCols},
		[][]int{{0}}, []types.T{types.TInt8}, n)
	nc := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "n"}
	out := []types.Column{{Name: "a", Type: types.TInt8}, {Name: "n", Type: types.TInt8}, {Name: "c", Type: types.TInt8}, {Name: "s", Type: types.TNumeric}}
	agg := &stream.HashAgg{Input: inner, GroupBy: []expr.Expr{a, nc},
		Aggs: []stream.AggSpec{{Kind: stream.AggCountStar}, {Kind: stream.AggSum, Arg: a}}, Cols: out}
	var plan stream.Node = agg
	if n > 1 {
		p := &stream.Parallel{Input: agg, Keys: [][]int{{0, 1}}, KeyTypes: []types.T{types.TInt8, types.TInt8}, N: n}
		if noShuffle {
			p.Keys, p.KeyTypes, p.NoShuffle = [][]int{{0}}, []types.T{types.TInt8}, true
		}
		plan = p
	}
	return JobSpec{ID: 1, Name: "route", Plan: plan, Key: []int{0, 1}, Cols: out}
}

// TestNoShuffleEqualsSerial: an aggregation consuming the instances of
// another directly (no exchange between them) gives, epoch by epoch, the
// view of one instance each, at parallelism 3 and 8, and so does the same
// plan with the exchange.
func TestNoShuffleEqualsSerial(t *testing.T) {
	for seed := range uint64(3) {
		var want [][]string
		for _, c := range []struct {
			n         int
			noShuffle bool
		}{{1, false}, {3, true}, {8, true}, {3, false}} {
			tbl := &fakeTable{rows: []int64{1, 2, 2, 3}}
			rt := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
			j, err := rt.StartJob(parRoute(c.n, c.noShuffle))
			if err != nil {
				t.Fatal(err)
			}
			var got [][]string
			randomWrites(tbl, rand.New(rand.NewPCG(seed, 13)), 15, func() {
				flush(t, rt)
				got = append(got, anyRows(t, j))
			})
			rt.Close()
			if c.n == 1 {
				want = got
				if len(want[len(want)-1]) < 3 {
					t.Fatalf("seed %d: too few groups to test anything: %v", seed, want[len(want)-1])
				}
				continue
			}
			for e := range want {
				if !slices.Equal(got[e], want[e]) {
					t.Fatalf("seed %d, %+v, epoch %d: %v, want %v", seed, c, e, got[e], want[e])
				}
			}
		}
	}
}

// TestNoShuffleRestoresByVNode: a checkpoint whose outer aggregation was
// routed by (a, n) restores into the no-shuffle plan routed by a at the
// same parallelism (and back): its groups now belong to other instances,
// so each instance takes the vnodes it owns from every old instance's
// state instead of its own old state. The same with a record written
// before routing keys were kept (no Keys in its Par). Each view equals an
// uninterrupted serial run; restoring instance by instance leaves groups
// in instances their rows no longer reach (a count that never moves, a
// group twice).
func TestNoShuffleRestoresByVNode(t *testing.T) {
	for _, c := range []struct {
		from, to bool // noShuffle before and after the restart
		oldMeta  bool // the record has no routing keys
	}{{false, true, false}, {true, false, false}, {false, true, true}} {
		t.Run(fmt.Sprintf("%v-%v-old%v", c.from, c.to, c.oldMeta), func(t *testing.T) {
			const n = 3
			dir := t.TempDir()
			tbl := &fakeTable{}
			in := &ckInputs{fakeInputs: fakeInputs{tables: map[uint32]*fakeTable{100: tbl}}}
			rng := rand.New(rand.NewPCG(5, 9))
			store, _ := openStore(t, dir)
			rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store}, in)
			if _, err := rt.StartJob(parRoute(n, c.from)); err != nil {
				t.Fatal(err)
			}
			randomWrites(tbl, rng, 6, func() { flush(t, rt) })
			checkpointNow(t, rt)
			randomWrites(tbl, rng, 3, func() {})
			rt.Close()

			store2, cp := openStore(t, dir)
			if c.oldMeta {
				stripParKeys(t, cp)
			}
			rt2 := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store2, Recovered: cp}, in)
			j, err := rt2.StartJob(parRoute(n, c.to))
			if err != nil {
				t.Fatal(err)
			}
			rt2.EndRecovery()
			flush(t, rt2)
			if rec := j.Recovery(); !j.resumed || rec.Epoch == 0 || len(rec.Rebuilt) > 0 {
				t.Fatalf("did not resume: %+v", rec)
			}
			randomWrites(tbl, rng, 4, func() { flush(t, rt2) })
			rt3 := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
			j3, err := rt3.StartJob(parRoute(1, false))
			if err != nil {
				t.Fatal(err)
			}
			flush(t, rt3)
			got, want := anyRows(t, j), anyRows(t, j3)
			rt3.Close()
			rt2.Close()
			if len(want) < 3 {
				t.Fatalf("too few groups to test anything: %v", want)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("after the restart %v, want %v", got, want)
			}
		})
	}
}

// stripParKeys rewrites cp's runtime record as one written before the
// routing keys of Parallel nodes were kept.
func stripParKeys(t *testing.T, cp *checkpoint.Checkpoint) {
	t.Helper()
	var meta ckptMeta
	if err := json.Unmarshal(cp.Manifest.Meta, &meta); err != nil {
		t.Fatal(err)
	}
	stripped := 0
	for i := range meta.Jobs {
		for k := range meta.Jobs[i].Par {
			if meta.Jobs[i].Par[k].Keys != nil {
				meta.Jobs[i].Par[k].Keys = nil
				stripped++
			}
		}
	}
	if stripped == 0 {
		t.Fatal("the record has no routing keys to strip")
	}
	b, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	cp.Manifest.Meta = b
}
