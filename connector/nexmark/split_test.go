package nexmark

import (
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// Readers i of n (Split) read disjoint shares whose union is the stream
// of one reader, each in event order; a reader resumed at a position it
// reported yields the rest of its share.
func TestReaderSplit(t *testing.T) {
	const events = 5000
	all := collect(t, Config{Events: events, Seed: 9}, 333)
	join := func(rows [][]string) []string {
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = strings.Join(r, "|")
		}
		return out
	}
	for table, want := range map[string][][]string{"person": all.person, "auction": all.auction, "bid": all.bid} {
		tsCol := map[string]int{"person": 6, "auction": 5, "bid": 5}[table]
		for _, n := range []int{1, 2, 3, 7} {
			cfg := Config{Events: events, Seed: 9, Table: table}
			var union []string
			for i := range n {
				r := NewReader(cfg)
				if err := r.Split(i, n); err != nil {
					t.Fatal(err)
				}
				steps, end := runSteps(t, r)
				if got := decodeEvent(t, end); got != events {
					t.Fatalf("%s reader %d of %d ends at event %d, want %d", table, i, n, got, events)
				}
				var rows [][]string
				for _, s := range steps {
					rows = append(rows, s.rows...)
				}
				for k := 1; k < len(rows); k++ {
					if rows[k][tsCol] < rows[k-1][tsCol] {
						t.Fatalf("%s reader %d of %d: row %d is earlier than the row before it", table, i, n, k)
					}
				}
				union = append(union, join(rows)...)
				// resume at every position it reported
				for b, s := range steps {
					rr := NewReader(cfg)
					if err := rr.Split(i, n); err != nil {
						t.Fatal(err)
					}
					if err := rr.Seek(s.pos); err != nil {
						t.Fatal(err)
					}
					got, last := runSteps(t, rr)
					var rest [][]string
					for _, g := range got {
						rest = append(rest, g.rows...)
					}
					done := 0
					for _, p := range steps[:b+1] {
						done += len(p.rows)
					}
					if len(rest) != len(rows)-done || len(rest) > 0 && !reflect.DeepEqual(rest, rows[done:]) || !reflect.DeepEqual(last, end) {
						t.Fatalf("%s reader %d of %d resumed after batch %d: %d rows, want %d", table, i, n, b, len(rest), len(rows)-done)
					}
				}
			}
			w := join(want)
			slices.Sort(w)
			slices.Sort(union)
			if len(w) == 0 || !slices.Equal(union, w) {
				t.Fatalf("%s at %d readers: %d rows, want the %d of one reader", table, n, len(union), len(w))
			}
		}
	}
	r := NewReader(Config{Events: 10, Table: "bid"})
	if err := r.Split(3, 3); err == nil {
		t.Fatal("reader 3 of 3 was accepted")
	}
}

// TestSplitKinds: split generators share every kind of event evenly, also
// when the number of generators divides the 50 events of a block (events
// i mod n would give every person to the even generators at n = 2, 4, 8,
// issue 15's instances' report), and from a first event id inside a block;
// their union is the stream of one generator.
func TestSplitKinds(t *testing.T) {
	const events = 40_000 // 800 blocks of 50
	for _, first := range []int64{0, 7} {
		cfg := Config{Events: events, Seed: 3, FirstEventID: first}
		all := collect(t, cfg, 1000)
		for _, n := range []int{2, 4, 5, 8} {
			var union stream
			for i := range n {
				g := New(cfg)
				g.SetSplit(i, n)
				var s stream
				for {
					b, err := g.Next(777)
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					s.person = append(s.person, rowsOf(b.Person)...)
					s.auction = append(s.auction, rowsOf(b.Auction)...)
					s.bid = append(s.bid, rowsOf(b.Bid)...)
				}
				for kind, c := range map[string][2]int{"person": {len(s.person), len(all.person)}, "auction": {len(s.auction), len(all.auction)},
					"bid": {len(s.bid), len(all.bid)}} {
					even := float64(c[1]) / float64(n)
					if d := float64(c[0]) - even; d > 46 || d < -46 { // within a block's share
						t.Errorf("first id %d, generator %d of %d: %d %s rows, an even share is %.0f", first, i, n, c[0], kind, even)
					}
				}
				union.person = append(union.person, s.person...)
				union.auction = append(union.auction, s.auction...)
				union.bid = append(union.bid, s.bid...)
			}
			for kind, rows := range map[string][2][][]string{"person": {union.person, all.person}, "auction": {union.auction, all.auction}, "bid": {union.bid, all.bid}} {
				got, want := joinRows(rows[0]), joinRows(rows[1])
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("first id %d, %d generators: the union of the %s rows (%d) is not the stream's (%d)", first, n, kind, len(got), len(want))
				}
			}
		}
	}
}

func joinRows(rows [][]string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.Join(r, "|")
	}
	return out
}

// The unpaced readers of a split stream are dealt groups of one step's
// rows: each step covers a stretch of event time of its own, so the
// readers' steps, taken in turn, follow each other in event time, and a
// step routed to n instances is one group of n times the rows
// (Reader.Split); paced readers keep blocks of 50 events, each carrying
// its share of the rate.
func TestSplitReadersTakeTurns(t *testing.T) {
	const events = 200_000
	for _, n := range []int{2, 3} {
		type span struct{ first, last string }
		var spans []span
		for i := range n {
			r := NewReader(Config{Events: events, Seed: 4, Table: "bid"})
			if err := r.Split(i, n); err != nil {
				t.Fatal(err)
			}
			steps, _ := runSteps(t, r)
			for k, s := range steps {
				if k < len(steps)-1 && len(s.rows) != DefaultBatchRows/46*46 {
					t.Fatalf("reader %d of %d, step %d: %d rows, want a group's %d", i, n, k, len(s.rows), DefaultBatchRows/46*46)
				}
				spans = append(spans, span{s.rows[0][5], s.rows[len(s.rows)-1][5]})
			}
		}
		slices.SortFunc(spans, func(a, b span) int { return strings.Compare(a.first, b.first) })
		for k := 1; k < len(spans); k++ {
			if spans[k].first < spans[k-1].last {
				t.Fatalf("%d readers: a step from %s to %s overlaps the one from %s to %s", n, spans[k-1].first, spans[k-1].last, spans[k].first, spans[k].last)
			}
		}
	}
	routed := NewReader(Config{Events: events, Seed: 4, Table: "bid"})
	if err := routed.Split(1, 2); err != nil {
		t.Fatal(err)
	}
	if !routed.SetRoute(bidAuction, 2, testOwner(2)) {
		t.Fatal("reader does not route")
	}
	group := 2 * DefaultBatchRows / 46 * 46
	steps := 0
	err := routed.RunParts(t.Context(), func(parts []arrow.RecordBatch) error {
		rows := 0
		for _, p := range parts {
			if p != nil {
				rows += int(p.NumRows())
			}
		}
		if steps++; rows != group && routed.gen.Position() < events {
			t.Fatalf("routed step %d: %d rows, want a group's %d", steps, rows, group)
		}
		return nil
	})
	if err != nil || steps < 2 {
		t.Fatalf("%d routed steps: %v", steps, err)
	}
	paced := NewReader(Config{Events: events, Table: "bid", Paced: true, EventsPerSecond: 1e6})
	if err := paced.Split(0, 2); err != nil {
		t.Fatal(err)
	}
	paced.layout()
	if paced.group != 1 {
		t.Fatalf("a paced split reader is dealt groups of %d blocks, want 1", paced.group)
	}
}
