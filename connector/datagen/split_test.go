package datagen

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/types"
)

// Readers i of n (Split) read disjoint blocks whose union is the rows of
// one reader, each in row order; a reader resumed at a position it
// reported yields the rest of its share.
func TestReaderSplit(t *testing.T) {
	cols := []types.Column{col(t, "id", "bigint"), col(t, "v", "integer")}
	const total = 3*SplitBlock + 1234
	cfg := mustConfig(t, cols, map[string]string{"rows": fmt.Sprint(total), "fields.id.kind": "sequence", "fields.v.min": "1", "fields.v.max": "9", "seed": "7"})
	_, all := runAll(t, NewReader(cfg), cols)
	key := func(rows [][]types.Value) []string {
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = fmt.Sprint(r...)
		}
		return out
	}
	want := key(all)
	slices.Sort(want)
	for _, n := range []int{1, 2, 3, 5} {
		var union []string
		for i := range n {
			r := NewReader(cfg)
			if err := r.Split(i, n); err != nil {
				t.Fatal(err)
			}
			var rows [][]types.Value
			var pos [][]byte
			var counts []int
			err := r.Run(context.Background(), func(rec arrow.RecordBatch) error {
				for k := range int(rec.NumRows()) {
					rows = append(rows, []types.Value{types.ValueAt(rec.Column(0), k, cols[0].Type), types.ValueAt(rec.Column(1), k, cols[1].Type)})
				}
				pos, counts = append(pos, r.Position()), append(counts, len(rows))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			end := r.Position()
			for k := 1; k < len(rows); k++ {
				if rows[k][0].(int64) <= rows[k-1][0].(int64) {
					t.Fatalf("reader %d of %d: rows out of order at %d", i, n, k)
				}
			}
			union = append(union, key(rows)...)
			for b, p := range pos {
				rr := NewReader(cfg)
				if err := rr.Split(i, n); err != nil {
					t.Fatal(err)
				}
				if err := rr.Seek(p); err != nil {
					t.Fatal(err)
				}
				_, rest := runAll(t, rr, cols)
				if len(rest) != len(rows)-counts[b] || len(rest) > 0 && !reflect.DeepEqual(rest, rows[counts[b]:]) || !reflect.DeepEqual(rr.Position(), end) {
					t.Fatalf("reader %d of %d resumed after batch %d: %d rows, want %d", i, n, b, len(rest), len(rows)-counts[b])
				}
			}
		}
		slices.Sort(union)
		if !slices.Equal(union, want) {
			t.Fatalf("%d readers: %d rows, want the %d of one", n, len(union), len(want))
		}
	}
	if err := NewReader(cfg).Split(2, 2); err == nil {
		t.Fatal("reader 2 of 2 was accepted")
	}
}
