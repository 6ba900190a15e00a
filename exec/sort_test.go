package exec

import (
	"math/rand"
	"sort"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestSortRandomized checks the radix, normalized and generic sort paths
// against a reference stable sort over Go values.
func TestSortRandomized(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for _, n := range []int{10, 1500, 5000} {
		a, f, s, id := make([]any, n), make([]any, n), make([]any, n), make([]any, n)
		for i := 0; i < n; i++ {
			if rng.Intn(10) > 0 {
				a[i] = rng.Intn(50) - 25
			}
			if rng.Intn(10) > 0 {
				f[i] = float64(rng.Intn(40)-20) / 4
			}
			if rng.Intn(10) > 0 {
				s[i] = string(rune('a' + rng.Intn(20)))
			}
			id[i] = i
		}
		in := src(cols(types.TInt4, types.TFloat8, types.TText, types.TInt8), 700, a, f, s, id)
		for _, ks := range [][]SortKey{
			{{E: col(0, types.TInt4)}},
			{{E: col(0, types.TInt4), Desc: true, NullsFirst: true}, {E: col(1, types.TFloat8)}},
			{{E: col(1, types.TFloat8), Desc: true}, {E: col(0, types.TInt4), NullsFirst: true}},
			{{E: col(2, types.TText), Desc: true, NullsFirst: true}, {E: col(0, types.TInt4)}},
		} {
			got := run(t, &Sort{Input: in, Keys: ks})
			want := rows(in.batches)
			sort.SliceStable(want, func(i, j int) bool { return refLess(want[i], want[j], ks) })
			for i := range want {
				if got[i][3] != want[i][3] {
					t.Fatalf("n=%d keys=%v: row %d is %v, want %v", n, sortKeyList(ks), i, got[i], want[i])
				}
			}
		}
	}
}

// refLess orders rows of Go values (int64, float64 or string) by keys.
func refLess(x, y []any, ks []SortKey) bool {
	for _, k := range ks {
		c := k.E.(interface{ String() string }).String()
		i := int(c[1] - '0')
		a, b := x[i], y[i]
		if a == nil || b == nil {
			if a == nil && b == nil {
				continue
			}
			return (a == nil) == k.NullsFirst
		}
		var r int
		switch av := a.(type) {
		case int64:
			r = cmpI(av, b.(int64))
		case float64:
			r = cmpFloat(av, b.(float64))
		case string:
			r = cmpS(av, b.(string))
		}
		if k.Desc {
			r = -r
		}
		if r != 0 {
			return r < 0
		}
	}
	return false
}

func cmpI(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpS(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestTopN checks ORDER BY ... LIMIT/OFFSET (the top-N path, with several
// compaction rounds) against a full sort followed by slicing.
func TestTopN(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	n := 100_000
	a, id := make([]any, n), make([]any, n)
	for i := range a {
		if rng.Intn(20) > 0 {
			a[i] = rng.Intn(5000)
		}
		id[i] = i
	}
	in := src(cols(types.TInt4, types.TInt8), 4096, a, id)
	keys := []SortKey{{E: col(0, types.TInt4), Desc: true, NullsFirst: true}}
	full := run(t, &Sort{Input: in, Keys: keys})
	for _, c := range [][2]int64{{10, 0}, {5, 100}, {1000, 30000}, {30000, 50000}} {
		got := run(t, &Limit{Input: &Sort{Input: in, Keys: keys}, Limit: konst(types.TInt8, c[0]), Offset: konst(types.TInt8, c[1])})
		wantRows(t, got, full[c[1]:c[1]+c[0]])
	}
}
