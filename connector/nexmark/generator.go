package nexmark

import (
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/types"
)

// Batches is one step of the stream: the rows of up to max events split by
// table, in event order within each table. A table not selected by
// Config.Table is nil; a selected one is a record batch, possibly with no
// rows, of the columns SetColumns chose (every column unless set).
type Batches struct {
	Person, Auction, Bid arrow.RecordBatch
	// Parts, for a generator that routes its table (SetRoute), replace
	// that table's batch: Parts[k] holds the rows of instance k, in order.
	Parts []arrow.RecordBatch
	// Events is how many event numbers this step consumed (including events
	// of tables not selected).
	Events int64
	// Watermark is the event time of the last event consumed: every later
	// event (of any table) has a date_time at or after it.
	Watermark types.TimestampValue
}

// Release releases the batches (hygiene only; see the architecture notes).
func (b Batches) Release() {
	for _, r := range append([]arrow.RecordBatch{b.Person, b.Auction, b.Bid}, b.Parts...) {
		if r != nil {
			r.Release()
		}
	}
}

// Generator produces the stream of one Config, a batch at a time. It is not
// safe for concurrent use; separate Generators with equal Configs produce
// the same stream.
type Generator struct {
	cfg   Config
	err   error
	want  [3]bool
	proj  [3]projection // the columns built of each table (SetColumns)
	pools *pools
	base  int64   // BaseTime in µs since 1970
	delay float64 // µs between consecutive events
	next  int64   // next event number
	// split of splits: the generator yields only the events of the groups
	// of group blocks of proportionDenominator ids whose number is split
	// mod splits (SetSplit, SetGroup; splits 1: every event).
	split, splits int64
	group         int64
	route         *route // nil: one batch per table and step (SetRoute)
	// pool lends the int64 columns of the batches and parts Next returns
	// their buffers (recycle.go).
	pool *bufPool
}

// New returns a generator positioned at event number 0. A bad Config is
// reported by the first Next.
func New(cfg Config) *Generator {
	g := &Generator{cfg: cfg, err: cfg.Validate(), splits: 1, group: 1, proj: fullProjections}
	if cfg.EventsPerSecond == 0 {
		g.cfg.EventsPerSecond = DefaultEventsPerSecond
	}
	if cfg.BaseTime.IsZero() {
		g.cfg.BaseTime = DefaultBaseTime
	}
	g.base = g.cfg.BaseTime.UnixMicro()
	g.delay = 1e6 / g.cfg.EventsPerSecond
	switch cfg.Table {
	case "person":
		g.want[kindPerson] = true
	case "auction":
		g.want[kindAuction] = true
	case "bid":
		g.want[kindBid] = true
	default:
		g.want = [3]bool{true, true, true}
	}
	if g.err == nil {
		g.pools = newPools(cfg.Seed)
		g.pool = newBufPool()
	}
	return g
}

// EventTime is the event time (µs since 1970) of event number n.
func (g *Generator) EventTime(n int64) types.TimestampValue {
	return types.TimestampValue(g.eventTime(n))
}

func (g *Generator) eventTime(n int64) int64 {
	return g.base + int64(float64(n)*g.delay)
}

// Position is the next event number Next will consume.
func (g *Generator) Position() int64 { return g.next }

// SetPosition makes event number n (at least 0) the next one Next
// consumes. Every event is generated from its own id and the seed alone,
// so the stream from n on is the one a generator from 0 yields after
// consuming n events.
func (g *Generator) SetPosition(n int64) { g.next = max(n, 0) }

// SetSplit makes the generator one of n (at least 1) that share the
// stream: it yields only the events of the groups of blocks of 50 ids
// (a block: one person, three auctions, 46 bids: proportionDenominator;
// a group: one block unless SetGroup says more) whose group number is
// i mod n (0 <= i < n), in order, so the union of the n generators'
// events is the stream of one, each event generated as one generator
// generates it (an event is a function of its number), and every
// generator has its share of each kind (events i mod n would give every
// person to the even generators when n is even). Positions stay event
// numbers: after a batch, the number of the generator's next event;
// SetPosition to another number starts at the generator's first event at
// or after it.
func (g *Generator) SetSplit(i, n int) {
	g.split, g.splits = int64(i), max(int64(n), 1)
	g.align()
}

// SetGroup deals the events to the split generators (SetSplit) in groups
// of blocks blocks (at least 1) instead of one block each, and makes a
// step (Next) end at the end of a group, the last whole group that fits
// in it: a generator's step then covers whole groups, each one stretch of
// event time, the next group going to the next generator, instead of a
// stretch shared with every other generator, so the split generators'
// steps follow each other in event time (the readers' steps taken in
// turn reach a keyed operator in time order). The generators of one
// stream must use the same group.
func (g *Generator) SetGroup(blocks int) {
	g.group = max(int64(blocks), 1)
	g.align()
}

