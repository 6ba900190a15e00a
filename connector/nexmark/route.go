package nexmark

import "github.com/apache/arrow-go/v18/arrow"

// Routing at the source (docs/contributing/parallel.md, "Routed
// generators"): a generator told how its consumer routes rows among
// instances (SetRoute) builds one batch per instance of each step instead
// of one batch, computing each row's instance from the routed column's
// value as it generates the row. The rows, values, positions and
// watermarks are those of an unrouted generator; only their grouping into
// batches changes (each part keeps the rows' order).

// route is a generator's routing (SetRoute).
type route struct {
	kind  int // the routed table
	col   int // the routed column of it
	n     int
	owner func(v int64) int
	// owner2 (SetRoute2) routes the bid table by columns col and col2.
	col2   int
	owner2 func(a, b int64) int
	// memo caches owner by value, direct-mapped: a hot bidder or auction
	// is most rows, and owner (a hash through a function value) was up to
	// a tenth of a routed reader's time.
	memo *[ownerMemoSize]ownerMemo
	// last is the last value looked up and its owner: a hot bidder's or
	// auction's rows follow each other, so most lookups are the value
	// before (checked inline, without the memo's call).
	last      int64
	lastOwner int
	lastSet   bool
	// bids and auctions are the routed table's parts (bidParts), kept
	// from step to step.
	bids     *routedBids
	auctions *routedAuctions
	// pool is the generator's: it lends the parts' int64 columns their
	// buffers (recycle.go).
	pool *bufPool
}

// ownerMemoSize is the number of values route.memo holds.
const ownerMemoSize = 1 << 10

// ownerMemo is one cached owner, of value v (set: the entry holds one).
type ownerMemo struct {
	v     int64
	owner int32
	set   bool
}

// ownerOf is owner(v), cached.
func (rt *route) ownerOf(v int64) int {
	if rt.lastSet && v == rt.last {
		return rt.lastOwner
	}
	return rt.ownerMemo(v)
}

// ownerMemo is ownerOf through the memo; v becomes the last value.
func (rt *route) ownerMemo(v int64) int {
	if rt.memo == nil {
		rt.memo = new([ownerMemoSize]ownerMemo)
	}
	m := &rt.memo[uint64(v)%ownerMemoSize]
	if !m.set || m.v != v {
		m.v, m.owner, m.set = v, int32(rt.owner(v)), true
	}
	rt.last, rt.lastOwner, rt.lastSet = v, int(m.owner), true
	return int(m.owner)
}

// SetRoute makes the generator build table's rows as n batches a step,
// row r in batch owner(v), v being r's value in column col (an index into
// Columns(table)), and reports whether it does: only the bid table's
// auction, bidder and price and the auction table's id are routed (other
// columns, tables and n < 2 leave the generator as it was). owner must
// return 0 <= k < n. Call it before Next.
func (g *Generator) SetRoute(table string, col, n int, owner func(v int64) int) bool {
	g.route = nil
	if n < 2 || owner == nil {
		return false
	}
	var kind int
	switch {
	case table == "bid" && bidRoutable(col):
		kind = kindBid
	case table == "auction" && col == auctionID:
		kind = kindAuction
	default:
		return false
	}
	g.route = &route{kind: kind, col: col, n: n, owner: owner, pool: g.pool}
	return true
}

// SetRoute2 is SetRoute by two columns of the bid table (auction,
// bidder, price): row r in batch owner(a, b), a and b being its values in
// col and col2.
func (g *Generator) SetRoute2(table string, col, col2, n int, owner func(a, b int64) int) bool {
	g.route = nil
	if n < 2 || owner == nil || table != "bid" || !bidRoutable(col) || !bidRoutable(col2) {
		return false
	}
	g.route = &route{kind: kindBid, col: col, n: n, col2: col2, owner2: owner, pool: g.pool}
	return true
}

// bidRoutable reports the bid columns a generator routes by.
func bidRoutable(col int) bool { return col == bidAuction || col == bidBidder || col == bidPrice }

// Routed reports whether SetRoute routes the generator's rows.
func (g *Generator) Routed() bool { return g.route != nil }

// Each part is built in scratch columns the generator keeps from step to
// step (sized for the whole step, so a part that gets most rows, a hot
// bidder's, never grows), and its batch copies them out at their exact
// length: a step allocates what its rows take, as an unrouted step does,
// where parts sized for an even share and grown by doubling allocated
// twice that.

// partCols is a table's column builder for one batch.
type partCols interface {
	copyRecord(pool *bufPool) arrow.RecordBatch // the batch, its columns copied out (int64 ones into pool's buffers)
	reset()                                     // empty again, keeping the buffers
}

// routedParts builds one batch of a table per instance.
type routedParts[C partCols] struct {
	rt    *route
	rows  int // the step rows each part has room for
	parts []C
}

func newRoutedParts[C partCols](rt *route, rows int, mk func() C) *routedParts[C] {
	b := &routedParts[C]{rt: rt, rows: rows, parts: make([]C, rt.n)}
	for k := range b.parts {
		b.parts[k] = mk()
	}
	return b
}

// records returns the parts' batches and empties the parts for the next
// step.
func (b *routedParts[C]) records() []arrow.RecordBatch {
	out := make([]arrow.RecordBatch, len(b.parts))
	for k, c := range b.parts {
		out[k] = c.copyRecord(b.rt.pool)
		c.reset()
	}
	return out
}

type (
	routedBids     = routedParts[*bidCols]
	routedAuctions = routedParts[*auctionCols]
)

// bidParts returns the generator's bid parts for a step of up to rows
// rows, empty.
func (rt *route) bidParts(rows int, proj projection) *routedBids {
	if rt.bids == nil || rt.bids.rows < rows || rt.bids.parts[0].proj != proj {
		by := func(col int) bool { return rt.col == col || rt.owner2 != nil && rt.col2 == col }
		rt.bids = newRoutedParts(rt, rows, func() *bidCols {
			c := newBidCols(nil, rows, proj) // scratch, kept
			// a routing column decides the part: computed whether built or not
			c.drawPrice = c.drawPrice || by(bidPrice)
			c.drawAuction = c.drawAuction || by(bidAuction)
			c.drawBidder = c.drawBidder || by(bidBidder)
			return c
		})
	}
	return rt.bids
}

// auctionParts is bidParts for auctions.
func (rt *route) auctionParts(rows int, proj projection) *routedAuctions {
	if rt.auctions == nil || rt.auctions.rows < rows || rt.auctions.parts[0].proj != proj {
		rt.auctions = newRoutedParts(rt, rows, func() *auctionCols { return newAuctionCols(nil, rows, proj) })
	}
	return rt.auctions
}

// addAuction appends the auction of event id to the part of its instance.
func addAuction(b *routedAuctions, p *pools, r *rng, id, ts, horizon int64) {
	b.parts[b.rt.ownerOf(firstAuctionID+lastAuction(id))].add(p, r, id, ts, horizon)
}
