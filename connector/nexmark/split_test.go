package nexmark

import (
	"reflect"
	"slices"
	"strings"
	"testing"
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