// span is the ids in one group.
func (g *Generator) span() int64 { return proportionDenominator * g.group }

// groupOf is the number of the group that event number e is in.
func (g *Generator) groupOf(e int64) int64 {
	return (g.cfg.FirstEventID + e) / g.span()
}

// align moves next to the generator's first event at or after it.
func (g *Generator) align() {
	if g.splits <= 1 {
		return
	}
	b := g.groupOf(g.next)
	if r := ((g.split-b)%g.splits + g.splits) % g.splits; r != 0 {
		g.next = (b+r)*g.span() - g.cfg.FirstEventID
	}
}

// groupEnd is, for a split generator (SetSplit), the number after the
// last event of event e's group: where Next's loop jumps over the other
// generators' groups (a comparison an event instead of a division).
func (g *Generator) groupEnd(e int64) int64 {
	return (g.groupOf(e)+1)*g.span() - g.cfg.FirstEventID
}

// Next generates up to max rows of the selected tables (all three unless
// Config.Table is set; max <= 0 means DefaultBatchRows, and at most
// MaxBatchRows) and returns them with the watermark after them. It returns
// io.EOF once a bounded stream is exhausted.
func (g *Generator) Next(max int) (Batches, error) {
	if g.err != nil {
		return Batches{}, g.err
	}
	g.align()
	end := g.cfg.Events
	if end > 0 && g.next >= end {
		g.next = end // a split generator's next event may be past the end
		return Batches{}, io.EOF
	}
	if max <= 0 {
		max = DefaultBatchRows
	}
	max = min(max, MaxBatchRows)
	var (
		ps *personCols
		as *auctionCols
		bs *bidCols
		rb *routedBids
		ra *routedAuctions
	)
	all := g.want[kindPerson] && g.want[kindAuction] && g.want[kindBid]
	size := func(share int) int {
		n := capFor(max, all, share)
		if end > 0 { // a bounded stream's tail may be shorter
			n = min(n, capFor(int(min(end-g.next, MaxBatchRows)), true, share))
		}
		return n
	}
	if g.want[kindPerson] {
		ps = newPersonCols(g.pool, size(1), g.proj[kindPerson])
	}
	rt := g.route
	switch {
	case !g.want[kindAuction]:
	case rt != nil && rt.kind == kindAuction:
		ra = rt.auctionParts(size(3), g.proj[kindAuction])
	default:
		as = newAuctionCols(g.pool, size(3), g.proj[kindAuction])
	}
	switch {
	case !g.want[kindBid]:
	case rt != nil && rt.kind == kindBid:
		rb = rt.bidParts(size(46), g.proj[kindBid])
	default:
		bs = newBidCols(g.pool, size(46), g.proj[kindBid])
	}
	p, seed, first := g.pools, g.cfg.Seed, g.cfg.FirstEventID
	n, rows, last := g.next, 0, g.next
	perGroup := 0 // the wanted rows in one of the generator's groups
	for k, share := range kindShare {
		if g.want[k] {
			perGroup += share * int(g.group)
		}
	}
	split := g.splits > 1
	var gEnd, skip int64 // split: the end of n's group, and the other generators' events after it
	if split {
		gEnd, skip = g.groupEnd(n), (g.splits-1)*g.span()
	}
	for rows < max && (end == 0 || n < end) {
		e := n // this event's number
		id := first + e
		k := kindOf(id)
		if n = e + 1; split && n == gEnd {
			n += skip // the generator's next group
			gEnd = n + g.span()
		}
		last = e
		if g.want[k] {
			rows++
			r := eventRNG(id, seed)
			ts := g.eventTime(e)
			switch k {
			case kindPerson:
				ps.add(p, &r, id, ts)
			case kindAuction:
				horizon := g.eventTime(e+numInFlightAuctions*proportionDenominator/3) - ts
				if ra != nil {
					addAuction(ra, p, &r, id, ts, horizon)
				} else {
					as.add(p, &r, id, ts, horizon)
				}
			default:
				addBid(bs, rb, p, &r, id, ts)
			}
		}
		if g.group > 1 && n != e+1 && rows+perGroup > max {
			break // the end of a group, and the next would not fit: the step ends here
		}
	}
	if end > 0 && n > end {
		n = end // a split generator's last step may pass the end
	}
	out := Batches{Events: n - g.next, Watermark: types.TimestampValue(g.eventTime(last))}
	g.next = n
	if ps != nil {
		out.Person = ps.record()
	}
	if as != nil {
		out.Auction = as.record()
	}
	if bs != nil {
		out.Bid = bs.record()
	}
	if ra != nil {
		out.Parts = ra.records()
	}
	if rb != nil {
		out.Parts = rb.records()
	}
	return out, nil
}

// capFor is the expected row count of a table with share/50 of the events
// in a step of max rows.
func capFor(max int, all bool, share int) int {
	if !all {
		return max
	}
	return max*share/proportionDenominator + share
}
