package nexmark

import (
	"math/bits"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestValues checks every row of a 200,000-event stream against the bounds
// the algorithm allows, tracking the last person and auction created so far
// from the stream itself.
func TestValues(t *testing.T) {
	g := New(Config{Events: 200000, Seed: 11})
	b, err := g.Next(200000)
	if err != nil {
		t.Fatal(err)
	}
	// Persons: consecutive ids from 1000; strings from the word lists. E-mail
	// parts are Beam's trimmed nextString(7) and nextString(5) (may be empty).
	pid := int64Col(b.Person, "id")
	card := regexp.MustCompile(`^[0-9]{4} [0-9]{4} [0-9]{4} [0-9]{4}$`)
	email := regexp.MustCompile(`^([a-z]([a-z ]{0,4}[a-z])?)?@([a-z]([a-z ]{0,2}[a-z])?)?\.com$`)
	names, emails, cards, cities, states, pextra := stringCol(b.Person, "name"), stringCol(b.Person, "email_address"),
		stringCol(b.Person, "credit_card"), stringCol(b.Person, "city"), stringCol(b.Person, "state"), stringCol(b.Person, "extra")
	for i, id := range pid {
		if id != 1000+int64(i) {
			t.Fatalf("person %d has id %d", i, id)
		}
		first, last, ok := strings.Cut(names.Value(i), " ")
		if !ok || !slices.Contains(firstNames, first) || !slices.Contains(lastNames, last) {
			t.Fatalf("person name %q", names.Value(i))
		}
		if !email.MatchString(emails.Value(i)) || !card.MatchString(cards.Value(i)) {
			t.Fatalf("person email %q card %q", emails.Value(i), cards.Value(i))
		}
		if !slices.Contains(usCities, cities.Value(i)) || !slices.Contains(usStates, states.Value(i)) {
			t.Fatalf("person city %q state %q", cities.Value(i), states.Value(i))
		}
		tgt := int64(200 - 8 - len(names.Value(i)) - len(emails.Value(i)) - 19 - len(cities.Value(i)) - len(states.Value(i)))
		checkExtra(t, "person", pextra.Value(i), tgt)
	}

	// Auctions.
	aid, initial, reserve := int64Col(b.Auction, "id"), int64Col(b.Auction, "initial_bid"), int64Col(b.Auction, "reserve")
	ats, exp, seller, cat := int64Col(b.Auction, "date_time"), int64Col(b.Auction, "expires"), int64Col(b.Auction, "seller"), int64Col(b.Auction, "category")
	items, descs, aextra := stringCol(b.Auction, "item_name"), stringCol(b.Auction, "description"), stringCol(b.Auction, "extra")
	var cats [15]int
	hotSeller := 0
	for i, id := range aid {
		if id != 1000+int64(i) {
			t.Fatalf("auction %d has id %d", i, id)
		}
		if initial[i] < 100 || initial[i] > 1e8 || reserve[i] <= initial[i] || reserve[i] > 2e8 {
			t.Fatalf("auction %d: initial %d reserve %d", id, initial[i], reserve[i])
		}
		// ~100 auctions in flight: expiry within twice the time of 1666 events (100 µs apart).
		if exp[i] <= ats[i] || exp[i] > ats[i]+2*1666*100 {
			t.Fatalf("auction %d: date_time %d expires %d", id, ats[i], exp[i])
		}
		if cat[i] < 10 || cat[i] > 14 {
			t.Fatalf("auction %d: category %d", id, cat[i])
		}
		cats[cat[i]]++
		lastP := (int64(i)/3)*1 + 1000 // persons before auction i (one per 3 auctions, created first)
		if seller[i] < max(lastP+1-1000, 1000) || seller[i] > lastP+10 {
			t.Fatalf("auction %d: seller %d with last person %d", id, seller[i], lastP)
		}
		if seller[i] == (lastP-1000)/100*100+1000 {
			hotSeller++
		}
		checkWord(t, items.Value(i), 20)
		checkWord(t, descs.Value(i), 100)
		checkExtra(t, "auction", aextra.Value(i), int64(500-48-len(items.Value(i))-len(descs.Value(i))))
	}

	na := float64(len(aid))
	for c := 10; c <= 14; c++ {
		if f := float64(cats[c]) / na; f < 0.18 || f > 0.22 {
			t.Errorf("category %d holds %.3f of auctions, want about 1/5", c, f)
		}
	}
	if f := float64(hotSeller) / na; f < 0.73 || f > 0.78 {
		t.Errorf("hot seller share %.3f, want about 3/4", f)
	}

	// Bids: in the combined stream, bid k of each 46 follows person p and
	// auction 3p+2 of the same 50-event epoch.
	auction, bidder, price := int64Col(b.Bid, "auction"), int64Col(b.Bid, "bidder"), int64Col(b.Bid, "price")
	channels, urls, bextra := stringCol(b.Bid, "channel"), stringCol(b.Bid, "url"), stringCol(b.Bid, "extra")
	hot, hotBidder, hotChannel := 0, 0, 0
	chanRe := regexp.MustCompile(`^channel-([0-9]+)$`)
	urlRe := regexp.MustCompile(`^https://www\.nexmark\.com/[a-z_]{3,4}/[a-z_]{3,4}/[a-z_]{3,4}/item\.htm\?query=1(&channel_id=[0-9]+)?$`)
	for i := range auction {
		epoch := int64(i) / 46
		lastA := epoch*3 + 2 + 1000
		lastP := epoch + 1000
		if auction[i] < max(lastA-100, 1000) || auction[i] > lastA+10 {
			t.Fatalf("bid %d: auction %d with last auction %d", i, auction[i], lastA)
		}
		if auction[i] == (lastA-1000)/100*100+1000 {
			hot++
		}
		if bidder[i] < max(lastP+1-1000, 1000) || bidder[i] > lastP+10 {
			t.Fatalf("bid %d: bidder %d with last person %d", i, bidder[i], lastP)
		}
		if bidder[i] == (lastP-1000)/100*100+1001 {
			hotBidder++
		}
		if price[i] < 100 || price[i] > 1e8 {
			t.Fatalf("bid %d: price %d", i, price[i])
		}
		ch := channels.Value(i)
		if slices.Contains(hotChannels, ch) {
			hotChannel++
		} else if !chanRe.MatchString(ch) {
			t.Fatalf("bid %d: channel %q", i, ch)
		}
		if !urlRe.MatchString(urls.Value(i)) {
			t.Fatalf("bid %d: url %q", i, urls.Value(i))
		}
		if n := len(bextra.Value(i)); n < 54 || n > 81 {
			t.Fatalf("bid %d: extra of %d chars", i, n)
		}
	}
	nb := float64(len(auction))
	// Hot picks plus random picks that land on the hot id by chance.
	if share := float64(hot) / nb; share < 0.49 || share > 0.53 {
		t.Errorf("hot auction share %.4f, want about 1/2", share)
	}
	if share := float64(hotBidder) / nb; share < 0.74 || share > 0.77 {
		t.Errorf("hot bidder share %.4f, want about 3/4", share)
	}
	if share := float64(hotChannel) / nb; share < 0.49 || share > 0.51 {
		t.Errorf("hot channel share %.4f, want about 1/2", share)
	}
}

// checkWord checks Beam's nextString(max): 3..max-1 chars before trimming
// spaces, letters and spaces only, no outer spaces.
func checkWord(t *testing.T, s string, max int) {
	t.Helper()
	if len(s) >= max || strings.TrimSpace(s) != s || strings.Trim(s, "abcdefghijklmnopqrstuvwxyz ") != "" {
		t.Fatalf("word %q (max %d)", s, max)
	}
}

// checkExtra checks a padding string for a target of tgt bytes: lowercase
// letters, length in [tgt-d, tgt+d) with d = round(tgt/5).
func checkExtra(t *testing.T, kind, s string, tgt int64) {
	t.Helper()
	d := (tgt*2 + 5) / 10
	n := int64(len(s))
	if n < tgt-d || n > max(tgt+d-1, tgt) || strings.Trim(s, "abcdefghijklmnopqrstuvwxyz") != "" {
		t.Fatalf("%s extra of %d chars for target %d: %q", kind, n, tgt, s)
	}
}

func TestPriceDistribution(t *testing.T) {
	// log10(price/100) is uniform on [0,6): each decade holds about 1/6.
	b, err := New(Config{Table: "bid", Seed: 5}).Next(120000)
	if err != nil {
		t.Fatal(err)
	}
	var dec [7]int
	for _, p := range int64Col(b.Bid, "price") {
		k := 0
		for q := p / 100; q >= 10; q /= 10 {
			k++
		}
		dec[k]++
	}
	for k := 0; k < 6; k++ {
		if f := float64(dec[k]) / 120000; f < 0.16 || f > 0.175 {
			t.Errorf("decade %d holds %.3f of prices, want about 1/6", k, f)
		}
	}
}

// TestChannels checks Flink's channel cache: channel-i always has the same
// URL, which carries channel_id=|reverse32(i)| in about 9 of 10 channels; the
// four hot channels have one URL each.
func TestChannels(t *testing.T) {
	b, err := New(Config{Table: "bid", Seed: 9}).Next(300000)
	if err != nil {
		t.Fatal(err)
	}
	channels, urls := stringCol(b.Bid, "channel"), stringCol(b.Bid, "url")
	seen := map[string]string{}
	withID := 0
	for i := 0; i < channels.Len(); i++ {
		ch, u := channels.Value(i), urls.Value(i)
		if prev, ok := seen[ch]; ok {
			if prev != u {
				t.Fatalf("channel %q has URLs %q and %q", ch, prev, u)
			}
			continue
		}
		seen[ch] = u
		num, ok := strings.CutPrefix(ch, "channel-")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 || n >= 10000 {
			t.Fatalf("channel %q", ch)
		}
		if _, id, ok := strings.Cut(u, "&channel_id="); ok {
			rev := int64(int32(bits.Reverse32(uint32(n))))
			if rev < 0 {
				rev = -rev
			}
			if id != strconv.FormatInt(rev, 10) {
				t.Fatalf("channel %d: channel_id=%s, want %d", n, id, rev)
			}
			withID++
		}
	}
	hot := 0
	for _, h := range hotChannels {
		if _, ok := seen[h]; ok {
			hot++
		}
	}
	// 150,000 cold picks over 10,000 channels reach all of them.
	if cold := len(seen) - hot; hot != 4 || cold != 10000 {
		t.Fatalf("%d hot and %d cold channels seen", hot, cold)
	}
	if f := float64(withID) / 10000; f < 0.88 || f > 0.92 {
		t.Errorf("%.3f of channels carry channel_id, want about 0.9", f)
	}
}
