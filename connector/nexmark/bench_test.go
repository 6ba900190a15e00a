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
