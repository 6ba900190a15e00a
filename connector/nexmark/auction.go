package nexmark

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/types"
)

var auctionSchema = types.ArrowSchema(AuctionColumns)

// auctionCols accumulates auction rows for one batch.
type auctionCols struct {
	id, initialBid, reserve, ts, expires, seller, category []int64
	itemName, description, extra                           strCol
}

func newAuctionCols(rows int) *auctionCols {
	return &auctionCols{
		id: make([]int64, 0, rows), initialBid: make([]int64, 0, rows), reserve: make([]int64, 0, rows),
		ts: make([]int64, 0, rows), expires: make([]int64, 0, rows), seller: make([]int64, 0, rows),
		category: make([]int64, 0, rows),
		itemName: newStrCol(rows, 10, 19), description: newStrCol(rows, 50, 99), extra: newStrCol(rows, 392, 542),
	}
}

// add appends the auction of event id at event time ts (µs); horizon is the
// event-time span of ~100 auctions (µs). Random calls in Flink's order:
// hot seller, [seller], category, initial bid, expires, name, description,
// reserve, extra.
func (c *auctionCols) add(p *pools, r *rng, id, ts, horizon int64) {
	c.id = append(c.id, firstAuctionID+lastAuction(id))
	c.ts = append(c.ts, ts)
	var seller int64
	if r.intn(hotSellerRatio) > 0 {
		seller = lastPerson(id) / hotRatio100 * hotRatio100
	} else {
		seller = randPerson(r, id)
	}
	c.seller = append(c.seller, firstPersonID+seller)
	c.category = append(c.category, firstCategoryID+r.intn(numCategories))
	initial := r.price()
	c.initialBid = append(c.initialBid, initial)
	c.expires = append(c.expires, ts+1+r.intn(max(2*horizon, 1)))
	name := p.word(r, 20)
	c.itemName.add(name)
	desc := p.word(r, 100)
	c.description.add(desc)
	c.reserve = append(c.reserve, initial+r.price())
	c.extra.add(p.extraFor(r, 8+int64(len(name)+len(desc))+40, avgAuctionBytes))
}

func (c *auctionCols) record() arrow.RecordBatch {
	return record(auctionSchema, len(c.id),
		int64Array(c.id, false), c.itemName.array(), c.description.array(),
		int64Array(c.initialBid, false), int64Array(c.reserve, false),
		int64Array(c.ts, true), int64Array(c.expires, true),
		int64Array(c.seller, false), int64Array(c.category, false), c.extra.array())
}
