package stream

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestAggColStateRoundTrip feeds random changelogs (retractions, NULLs,
// duplicates) to every aggregate state over every argument type, and at
// random points copies each group's state (appendState) into a fresh
// state at another group id (loadState): the copy encodes to the same
// bytes, gives the same results, and keeps giving the same results as the
// original through the rest of the changelog.
func TestAggColStateRoundTrip(t *testing.T) {
	aggs := append(propAggs(t), varPropAggs(t)...)
	for _, appendOnly := range []bool{false, true} {
		for seed := int64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("appendOnly=%v/seed=%d", appendOnly, seed), func(t *testing.T) {
				testAggColRoundTrip(t, aggs, appendOnly, seed)
			})
		}
	}
}

func testAggColRoundTrip(t *testing.T, aggs []propAgg, appendOnly bool, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	env := newEnv(t)
	ectx := env.evalContext()
	const ngroups = 5
	specs := make([]AggSpec, len(aggs))
	newCols := func() []aggCol {
		cols := make([]aggCol, len(aggs))
		for j, a := range aggs {
			spec := a.spec
			if spec == nil {
				s, err := AggSpecFor(a.call)
				if err != nil {
					t.Fatal(err)
				}
				spec = &s
			}
			specs[j] = *spec
			var at types.T
			if spec.Arg != nil {
				at = spec.Arg.Type()
			}
			c, err := newAggCol(*spec, at, appendOnly)
			if err != nil {
				t.Fatal(err)
			}
			c.grow(ngroups + 3)
			cols[j] = c
		}
		return cols
	}
	orig := newCols()
	var copies [][]aggCol // each with groups shifted by 3
	var live [][]types.Value
	apply := func(cols []aggCol, rows [][]types.Value, ops []Op, shift int32) {
		t.Helper()
		gids := make([]int32, len(rows))
		for i, r := range rows {
			g := int32(ngroups - 1)
			if k, ok := r[0].(int64); ok {
				g = int32(k)
			}
			gids[i] = g + shift
		}
		var signs []int64
		if ops != nil {
			signs = make([]int64, len(ops))
			for i, op := range ops {
				signs[i] = op.Sign()
			}
		}
		if err := updateAggs(env, ectx, specs, cols, propRecord(t, rows), gids, signs, &aggFilters{}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step int) {
		t.Helper()
		want := make([]cell, ngroups)
		got := make([]cell, ngroups)
		gs := []int32{0, 1, 2, 3, 4}
		shifted := []int32{3, 4, 5, 6, 7}
		for j := range orig {
			if err := orig[j].results(gs, want); err != nil {
				t.Fatal(err)
			}
			for ci, cp := range copies {
				if err := cp[j].results(shifted, got); err != nil {
					t.Fatal(err)
				}
				for g := range want {
					if !got[g].same(want[g]) {
						t.Fatalf("step %d, copy %d, %s, group %d: %+v, want %+v", step, ci, specs[j], g, got[g], want[g])
					}
				}
			}
		}
	}
	for step := 0; step < 60; step++ {
		var ops []Op
		var rows [][]types.Value
		for n := rng.Intn(10); n > 0; n-- {
			if !appendOnly && len(live) > 0 && rng.Intn(3) == 0 {
				i := rng.Intn(len(live))
				ops, rows = append(ops, Delete), append(rows, live[i])
				live = append(live[:i], live[i+1:]...)
				continue
			}
			nr := propRow(rng)
			if len(live) > 0 && rng.Intn(5) == 0 {
				nr = live[rng.Intn(len(live))]
			}
			ops, rows = append(ops, Insert), append(rows, nr)
			live = append(live, nr)
		}
		if appendOnly {
			ops = nil
		}
		if len(rows) > 0 {
			apply(orig, rows, ops, 0)
			for _, cp := range copies {
				apply(cp, rows, ops, 3)
			}
		}
		if rng.Intn(6) != 0 {
			check(step)
			continue
		}
		// copied before anything reads the results (a state read last
		// before the changes, as a checkpoint finds it)
		cp := newCols()
		for j, c := range orig {
			for g := int32(0); g < ngroups; g++ {
				b := c.appendState(nil, g)
				rest, err := cp[j].loadState(g+3, b)
				if err != nil {
					t.Fatalf("step %d, %s, group %d: %v", step, specs[j], g, err)
				}
				if len(rest) != 0 {
					t.Fatalf("step %d, %s: %d bytes left", step, specs[j], len(rest))
				}
				if again := cp[j].appendState(nil, g+3); !bytes.Equal(again, b) {
					t.Fatalf("step %d, %s, group %d: reloaded state encodes as %x, was %x", step, specs[j], g, again, b)
				}
				if _, err := cp[j].loadState(g+3, b[:len(b)-1]); err == nil && len(b) > 0 {
					// a truncated state must not load silently (the
					// group is garbage now: drop this copy)
					t.Fatalf("step %d, %s: truncated state loaded", step, specs[j])
				}
			}
		}
		// reload the copy cleanly (the truncation test above dirtied it)
		cp = newCols()
		for j, c := range orig {
			for g := int32(0); g < ngroups; g++ {
				if _, err := cp[j].loadState(g+3, c.appendState(nil, g)); err != nil {
					t.Fatal(err)
				}
			}
		}
		copies = append(copies, cp)
		check(step)
	}
	if len(copies) == 0 {
		t.Fatal("no copies made")
	}
}
