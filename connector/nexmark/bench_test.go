package nexmark

import "testing"

// benchGen reports generated events per second on one core (b.N events),
// of the columns cols of table (nil: all).
func benchGen(b *testing.B, table string, cols ...int) {
	g := New(Config{Table: table})
	if cols != nil {
		if err := g.SetColumns(table, cols); err != nil {
			b.Fatal(err)
		}
	}
	const step = 4096
	b.ResetTimer()
	var events int64
	for done := 0; done < b.N; done += step {
		bt, err := g.Next(min(step, b.N-done))
		if err != nil {
			b.Fatal(err)
		}
		events += bt.Events
		bt.Release()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkAll(b *testing.B)  { benchGen(b, "") }
func BenchmarkBids(b *testing.B) { benchGen(b, "bid") }

// BenchmarkBidsBidderTime is the bids of Nexmark q11 (bidder, date_time).
func BenchmarkBidsBidderTime(b *testing.B) { benchGen(b, "bid", bidBidder, bidDateTime) }

// BenchmarkBidsAuctionTime is the bids of Nexmark q5 (auction, date_time).
func BenchmarkBidsAuctionTime(b *testing.B) { benchGen(b, "bid", bidAuction, bidDateTime) }
func BenchmarkPersons(b *testing.B)         { benchGen(b, "person") }
func BenchmarkAuctions(b *testing.B) {
	benchGen(b, "auction")
}

// BenchmarkBidsBidderTimeSplit is q11's bids as reader 0 of 2 reads them
// unrouted: the baseline of BenchmarkBidsBidderTimeRouted.
func BenchmarkBidsBidderTimeSplit(b *testing.B) { benchSplit(b, false) }

// BenchmarkBidsBidderTimeRouted is q11's bids as reader 0 of 2 reads them
// at parallelism 2: routed by bidder into two parts a step, by a hash as
// the exchange's (Routing.Owner).
func BenchmarkBidsBidderTimeRouted(b *testing.B) { benchSplit(b, true) }

// benchSplit reports the rows (bids) reader 0 of 2 generates per second
// on one core (b.N rows), routed or not.
func benchSplit(b *testing.B, routed bool) {
	g := New(Config{Table: "bid"})
	if err := g.SetColumns("bid", []int{bidBidder, bidDateTime}); err != nil {
		b.Fatal(err)
	}
	g.SetSplit(0, 2)
	g.SetGroup(2 * DefaultBatchRows / 46)
	owner := func(v int64) int { return int(mix64(uint64(v)*golden) % 256 * 2 / 256) }
	if routed && !g.SetRoute("bid", bidBidder, 2, owner) {
		b.Fatal("not routed")
	}
	const step = 2 * DefaultBatchRows
	b.ResetTimer()
	for done := 0; done < b.N; done += step {
		bt, err := g.Next(min(step, b.N-done))
		if err != nil {
			b.Fatal(err)
		}
		bt.Release()
	}
}
