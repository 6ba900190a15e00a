package nexmark

// Event kinds, by id % 50.
const (
	kindPerson = iota
	kindAuction
	kindBid
)

// kindShare is how many events of each kind a block of
// proportionDenominator ids holds.
var kindShare = [...]int{kindPerson: 1, kindAuction: 3, kindBid: 46}

func kindOf(id int64) int {
	switch off := id % proportionDenominator; {
	case off == 0:
		return kindPerson
	case off <= 3:
		return kindAuction
	default:
		return kindBid
	}
}

// lastPerson is the base-0 id of the last person created at or before event id.
func lastPerson(id int64) int64 { return id / proportionDenominator }

// lastAuction is the base-0 id of the last auction created at or before
// event id (-1 before the first auction).
func lastAuction(id int64) int64 {
	epoch, off := id/proportionDenominator, id%proportionDenominator
	switch {
	case off == 0:
		return (epoch-1)*3 + 2
	case off <= 3:
		return epoch*3 + off - 1
	default:
		return epoch*3 + 2
	}
}

// randPerson is Beam's nextBase0PersonId: one of the ~1000 most recent
// people, or up to personIDLead people not yet created.
func randPerson(r *rng, id int64) int64 {
	np := lastPerson(id) + 1
	a := min(np, numActivePeople)
	return np - a + r.intn(a+personIDLead)
}

// randAuction is Beam's nextBase0AuctionId: one of the ~100 auctions in
// flight, or up to auctionIDLead auctions not yet created.
func randAuction(r *rng, id int64) int64 {
	mx := lastAuction(id)
	mn := max(mx-numInFlightAuctions, 0)
	return mn + r.intn(mx-mn+1+auctionIDLead)
}
