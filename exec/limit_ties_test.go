package exec

import (
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestLimitWithTies: FETCH FIRST n ROWS WITH TIES passes the rows tying
// with the n-th on the sort keys, within a batch and across batches (3 rows
// a batch here), NULLs tying with NULLs.
func TestLimitWithTies(t *testing.T) {
	s := src(cols(types.TInt4), 3, []any{1, 2, 2, 2, 2, 2, 2, 3, 4, nil, nil})
	ties := []SortKey{{E: col(0, types.TInt4)}}
	cases := []struct {
		lim, off int64
		want     []any
	}{
		{1, 0, []any{1}},
		{2, 0, []any{1, 2, 2, 2, 2, 2, 2}}, // ties run over two more batches
		{3, 0, []any{1, 2, 2, 2, 2, 2, 2}}, // the tie starts mid-batch
		{7, 0, []any{1, 2, 2, 2, 2, 2, 2}}, // the count ends the ties exactly
		{8, 0, []any{1, 2, 2, 2, 2, 2, 2, 3}},
		{1, 2, []any{2, 2, 2, 2, 2}}, // counted after OFFSET
		{1, 9, []any{nil, nil}},      // NULLs tie
		{0, 0, nil},
		{100, 0, []any{1, 2, 2, 2, 2, 2, 2, 3, 4, nil, nil}},
	}
	for _, c := range cases {
		l := &Limit{Input: s, Limit: konst(types.TInt8, c.lim), Offset: konst(types.TInt8, c.off), WithTies: ties}
		var want [][]any
		for _, v := range c.want {
			if v == nil {
				want = append(want, []any{nil})
				continue
			}
			want = append(want, []any{int64(v.(int))})
		}
		wantRows(t, run(t, l), want)
	}
}
