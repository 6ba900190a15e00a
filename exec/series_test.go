package exec

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

func TestIntSeries(t *testing.T) {
	cases := []struct {
		name              string
		start, stop, step int64
		want              []int64
	}{
		{"up", 1, 5, 1, []int64{1, 2, 3, 4, 5}},
		{"up by 2 stops before passing", 1, 6, 2, []int64{1, 3, 5}},
		{"down", 10, 1, -3, []int64{10, 7, 4, 1}},
		{"empty", 5, 1, 1, nil},
		{"no overflow at the top", math.MaxInt64 - 1, math.MaxInt64, 1, []int64{math.MaxInt64 - 1, math.MaxInt64}},
		{"no overflow at the bottom", math.MinInt64 + 1, math.MinInt64, -1, []int64{math.MinInt64 + 1, math.MinInt64}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cols := []types.Column{{Name: "g", Type: types.TInt8}, {Name: "ordinality", Type: types.TInt8}}
			ctx := &Context{BatchSize: 2}
			bs, err := Drain(NewIntSeries(ctx, cols, c.start, c.stop, c.step, true))
			if err != nil {
				t.Fatal(err)
			}
			var got, ord []int64
			for _, b := range bs {
				got = append(got, b.Column(0).(*array.Int64).Int64Values()...)
				ord = append(ord, b.Column(1).(*array.Int64).Int64Values()...)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] || ord[i] != int64(i+1) {
					t.Fatalf("row %d: %d (ordinality %d), want %d (%d)", i, got[i], ord[i], c.want[i], i+1)
				}
			}
		})
	}
}

func TestIntSeriesInt4(t *testing.T) {
	cols := []types.Column{{Name: "g", Type: types.TInt4}}
	bs, err := Drain(NewIntSeries(&Context{}, cols, 1, 10000, 1, false))
	if err != nil {
		t.Fatal(err)
	}
	n, sum := 0, int64(0)
	for _, b := range bs {
		for _, v := range b.Column(0).(*array.Int32).Int32Values() {
			n++
			sum += int64(v)
		}
	}
	if n != 10000 || sum != 10000*10001/2 {
		t.Fatalf("n %d sum %d", n, sum)
	}
}
