package exec

import (
	"cmp"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestParallelSortEqualsSerial sorts random inputs (duplicates, NULLs,
// both directions, one and several keys; the radix path and the
// comparator path) serially and with 2-4 workers: the rows must come in
// exactly the same order (the sort is stable in both), in batches of the
// same sizes.
func TestParallelSortEqualsSerial(t *testing.T) {
	withProcs(t, 4)
	r := rand.New(rand.NewSource(5))
	k, s, v, f, d := col(0, types.TInt8), col(1, types.TText), col(2, types.TInt8), col(3, types.TFloat8), col(4, types.TNumeric)
	keySets := [][]SortKey{
		{{E: v}},
		{{E: k, Desc: true}},
		{{E: k, NullsFirst: true}, {E: f, Desc: true}},
		{{E: s}},
		{{E: s, Desc: true, NullsFirst: true}, {E: k}},
		{{E: d}, {E: v, Desc: true}},
		{{E: f}},
	}
	trials := 10
	if testing.Short() {
		trials = 4
	}
	for trial := range trials {
		n := parSortMin + r.Intn(3*parSortMin)
		in := parInput(r, n, []int{3, 500, 1 << 20}[r.Intn(3)], 1+r.Intn(5000))
		keys := keySets[trial%len(keySets)]
		srt := &Sort{Input: in, Keys: keys}
		batch := []int{1000, 4096}[r.Intn(2)]
		want, _ := runWorkers(t, srt, 1, batch, 0)
		for _, w := range []int{2, 3, 4} {
			got, _ := runWorkers(t, srt, w, batch, 0)
			if len(got) != len(want) {
				t.Fatalf("trial %d workers=%d: %d rows, serial %d", trial, w, len(got), len(want))
			}
			for i := range want {
				if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
					t.Fatalf("trial %d workers=%d keys=%s: row %d is %v, serial %v", trial, w, sortKeyList(keys), i, got[i], want[i])
				}
			}
		}
	}
}

// coRank and mergeInto against a plain merge, at every split, with runs
// that carry their keys and runs compared through order.
func TestCoRankMerge(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for range 200 {
		keys := make([]uint64, r.Intn(40))
		for i := range keys {
			keys[i] = uint64(r.Intn(6))
		}
		order := func(x, y int32) int {
			if keys[x] != keys[y] {
				return cmp.Compare(keys[x], keys[y])
			}
			return cmp.Compare(x, y)
		}
		var a, b []int32
		for i := range keys {
			if r.Intn(2) == 0 {
				a = append(a, int32(i))
			} else {
				b = append(b, int32(i))
			}
		}
		slices.SortFunc(a, order)
		slices.SortFunc(b, order)
		want := slices.Concat(a, b)
		slices.SortFunc(want, order)
		keyed := func(p []int32) sortRun {
			ks := make([]uint64, len(p))
			for i, x := range p {
				ks[i] = keys[x]
			}
			return sortRun{p, ks}
		}
		for w := 1; w <= 5; w++ {
			for _, withKeys := range []bool{false, true} {
				ra, rb := sortRun{perm: a}, sortRun{perm: b}
				if withKeys {
					ra, rb = keyed(a), keyed(b)
				}
				got, err := parMerge(ra, rb, w, order)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got.perm) != fmt.Sprint(want) {
					t.Fatalf("w=%d keys=%v: %v, want %v", w, withKeys, got.perm, want)
				}
				if withKeys && fmt.Sprint(got.keys) != fmt.Sprint(keyed(want).keys) {
					t.Fatalf("w=%d: merged keys %v", w, got.keys)
				}
			}
		}
	}
}

// A panic in any of parallelDo's functions comes back as an error (the
// process goes on), the others still run to the end.
func TestParallelDoRecovers(t *testing.T) {
	for _, bad := range []int{0, 2} {
		var ran [3]bool
		err := parallelDo(3, func(i int) {
			ran[i] = true
			if i == bad {
				panic("boom")
			}
		})
		if err == nil || !strings.Contains(err.Error(), "boom") || ran != [3]bool{true, true, true} {
			t.Fatalf("panic in %d: err %v, ran %v", bad, err, ran)
		}
	}
}
