package exec

import (
	"math/rand"
	"slices"
	"testing"
)

// TestMSDSortEqualsSerial: the partitioning radix sort gives the serial
// radix sort's order exactly (ties in row order) for 2-5 workers, on one
// and several key words, words that vary in fewer than 8 bits (the digit
// then takes bits of the next word), constant leading words; and refuses
// (ok false) keys that cannot be split fairly, which the caller sorts by
// merging runs. It also requires the partitioning to be taken for the
// inputs that allow it, so the comparison is not vacuous.
func TestMSDSortEqualsSerial(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	gens := []struct {
		name   string
		words  func(n int) [][]uint64
		wantOK bool
	}{
		{"one word, wide", func(n int) [][]uint64 { return [][]uint64{randWords(r, n, 1<<40, 0)} }, true},
		{"one word, duplicates", func(n int) [][]uint64 { return [][]uint64{randWords(r, n, 5000, 1<<63)} }, true},
		{"rank word then value", func(n int) [][]uint64 {
			rank := randWords(r, n, 2, 0)
			return [][]uint64{rank, randWords(r, n, 1<<20, 1<<63)}
		}, true},
		{"3-bit word then 2-bit word", func(n int) [][]uint64 {
			return [][]uint64{randWords(r, n, 8, 0), randWords(r, n, 4, 77), randWords(r, n, 1000, 0)}
		}, true},
		{"constant first word", func(n int) [][]uint64 {
			return [][]uint64{randWords(r, n, 1, 42), randWords(r, n, 1<<30, 0)}
		}, true},
		{"all equal", func(n int) [][]uint64 { return [][]uint64{randWords(r, n, 1, 7)} }, false},
		{"skewed", func(n int) [][]uint64 {
			w := randWords(r, n, 1<<20, 0)
			for i := range w {
				if i%10 != 0 {
					w[i] = 12345
				}
			}
			return [][]uint64{w}
		}, false},
	}
	for _, g := range gens {
		for _, n := range []int{1000, 40_000} {
			nk := g.words(n)
			want := sortNormalized(nk, n)
			for w := 2; w <= 5; w++ {
				got, ok, err := msdSortPerm(nk, n, w)
				if err != nil {
					t.Fatal(err)
				}
				if ok != g.wantOK {
					t.Fatalf("%s n=%d w=%d: partitioned %v, want %v", g.name, n, w, ok, g.wantOK)
				}
				if ok && !slices.Equal(got, want) {
					t.Fatalf("%s n=%d w=%d: order differs from the serial sort", g.name, n, w)
				}
			}
		}
	}
}

// randWords is n words off + a random value below span.
func randWords(r *rand.Rand, n int, span int64, off uint64) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = off + uint64(r.Int63n(span))
	}
	return out
}
