package nexmark

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/types"
)

var bidSchema = types.ArrowSchema(BidColumns)

// bidCols accumulates bid rows for one batch.
type bidCols struct {
	auction, bidder, price, ts []int64
	channel, url, extra        strCol
}

func newBidCols(rows int) *bidCols {
	return &bidCols{
		auction: make([]int64, 0, rows), bidder: make([]int64, 0, rows),
		price: make([]int64, 0, rows), ts: make([]int64, 0, rows),
		channel: newStrCol(rows, 9, 14), url: newStrCol(rows, 63, 77), extra: newStrCol(rows, 68, 81),
	}
}

// add appends the bid of event id at event time ts (µs). Random calls in
// Flink's order: hot auction, [auction], hot bidder, [bidder], price,
// channel, extra.
func (c *bidCols) add(p *pools, r *rng, id, ts int64) {
	var auction, bidder int64
	if r.intn(hotAuctionRatio) > 0 {
		auction = lastAuction(id) / hotRatio100 * hotRatio100
	} else {
		auction = randAuction(r, id)
	}
	if r.intn(hotBidderRatio) > 0 {
		bidder = lastPerson(id)/hotRatio100*hotRatio100 + 1
	} else {
		bidder = randPerson(r, id)
	}
	c.auction = append(c.auction, firstAuctionID+auction)
	c.bidder = append(c.bidder, firstPersonID+bidder)
	c.price = append(c.price, r.price())
	if r.intn(hotChannelsRatio) > 0 {
		i := r.intn(int64(len(hotChannels)))
		c.channel.addString(hotChannels[i])
		c.url.addString(p.hotURLs[i])
	} else {
		p.appendChannel(&c.channel, &c.url, r.intn(channelsNumber))
	}
	c.ts = append(c.ts, ts)
	c.extra.add(p.extraFor(r, 32, avgBidBytes))
}

func (c *bidCols) record() arrow.RecordBatch {
	return record(bidSchema, len(c.auction),
		int64Array(c.auction, false), int64Array(c.bidder, false), int64Array(c.price, false),
		c.channel.array(), c.url.array(), int64Array(c.ts, true), c.extra.array())
}
