package nexmark

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/types"
)

var bidSchema = types.ArrowSchema(BidColumns)

// The bid table's columns (BidColumns).
const (
	bidAuction = iota
	bidBidder
	bidPrice
	bidChannel
	bidURL
	bidDateTime
	bidExtra
)

// bidCols accumulates bid rows for one batch: the columns of its
// projection only (the others stay empty and are never written).
type bidCols struct {
	proj                       projection
	rows                       int
	auction, bidder, price, ts []int64
	channel, url, extra        strCol
	// drawChannel and drawExtra are whether the channel and the extra
	// draws are made: only when a column they decide is built (they are
	// the event's last draws, extra after channel).
	drawChannel, drawExtra bool
	// drawPrice is whether the price is computed: when it is built or
	// routed by (the draw is made anyway, for the channel and extra after
	// it). drawAuction and drawBidder are the same for the auction and
	// the bidder (their draws are made anyway, for the draws after them).
	drawPrice, drawAuction, drawBidder bool
}

func newBidCols(pool *bufPool, rows int, proj projection) *bidCols {
	k := proj.cols
	c := &bidCols{proj: proj, drawChannel: k.has(bidChannel) || k.has(bidURL) || k.has(bidExtra), drawExtra: k.has(bidExtra),
		drawPrice: k.has(bidPrice), drawAuction: k.has(bidAuction), drawBidder: k.has(bidBidder)}
	c.auction = int64Buf(pool, k, bidAuction, rows)
	c.bidder = int64Buf(pool, k, bidBidder, rows)
	c.price = int64Buf(pool, k, bidPrice, rows)
	c.ts = int64Buf(pool, k, bidDateTime, rows)
	c.channel = strColOf(k, bidChannel, rows, 9, 14)
	c.url = strColOf(k, bidURL, rows, 63, 77)
	c.extra = strColOf(k, bidExtra, rows, 68, 81)
	return c
}

// addBid appends the bid of event id at event time ts (µs) to c, or,
// when rb is not nil (a routed generator), to the part of the instance
// its routed column's value belongs to. Random calls in Flink's order:
// hot auction, [auction], hot bidder, [bidder], price, channel, extra;
// the last two only when a column they decide is built. (One function
// for both: the unrouted path makes no call more than before.)
func addBid(c *bidCols, rb *routedBids, p *pools, r *rng, id, ts int64) {
	if rb != nil {
		c = rb.parts[0] // the parts draw alike
	}
	var auction, bidder int64
	switch {
	case r.intn(hotAuctionRatio) > 0:
		if c.drawAuction {
			auction = lastAuction(id)/hotRatio100*hotRatio100 + firstAuctionID
		}
	case c.drawAuction:
		auction = randAuction(r, id) + firstAuctionID
	default:
		r.s += golden // randAuction's one draw
	}
	switch {
	case r.intn(hotBidderRatio) > 0:
		if c.drawBidder {
			bidder = lastPerson(id)/hotRatio100*hotRatio100 + 1 + firstPersonID
		}
	case c.drawBidder:
		bidder = randPerson(r, id) + firstPersonID
	default:
		r.s += golden // randPerson's one draw
	}
	var price int64
	if c.drawPrice {
		price = r.price()
	} else {
		r.s += golden // the draw, for the channel's and extra's after it
	}
	if rb != nil {
		v := bidValue(rb.rt.col, auction, bidder, price)
		if rb.rt.owner2 != nil {
			c = rb.parts[rb.rt.owner2(v, bidValue(rb.rt.col2, auction, bidder, price))]
		} else {
			c = rb.parts[rb.rt.ownerOf(v)]
		}
	}
	c.rows++
	k := c.proj.cols
	if k.has(bidAuction) {
		c.auction = append(c.auction, auction)
	}
	if k.has(bidBidder) {
		c.bidder = append(c.bidder, bidder)
	}
	if k.has(bidPrice) {
		c.price = append(c.price, price)
	}
	if k.has(bidDateTime) {
		c.ts = append(c.ts, ts)
	}
	if !c.drawChannel {
		return
	}
	channel, url := k.has(bidChannel), k.has(bidURL)
	if r.intn(hotChannelsRatio) > 0 {
		i := r.intn(int64(len(hotChannels)))
		if channel {
			c.channel.addString(hotChannels[i])
		}
		if url {
			c.url.addString(p.hotURLs[i])
		}
	} else {
		i := r.intn(channelsNumber)
		if channel {
			appendChannelName(&c.channel, i)
		}
		if url {
			p.appendChannelURL(&c.url, i)
		}
	}
	if c.drawExtra {
		c.extra.add(p.extraFor(r, 32, avgBidBytes))
	}
}

func (c *bidCols) record() arrow.RecordBatch                  { return c.build(false, nil) }
func (c *bidCols) copyRecord(pool *bufPool) arrow.RecordBatch { return c.build(true, pool) }

// build is the batch of c's rows, its buffers copied when cp is set (the
// int64 ones into pool's buffers when it is not nil).
func (c *bidCols) build(cp bool, pool *bufPool) arrow.RecordBatch {
	k := c.proj.cols
	b := recordBuilder{copy: cp, pool: pool}
	b.int64s(k, bidAuction, c.auction, false)
	b.int64s(k, bidBidder, c.bidder, false)
	b.int64s(k, bidPrice, c.price, false)
	b.strings(k, bidChannel, &c.channel)
	b.strings(k, bidURL, &c.url)
	b.int64s(k, bidDateTime, c.ts, true)
	b.strings(k, bidExtra, &c.extra)
	return b.record(c.proj.schema, c.rows)
}

// reset empties c for the next step, keeping its buffers.
func (c *bidCols) reset() {
	c.rows = 0
	c.auction, c.bidder, c.price, c.ts = c.auction[:0], c.bidder[:0], c.price[:0], c.ts[:0]
	c.channel.reset()
	c.url.reset()
	c.extra.reset()
}

// bidValue is a bid's value in col, a routed column (bidRoutable).
func bidValue(col int, auction, bidder, price int64) int64 {
	switch col {
	case bidBidder:
		return bidder
	case bidPrice:
		return price
	}
	return auction
}
