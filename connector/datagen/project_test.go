package datagen

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// A reader told to build only some columns (every subset) yields, batch by
// batch and as reader i of 1 and of 3, the rows and positions of a reader
// of every column, each built column equal to that column of the full
// batch; a position it reports resumes a reader of other columns.
func TestColumnsEqualAllColumns(t *testing.T) {
	cols := []types.Column{col(t, "id", "bigint"), col(t, "v", "integer"), col(t, "s", "varchar"), col(t, "x", "double precision"),
		col(t, "n", "numeric(10,2)"), col(t, "ts", "timestamp")}
	const total = 2*SplitBlock + 777
	cfg := mustConfig(t, cols, map[string]string{"rows": fmt.Sprint(total), "fields.id.kind": "sequence", "fields.s.length": "12",
		"fields.v.null_rate": "0.3", "seed": "3"})
	type step struct {
		rec arrow.RecordBatch
		pos []byte
	}
	run := func(r *Reader) []step {
		var out []step
		if err := r.Run(context.Background(), func(rec arrow.RecordBatch) error {
			out = append(out, step{rec, r.Position()})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	open := func(i, n int, keep []int) *Reader {
		r := NewReader(cfg)
		if err := r.Split(i, n); err != nil {
			t.Fatal(err)
		}
		if err := r.SetColumns(keep); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, n := range []int{1, 3} {
		for i := range n {
			full := run(open(i, n, nil))
			for mask := range 1 << len(cols) {
				keep := []int{}
				for c := range cols {
					if mask&(1<<c) != 0 {
						keep = append(keep, c)
					}
				}
				got := run(open(i, n, keep))
				if len(got) != len(full) {
					t.Fatalf("%v reader %d of %d: %d batches, want %d", keep, i, n, len(got), len(full))
				}
				for b, g := range got {
					f := full[b]
					if g.rec.NumRows() != f.rec.NumRows() || !reflect.DeepEqual(g.pos, f.pos) || int(g.rec.NumCols()) != len(keep) {
						t.Fatalf("%v reader %d of %d batch %d: %d rows of %d columns at %x, want %d rows at %x", keep, i, n, b,
							g.rec.NumRows(), g.rec.NumCols(), g.pos, f.rec.NumRows(), f.pos)
					}
					for j, c := range keep {
						if g.rec.Schema().Field(j).Name != cols[c].Name || !array.Equal(g.rec.Column(j), f.rec.Column(c)) {
							t.Fatalf("%v reader %d of %d batch %d: column %s differs from the full batch's", keep, i, n, b, cols[c].Name)
						}
					}
				}
			}
			// resume a reader of other columns at a pruned reader's positions
			pruned := run(open(i, n, []int{1, 4}))
			for b := range pruned {
				r := open(i, n, []int{0, 2})
				if err := r.Seek(pruned[b].pos); err != nil {
					t.Fatal(err)
				}
				rest := run(r)
				if len(rest) != len(full)-b-1 {
					t.Fatalf("reader %d of %d resumed after batch %d: %d batches, want %d", i, n, b, len(rest), len(full)-b-1)
				}
				for k, s := range rest {
					f := full[b+1+k].rec
					if !array.Equal(s.rec.Column(0), f.Column(0)) || !array.Equal(s.rec.Column(1), f.Column(2)) {
						t.Fatalf("reader %d of %d resumed after batch %d: batch %d differs", i, n, b, k)
					}
				}
			}
		}
	}
	for _, bad := range [][]int{{1, 0}, {2, 2}, {6}, {-1}} {
		if err := NewReader(cfg).SetColumns(bad); pgerr.CodeOf(err) != pgerr.InvalidParameterValue {
			t.Errorf("SetColumns(%v) = %v, want a 22023 error", bad, err)
		}
	}
}
