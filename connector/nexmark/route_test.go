package nexmark

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/pgerr"
)

// testOwner spreads values over n instances unevenly enough that some
// steps give an instance none of a table's rows.
func testOwner(n int) func(int64) int {
	return func(v int64) int { return int(uint64(v*0x9E3779B1)>>5) % n }
}

// TestRoutedPartsEqualFilteredBatch: a routed generator's part k of each
// step holds exactly the rows of the unrouted generator's batch of that
// step whose routed column's value instance k owns, in their order, with
// the same events, watermark and position; for every routed column, with
// every column built and with the routed column alone or left out, as a
// whole stream and as reader 1 of 2.
func TestRoutedPartsEqualFilteredBatch(t *testing.T) {
	type tc struct {
		table string
		col   int
		cols  []int
	}
	cases := []tc{
		{"bid", bidAuction, nil}, {"bid", bidBidder, nil}, {"bid", bidPrice, nil},
		{"bid", bidAuction, []int{bidAuction, bidDateTime}}, {"bid", bidBidder, []int{bidBidder, bidExtra}},
		{"bid", bidPrice, []int{bidDateTime}},
		{"auction", auctionID, nil}, {"auction", auctionID, []int{auctionID, auctionCategory}},
	}
	for _, c := range cases {
		for _, n := range []int{2, 3} {
			for _, split := range [][2]int{{0, 1}, {1, 2}} {
				cfg := Config{Events: 20000, Seed: 5, Table: c.table}
				plain := genSteps(t, cfg, c.cols, split[0], split[1], 1500)
				owner := testOwner(n)
				g := New(cfg)
				if err := g.SetColumns(c.table, c.cols); err != nil {
					t.Fatal(err)
				}
				g.SetSplit(split[0], split[1])
				if !g.SetRoute(c.table, c.col, n, owner) {
					t.Fatalf("%s column %d: not routed", c.table, c.col)
				}
				full := New(Config{Events: 20000, Seed: 5, Table: c.table}) // the routed column's values
				full.SetSplit(split[0], split[1])
				for s, want := range plain {
					b, err := g.Next(1500)
					if err != nil {
						t.Fatalf("step %d: %v", s, err)
					}
					fb, err := full.Next(1500)
					if err != nil {
						t.Fatal(err)
					}
					keys := int64Col(map[string]arrow.RecordBatch{"auction": fb.Auction, "bid": fb.Bid}[c.table], map[string][]string{
						"bid": {"auction", "bidder", "price"}, "auction": {"id"}}[c.table][map[int]int{bidAuction: 0, bidBidder: 1, bidPrice: 2}[c.col]])
					if b.Bid != nil || b.Auction != nil || len(b.Parts) != n {
						t.Fatalf("step %d: %d parts (want %d) and an unrouted batch", s, len(b.Parts), n)
					}
					if b.Events != want.events || int64(b.Watermark) != want.wm || g.Position() != want.pos {
						t.Fatalf("step %d: events/watermark/position %d/%d/%d, want %d/%d/%d", s, b.Events, b.Watermark, g.Position(), want.events, want.wm, want.pos)
					}
					rows := rowsOf(want.rec)
					for k, part := range b.Parts {
						if !part.Schema().Equal(want.rec.Schema()) {
							t.Fatalf("part %d's schema %v, want %v", k, part.Schema(), want.rec.Schema())
						}
						var exp [][]string
						for i, v := range keys {
							if owner(v) == k {
								exp = append(exp, rows[i])
							}
						}
						got := rowsOf(part)
						if len(got) != len(exp) || (len(exp) > 0 && !reflect.DeepEqual(got, exp)) {
							t.Fatalf("%s col %d, n %d, split %v, step %d, part %d: %d rows, want %d", c.table, c.col, n, split, s, k, len(got), len(exp))
						}
					}
				}
				if _, err := g.Next(1500); !errors.Is(err, io.EOF) {
					t.Fatalf("routed generator did not end with the plain one: %v", err)
				}
			}
		}
	}
}

