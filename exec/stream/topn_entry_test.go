package stream

import (
	"fmt"
	"math/rand"
	"reflect"
	"runtime"
	"testing"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// TestTopNEntryValues builds top-n entries of random rows (the property
// test's types and NULLs) as narrow (more int8, timestamp and text values
// than an inline entry has room for), middle and wide rows, and requires
// every value and sort key to equal types.ValueAt's, in value and dynamic
// type, also after the input is released and collected.
func TestTopNEntryValues(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	pick := func(names ...string) []int {
		var idx []int
		for _, n := range names {
			idx = append(idx, propCol(n).Idx)
		}
		return idx
	}
	shapes := [][]int{
		pick("i8", "ts", "txt", "vc", "i8", "tstz", "i8", "txt"),           // 8 values with the key: inline8, words and strs run out
		pick("i8", "txt", "vc", "txt", "txt", "txt", "ts"),                 // strs run out
		pick("k1", "k2", "i2", "i4", "i8", "f8", "num", "txt", "vc", "ts"), // inline16: boxed
		nil, // every column: wide
	}
	for si, idx := range shapes {
		if idx == nil {
			for i := range propCols {
				idx = append(idx, i)
			}
		}
		t.Run(fmt.Sprint(si), func(t *testing.T) {
			var cols []types.Column
			for _, i := range idx {
				cols = append(cols, propCols[i])
			}
			key := &expr.ColRef{Idx: 0, T: cols[0].Type}
			tn := &TopN{Input: &tnSource{cols: cols}, Cols: cols, Limit: 1,
				Order: []exec.SortKey{{E: key, Desc: true}}}
			r, err := tn.newRun(newEnv(t))
			if err != nil {
				t.Fatal(err)
			}
			type built struct {
				e    *tnEntry
				want []types.Value
			}
			var all []built
			for round := 0; round < 20; round++ {
				var rows [][]types.Value
				for n := 1 + rng.Intn(50); n > 0; n-- {
					full := propRow(rng)
					row := make([]types.Value, len(idx))
					for j, i := range idx {
						row[j] = full[i]
					}
					rows = append(rows, row)
				}
				c := tnChunk(t, cols, nil, rows)
				keys, err := r.evalAll(r.keyExprs, c.Rec)
				if err != nil {
					t.Fatal(err)
				}
				for i := range rows {
					e := r.entry(c.Rec, keys, i)
					want := make([]types.Value, len(cols)+1)
					for j, col := range cols {
						want[j] = ownDeep(types.ValueAt(c.Rec.Column(j), i, col.Type))
					}
					want[len(cols)] = ownDeep(types.ValueAt(keys[0], i, key.T))
					all = append(all, built{e, want})
				}
				for _, k := range keys {
					k.Release()
				}
				c.Rec.Release()
			}
			runtime.GC()
			for n, b := range all {
				got := r.order.keyVals(r.order.rowVals(nil, b.e), b.e)
				for j := range got {
					g, w := got[j], b.want[j]
					if gf, ok := g.(float64); ok && gf != gf {
						if wf, ok := w.(float64); ok && wf != wf {
							continue // NaN
						}
					}
					if reflect.TypeOf(g) != reflect.TypeOf(w) || !reflect.DeepEqual(g, w) {
						t.Fatalf("entry %d value %d: %T %v, want %T %v", n, j, got[j], got[j], b.want[j], b.want[j])
					}
				}
				if b.e.norm != r.order.normOf(b.want[len(cols)]) {
					t.Fatalf("entry %d: norm %v", n, b.e.norm)
				}
			}
		})
	}
}
