package nexmark

import (
	"time"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Generator constants (Beam's NexmarkConfiguration / GeneratorConfig).
const (
	proportionDenominator = 50 // 1 person + 3 auctions + 46 bids
	firstPersonID         = 1000
	firstAuctionID        = 1000
	firstCategoryID       = 10
	numCategories         = 5
	hotAuctionRatio       = 2
	hotSellerRatio        = 4
	hotBidderRatio        = 4
	hotRatio100           = 100
	numInFlightAuctions   = 100
	numActivePeople       = 1000
	personIDLead          = 10
	auctionIDLead         = 10
	avgPersonBytes        = 200
	avgAuctionBytes       = 500
	avgBidBytes           = 100
	hotChannelsRatio      = 2
	channelsNumber        = 10000
	minStringLength       = 3

	// DefaultEventsPerSecond is Beam's and Flink's default event rate.
	DefaultEventsPerSecond = 10000
	// DefaultBatchRows is the rows of a Next call given no maximum.
	DefaultBatchRows = 4096
	// MaxBatchRows caps the rows of one Next call.
	MaxBatchRows = 1 << 20
)

// DefaultBaseTime is the event time of event 0 unless Config.BaseTime is set:
// 2015-07-15T00:00Z, as Beam and RisingWave (1436918400000 ms).
var DefaultBaseTime = time.Date(2015, 7, 15, 0, 0, 0, 0, time.UTC)

// Config describes one Nexmark stream. The same Config always yields the
// same stream. The zero value is usable: unbounded, 10,000 events/s from
// 2015-07-15, seed 0, all three tables.
type Config struct {
	// Events is the number of events (of all kinds) in the stream; 0 means
	// unbounded. With Table set, the stream still spans these Events event
	// numbers and yields only that table's share of them.
	Events int64
	// EventsPerSecond drives event time: event n is at BaseTime +
	// n*1e6/EventsPerSecond µs. 0 means DefaultEventsPerSecond.
	EventsPerSecond float64
	// Seed selects the random stream; different seeds give different data
	// with the same ids, kinds and times.
	Seed uint64
	// BaseTime is the event time of event number 0; zero means DefaultBaseTime.
	BaseTime time.Time
	// FirstEventID is added to every event number to form the event id that
	// drives kinds, ids and randomness (Beam: 0, so event 0 is person 1000).
	FirstEventID int64
	// Table restricts the output to "person", "auction" or "bid"; "" means
	// all three. Rows keep the ids and times they have in the combined stream.
	Table string
	// Paced makes a Reader release events in wall-clock time at
	// EventsPerSecond (so event time keeps up with the clock); otherwise a
	// Reader goes as fast as its consumer. The Generator ignores it.
	// ConfigFromOptions sets it when the rate is given.
	Paced bool
}

// Validate reports a user error (22023) for a bad setting.
func (c Config) Validate() error {
	if c.Events < 0 {
		return pgerr.New(pgerr.InvalidParameterValue, "nexmark: events must not be negative: %d", c.Events)
	}
	if c.EventsPerSecond < 0 || c.EventsPerSecond != c.EventsPerSecond {
		return pgerr.New(pgerr.InvalidParameterValue, "nexmark: events per second must be positive: %g", c.EventsPerSecond)
	}
	if c.FirstEventID < 0 {
		return pgerr.New(pgerr.InvalidParameterValue, "nexmark: first event id must not be negative: %d", c.FirstEventID)
	}
	switch c.Table {
	case "", "person", "auction", "bid":
	default:
		return pgerr.New(pgerr.InvalidParameterValue, "nexmark: unknown table %q (expected person, auction or bid)", c.Table)
	}
	return nil
}

// PersonColumns is the person table's schema (RisingWave's DDL).
var PersonColumns = []types.Column{
	{Name: "id", Type: types.TInt8},
	{Name: "name", Type: types.TVarchar},
	{Name: "email_address", Type: types.TVarchar},
	{Name: "credit_card", Type: types.TVarchar},
	{Name: "city", Type: types.TVarchar},
	{Name: "state", Type: types.TVarchar},
	{Name: "date_time", Type: types.TTimestamp},
	{Name: "extra", Type: types.TVarchar},
}

// AuctionColumns is the auction table's schema (RisingWave's DDL).
var AuctionColumns = []types.Column{
	{Name: "id", Type: types.TInt8},
	{Name: "item_name", Type: types.TVarchar},
	{Name: "description", Type: types.TVarchar},
	{Name: "initial_bid", Type: types.TInt8},
	{Name: "reserve", Type: types.TInt8},
	{Name: "date_time", Type: types.TTimestamp},
	{Name: "expires", Type: types.TTimestamp},
	{Name: "seller", Type: types.TInt8},
	{Name: "category", Type: types.TInt8},
	{Name: "extra", Type: types.TVarchar},
}

// BidColumns is the bid table's schema (RisingWave's DDL).
var BidColumns = []types.Column{
	{Name: "auction", Type: types.TInt8},
	{Name: "bidder", Type: types.TInt8},
	{Name: "price", Type: types.TInt8},
	{Name: "channel", Type: types.TVarchar},
	{Name: "url", Type: types.TVarchar},
	{Name: "date_time", Type: types.TTimestamp},
	{Name: "extra", Type: types.TVarchar},
}

// Columns returns the schema of table "person", "auction" or "bid" (nil for
// anything else).
func Columns(table string) []types.Column {
	switch table {
	case "person":
		return PersonColumns
	case "auction":
		return AuctionColumns
	case "bid":
		return BidColumns
	}
	return nil
}