// TestSetRouteRefuses: columns, tables and instance counts a generator
// does not route leave it unrouted (one batch per step).
func TestSetRouteRefuses(t *testing.T) {
	for _, c := range []struct {
		table string
		col   int
		n     int
	}{{"bid", bidChannel, 2}, {"bid", bidDateTime, 2}, {"auction", auctionSeller, 2}, {"person", 0, 2}, {"bid", bidAuction, 1}} {
		g := New(Config{Events: 1000, Table: c.table})
		if g.SetRoute(c.table, c.col, c.n, testOwner(max(c.n, 1))) || g.Routed() {
			t.Fatalf("%s column %d over %d: routed", c.table, c.col, c.n)
		}
		b, err := g.Next(100)
		if err != nil {
			t.Fatal(err)
		}
		if b.Parts != nil {
			t.Fatalf("%s column %d: parts", c.table, c.col)
		}
	}
}

// TestReaderRunParts: a routed reader's steps hold, over all parts, the
// rows of an unrouted reader, each part's rows owned by its instance and
// in order; positions after each step are positions of the plain reader.
func TestReaderRunParts(t *testing.T) {
	cfg := Config{Events: 30000, Seed: 3, Table: "bid"}
	n := 3
	owner := testOwner(n)
	r := NewReader(cfg)
	if err := r.Split(0, 2); err != nil {
		t.Fatal(err)
	}
	if !r.SetRoute(bidAuction, n, owner) || !r.Routes() {
		t.Fatal("reader does not route")
	}
	perInst := make([][]int64, n) // event times, to check the order
	total := 0
	err := r.RunParts(t.Context(), func(parts []arrow.RecordBatch) error {
		if len(parts) != n {
			t.Fatalf("%d parts", len(parts))
		}
		for k, p := range parts {
			if p == nil {
				continue
			}
			if p.NumRows() == 0 {
				t.Fatal("an empty part is not nil")
			}
			for _, v := range int64Col(p, "auction") {
				if owner(v) != k {
					t.Fatalf("auction %d in part %d, owned by %d", v, k, owner(v))
				}
			}
			total += int(p.NumRows())
			perInst[k] = append(perInst[k], int64Col(p, "date_time")...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	plain := NewReader(cfg)
	if err := plain.Split(0, 2); err != nil {
		t.Fatal(err)
	}
	want := 0
	if err := plain.Run(t.Context(), func(rec arrow.RecordBatch) error { want += int(rec.NumRows()); return nil }); err != nil {
		t.Fatal(err)
	}
	if total != want || want == 0 {
		t.Fatalf("%d rows routed, %d read", total, want)
	}
	for k, ts := range perInst {
		for i := 1; i < len(ts); i++ {
			if ts[i] < ts[i-1] {
				t.Fatalf("part %d: row %d before the row before it", k, i)
			}
		}
	}
	if decodeEvent(t, r.Position()) != decodeEvent(t, plain.Position()) {
		t.Fatal("routed and plain readers end at different events")
	}
}

// TestRoutedByTwoColumns: a generator routed by two bid columns
// (SetRoute2, as an exchange keyed by (bidder, auction)) puts each row of
// the unrouted batch of a step in the part of owner(a, b), in order, with
// the same events, watermark and position; other columns and tables are
// refused.
func TestRoutedByTwoColumns(t *testing.T) {
	const n = 3
	owner := func(a, b int64) int { return int(uint64(a*0x9E3779B1+b*0x85EBCA6B)>>7) % n }
	for _, cols := range [][2]int{{bidBidder, bidAuction}, {bidAuction, bidPrice}} {
		cfg := Config{Events: 20000, Seed: 9, Table: "bid"}
		plain := genSteps(t, cfg, nil, 1, 2, 1500)
		g := New(cfg)
		g.SetSplit(1, 2)
		if !g.SetRoute2("bid", cols[0], cols[1], n, owner) {
			t.Fatalf("columns %v: not routed", cols)
		}
		full := New(cfg)
		full.SetSplit(1, 2)
		names := map[int]string{bidAuction: "auction", bidBidder: "bidder", bidPrice: "price"}
		for s, want := range plain {
			b, err := g.Next(1500)
			if err != nil {
				t.Fatalf("step %d: %v", s, err)
			}
			fb, err := full.Next(1500)
			if err != nil {
				t.Fatal(err)
			}
			if b.Events != want.events || int64(b.Watermark) != want.wm || g.Position() != want.pos || len(b.Parts) != n {
				t.Fatalf("step %d: %d parts, events/watermark/position %d/%d/%d, want %d/%d/%d", s, len(b.Parts), b.Events, b.Watermark, g.Position(), want.events, want.wm, want.pos)
			}
			as, bs := int64Col(fb.Bid, names[cols[0]]), int64Col(fb.Bid, names[cols[1]])
			rows := rowsOf(want.rec)
			for k, part := range b.Parts {
				var exp [][]string
				for i := range as {
					if owner(as[i], bs[i]) == k {
						exp = append(exp, rows[i])
					}
				}
				if got := rowsOf(part); len(got) != len(exp) || (len(exp) > 0 && !reflect.DeepEqual(got, exp)) {
					t.Fatalf("columns %v, step %d, part %d: %d rows, want %d", cols, s, k, len(got), len(exp))
				}
			}
		}
	}
	for _, c := range []struct {
		table     string
		col, col2 int
	}{{"bid", bidAuction, bidChannel}, {"bid", bidDateTime, bidBidder}, {"auction", auctionID, auctionSeller}} {
		if g := New(Config{Events: 1000, Table: c.table}); g.SetRoute2(c.table, c.col, c.col2, n, owner) || g.Routed() {
			t.Fatalf("%s columns %d, %d: routed", c.table, c.col, c.col2)
		}
	}
}

// TestSplitResumesWithItsRouting: a split reader's groups are its steps,
// so a position taken by a reader that routed to 3 instances resumes a
// reader that routes so too (a resumed view's readers route as its new
// ones did), reading the rest of the same events with none repeated or
// skipped, and the same for two unrouted readers; a reader that routes
// otherwise refuses it with 55000 (the view is rebuilt).
func TestSplitResumesWithItsRouting(t *testing.T) {
	cfg := Config{Events: 200_000, Seed: 5, Table: "bid"}
	open := func(routed bool) *Reader {
		r := NewReader(cfg)
		if err := r.Split(1, 2); err != nil {
			t.Fatal(err)
		}
		if routed && !r.SetRoute(bidAuction, 3, testOwner(3)) {
			t.Fatal("reader does not route")
		}
		return r
	}
	// rows reads r's rows as "auction@date_time", stopping after steps
	// steps (0: to the end), and returns them with its position.
	errStop := errors.New("stop")
	rows := func(r *Reader, steps int) ([]string, []byte) {
		var out []string
		add := func(rec arrow.RecordBatch) {
			a, ts := int64Col(rec, "auction"), int64Col(rec, "date_time")
			for i := range a {
				out = append(out, fmt.Sprint(a[i], "@", ts[i]))
			}
		}
		n := 0
		step := func() error {
			if n++; steps > 0 && n == steps {
				return errStop
			}
			return nil
		}
		var err error
		if r.Routes() {
			err = r.RunParts(t.Context(), func(parts []arrow.RecordBatch) error {
				for _, p := range parts {
					if p != nil {
						add(p)
					}
				}
				return step()
			})
		} else {
			err = r.Run(t.Context(), func(rec arrow.RecordBatch) error { add(rec); return step() })
		}
		if err != nil && !errors.Is(err, errStop) {
			t.Fatal(err)
		}
		return out, r.Position()
	}
	for _, routed := range []bool{true, false} {
		all, _ := rows(open(routed), 0)
		sort.Strings(all)
		head, pos := rows(open(routed), 2)
		if err := open(!routed).Seek(pos); pgerr.CodeOf(err) != pgerr.ObjectNotInPrerequisiteState {
			t.Fatalf("routed %v, then %v: %v, want a 55000 refusal", routed, !routed, err)
		}
		next := open(routed)
		if err := next.Seek(pos); err != nil {
			t.Fatalf("routed %v: %v", routed, err)
		}
		tail, _ := rows(next, 0)
		got := append(head, tail...)
		sort.Strings(got)
		if len(head) == 0 || len(tail) == 0 || !reflect.DeepEqual(got, all) {
			t.Fatalf("routed %v: %d + %d rows, want the %d of one run", routed, len(head), len(tail), len(all))
		}
	}
}
