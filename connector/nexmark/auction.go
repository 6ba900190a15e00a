package nexmark

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/types"
)

var auctionSchema = types.ArrowSchema(AuctionColumns)

// The auction table's columns (AuctionColumns).
const (
	auctionID = iota
	auctionItemName
	auctionDescription
	auctionInitialBid
	auctionReserve
	auctionDateTime
	auctionExpires
	auctionSeller
	auctionCategory
	auctionExtra
)

// auctionCols accumulates auction rows for one batch: the columns of its
// projection only (the others stay empty and are never written).
type auctionCols struct {
	proj                                                   projection
	rows                                                   int
	id, initialBid, reserve, ts, expires, seller, category []int64
	itemName, description, extra                           strCol
}

func newAuctionCols(pool *bufPool, rows int, proj projection) *auctionCols {
	k := proj.cols
	return &auctionCols{
		proj: proj,
		id:   int64Buf(pool, k, auctionID, rows), initialBid: int64Buf(pool, k, auctionInitialBid, rows),
		reserve: int64Buf(pool, k, auctionReserve, rows), ts: int64Buf(pool, k, auctionDateTime, rows),
		expires: int64Buf(pool, k, auctionExpires, rows), seller: int64Buf(pool, k, auctionSeller, rows),
		category:    int64Buf(pool, k, auctionCategory, rows),
		itemName:    strColOf(k, auctionItemName, rows, 10, 19),
		description: strColOf(k, auctionDescription, rows, 50, 99),
		extra:       strColOf(k, auctionExtra, rows, 392, 542),
	}
}

// add appends the auction of event id at event time ts (µs); horizon is the
// event-time span of ~100 auctions (µs). Random calls in Flink's order:
// hot seller, [seller], category, initial bid, expires, name, description,
// reserve, extra; every one is made (the name's and description's lengths
// size extra) but extra, the last, which is drawn only when built.
func (c *auctionCols) add(p *pools, r *rng, id, ts, horizon int64) {
	c.rows++
	k := c.proj.cols
	var seller int64
	if r.intn(hotSellerRatio) > 0 {
		seller = lastPerson(id) / hotRatio100 * hotRatio100
	} else {
		seller = randPerson(r, id)
	}
	category := firstCategoryID + r.intn(numCategories)
	initial := r.price()
	expires := ts + 1 + r.intn(max(2*horizon, 1))
	name := p.word(r, 20)
	desc := p.word(r, 100)
	reserve := initial + r.price()
	if k.has(auctionID) {
		c.id = append(c.id, firstAuctionID+lastAuction(id))
	}
	if k.has(auctionItemName) {
		c.itemName.add(name)
	}
	if k.has(auctionDescription) {
		c.description.add(desc)
	}
	if k.has(auctionInitialBid) {
		c.initialBid = append(c.initialBid, initial)
	}
	if k.has(auctionReserve) {
		c.reserve = append(c.reserve, reserve)
	}
	if k.has(auctionDateTime) {
		c.ts = append(c.ts, ts)
	}
	if k.has(auctionExpires) {
		c.expires = append(c.expires, expires)
	}
	if k.has(auctionSeller) {
		c.seller = append(c.seller, firstPersonID+seller)
	}
	if k.has(auctionCategory) {
		c.category = append(c.category, category)
	}
	if k.has(auctionExtra) {
		c.extra.add(p.extraFor(r, 8+int64(len(name)+len(desc))+40, avgAuctionBytes))
	}
}

func (c *auctionCols) record() arrow.RecordBatch                  { return c.build(false, nil) }
func (c *auctionCols) copyRecord(pool *bufPool) arrow.RecordBatch { return c.build(true, pool) }

// reset empties c for the next step, keeping its buffers.
func (c *auctionCols) reset() {
	c.rows = 0
	c.id, c.initialBid, c.reserve, c.ts = c.id[:0], c.initialBid[:0], c.reserve[:0], c.ts[:0]
	c.expires, c.seller, c.category = c.expires[:0], c.seller[:0], c.category[:0]
	c.itemName.reset()
	c.description.reset()
	c.extra.reset()
}

// build is the batch of c's rows, its buffers copied when cp is set (the
// int64 ones into pool's buffers when it is not nil).
func (c *auctionCols) build(cp bool, pool *bufPool) arrow.RecordBatch {
	k := c.proj.cols
	b := recordBuilder{copy: cp, pool: pool}
	b.int64s(k, auctionID, c.id, false)
	b.strings(k, auctionItemName, &c.itemName)
	b.strings(k, auctionDescription, &c.description)
	b.int64s(k, auctionInitialBid, c.initialBid, false)
	b.int64s(k, auctionReserve, c.reserve, false)
	b.int64s(k, auctionDateTime, c.ts, true)
	b.int64s(k, auctionExpires, c.expires, true)
	b.int64s(k, auctionSeller, c.seller, false)
	b.int64s(k, auctionCategory, c.category, false)
	b.strings(k, auctionExtra, &c.extra)
	return b.record(c.proj.schema, c.rows)
}
