package bench

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/connector/nexmark"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// TestInstanceShares reports how the bids of a Nexmark run spread over
// the instances of a parallel operator keyed by auction (q4, q5, the heavy
// aggregation) and by bidder (q11), at parallelism 2, 4 and 8: each
// instance's share of the rows, which is its share of the operator's
// work. It requires every instance within 20 % of an even share.
func TestInstanceShares(t *testing.T) {
	g := nexmark.New(nexmark.Config{Events: 1_000_000, Table: "bid"})
	var bids []arrow.RecordBatch
	for {
		b, err := g.Next(8192)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.Bid != nil && b.Bid.NumRows() > 0 {
			bids = append(bids, b.Bid)
		}
	}
	col := func(name string) int {
		for i, c := range nexmark.BidColumns {
			if c.Name == name {
				return i
			}
		}
		t.Fatalf("no bid column %s", name)
		return -1
	}
	for _, key := range []string{"auction", "bidder"} {
		k := col(key)
		for _, n := range []int{2, 4, 8} {
			rows := make([]int64, n)
			var total int64
			var h stream.VNodeHasher
			var vn []uint16
			for _, b := range bids {
				vn = h.VNodes([]arrow.Array{b.Column(k)}, []types.T{nexmark.BidColumns[k].Type}, int(b.NumRows()), vn)
				for _, v := range vn {
					rows[stream.VNodeOwner(v, n)]++
				}
				total += b.NumRows()
			}
			var shares []string
			for i, r := range rows {
				share := float64(r) * float64(n) / float64(total) // 1 = an even share
				shares = append(shares, fmt.Sprintf("%.3f", share))
				if share < 0.8 || share > 1.2 {
					t.Errorf("by %s at %d: instance %d has %.2f of an even share", key, n, i, share)
				}
			}
			t.Logf("bids by %s over %d instances (share of an even split): %s", key, n, strings.Join(shares, " "))
		}
	}
}
