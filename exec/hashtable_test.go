package exec

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// TestHashTableModes checks that every key mode (one int, two ints, text,
// encoded) assigns equal keys, and only equal keys, the same group, across
// batches and table growth, and that lookup finds the same groups.
func TestHashTableModes(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	gen := map[string]func() any{
		"int":  func() any { return rng.Intn(100) },
		"text": func() any { return fmt.Sprintf("k%d", rng.Intn(80)) },
		"f8":   func() any { return float64(rng.Intn(60)) / 2 },
	}
	typeOf := map[string]types.T{"int": types.TInt8, "text": types.TText, "f8": types.TFloat8}
	for _, shape := range [][]string{{"int"}, {"int", "int"}, {"text"}, {"int", "text"}, {"f8"}, {"int", "int", "int"}} {
		ts := make([]types.T, len(shape))
		for i, s := range shape {
			ts[i] = typeOf[s]
		}
		h := newHashTable(ts)
		seen := map[string]int32{}
		var allKeys [][]arrow.Array
		var allNames [][]string
		for batch := 0; batch < 8; batch++ {
			n := 1 + rng.Intn(1500)
			vals := make([][]any, len(shape))
			names := make([]string, n)
			for c, s := range shape {
				vals[c] = make([]any, n)
				for i := 0; i < n; i++ {
					if rng.Intn(15) > 0 {
						vals[c][i] = gen[s]()
					}
					names[i] += fmt.Sprintf("%v|", vals[c][i])
				}
			}
			keys := make([]arrow.Array, len(shape))
			for c := range shape {
				keys[c] = arr(ts[c], vals[c]...)
			}
			gids := h.insert(keys, n, nil, false)
			for i, g := range gids {
				if prev, ok := seen[names[i]]; ok && prev != g {
					t.Fatalf("%v: key %s got groups %d and %d", shape, names[i], prev, g)
				} else if !ok {
					seen[names[i]] = g
				}
			}
			allKeys, allNames = append(allKeys, keys), append(allNames, names)
		}
		if len(seen) != h.len() {
			t.Fatalf("%v: %d distinct keys, %d groups", shape, len(seen), h.len())
		}
		for b, keys := range allKeys {
			gids := h.lookup(keys, len(allNames[b]), nil, false)
			for i, g := range gids {
				if g != seen[allNames[b][i]] {
					t.Fatalf("%v: lookup of %s = %d, want %d", shape, allNames[b][i], g, seen[allNames[b][i]])
				}
			}
		}
	}
}
