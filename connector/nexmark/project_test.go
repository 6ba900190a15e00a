package nexmark

import (
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/pgerr"
)

// genStep is one Next of a generator.
type genStep struct {
	rec    arrow.RecordBatch
	events int64
	wm     int64
	pos    int64
}

// genSteps runs generator i of n of cfg (one table) building cols (nil:
// all) to its end in steps of step events.
func genSteps(t *testing.T, cfg Config, cols []int, i, n, step int) []genStep {
	t.Helper()
	g := New(cfg)
	if err := g.SetColumns(cfg.Table, cols); err != nil {
		t.Fatal(err)
	}
	g.SetSplit(i, n)
	var out []genStep
	for {
		b, err := g.Next(step)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		rec := map[string]arrow.RecordBatch{"person": b.Person, "auction": b.Auction, "bid": b.Bid}[cfg.Table]
		out = append(out, genStep{rec, b.Events, int64(b.Watermark), g.Position()})
	}
}

// subset is the columns of mask, ascending.
func subset(mask, ncols int) []int {
	cols := []int{}
	for c := range ncols {
		if mask&(1<<c) != 0 {
			cols = append(cols, c)
		}
	}
	return cols
}

// TestColumnsEqualAllColumns: a generator told to build only some columns
// (every subset of every table, none included) yields, batch by batch,
// the rows, events, watermarks and positions of a generator of every
// column, and each built column equal to that column of the full batch,
// alone and as reader 0..2 of 3 (the draws of the other columns are made
// or skipped without changing a built value).
func TestColumnsEqualAllColumns(t *testing.T) {
	for _, table := range []string{"person", "auction", "bid"} {
		all := Columns(table)
		cfg := Config{Events: 3000, Seed: 11, FirstEventID: 3, Table: table}
		step := map[string]int{"person": 7, "auction": 23, "bid": 97}[table] // rows of a batch
		for _, n := range []int{1, 3} {
			for i := range n {
				full := genSteps(t, cfg, nil, i, n, step)
				if len(full) < 3 {
					t.Fatalf("%s reader %d of %d: %d batches", table, i, n, len(full))
				}
				for mask := range 1 << len(all) {
					cols := subset(mask, len(all))
					got := genSteps(t, cfg, cols, i, n, step)
					if len(got) != len(full) {
						t.Fatalf("%s %v reader %d of %d: %d batches, want %d", table, cols, i, n, len(got), len(full))
					}
					for s, g := range got {
						f := full[s]
						if g.events != f.events || g.wm != f.wm || g.pos != f.pos || g.rec.NumRows() != f.rec.NumRows() {
							t.Fatalf("%s %v reader %d of %d batch %d: %d rows, %d events, watermark %d, position %d; want %d, %d, %d, %d",
								table, cols, i, n, s, g.rec.NumRows(), g.events, g.wm, g.pos, f.rec.NumRows(), f.events, f.wm, f.pos)
						}
						if int(g.rec.NumCols()) != len(cols) {
							t.Fatalf("%s %v: %d columns built", table, cols, g.rec.NumCols())
						}
						for j, c := range cols {
							if name := g.rec.Schema().Field(j).Name; name != all[c].Name {
								t.Fatalf("%s %v: column %d is %s, want %s", table, cols, j, name, all[c].Name)
							}
							if !array.Equal(g.rec.Column(j), f.rec.Column(c)) {
								t.Fatalf("%s %v reader %d of %d batch %d: column %s differs from the full batch's", table, cols, i, n, s, all[c].Name)
							}
						}
					}
				}
			}
		}
	}
}

// A generator of all three tables prunes each table on its own.
func TestColumnsAllTables(t *testing.T) {
	cfg := Config{Events: 2000, Seed: 5}
	want := collect(t, cfg, 300)
	g := New(cfg)
	for table, cols := range map[string][]int{"person": {0, 7}, "auction": {9}, "bid": {2, 3, 4}} {
		if err := g.SetColumns(table, cols); err != nil {
			t.Fatal(err)
		}
	}
	var got stream
	for {
		b, err := g.Next(300)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got.person = append(got.person, rowsOf(b.Person)...)
		got.auction = append(got.auction, rowsOf(b.Auction)...)
		got.bid = append(got.bid, rowsOf(b.Bid)...)
	}
	project := func(rows [][]string, cols ...int) [][]string {
		out := make([][]string, len(rows))
		for i, r := range rows {
			for _, c := range cols {
				out[i] = append(out[i], r[c])
			}
		}
		return out
	}
	if !reflect.DeepEqual(got.person, project(want.person, 0, 7)) || !reflect.DeepEqual(got.auction, project(want.auction, 9)) ||
		!reflect.DeepEqual(got.bid, project(want.bid, 2, 3, 4)) || len(got.bid) == 0 {
		t.Fatal("pruned tables differ from the columns of the full ones")
	}
}

// A position reported by a reader of some columns resumes a reader of
// other columns (all of them, or another subset) at the same event: the
// rows after it are the full stream's, projected.
func TestColumnsResume(t *testing.T) {
	cfg := Config{Events: 40_000, Seed: 2, Table: "bid"}
	for _, n := range []int{1, 3} {
		for i := range n {
			open := func(cols []int) *Reader {
				r := NewReader(cfg)
				if err := r.Split(i, n); err != nil {
					t.Fatal(err)
				}
				if err := r.SetColumns(cols); err != nil {
					t.Fatal(err)
				}
				return r
			}
			full, end := runSteps(t, open(nil))
			pruned, pend := runSteps(t, open([]int{2, 5}))
			if len(pruned) != len(full) || !reflect.DeepEqual(pend, end) || len(full) < 2 {
				t.Fatalf("reader %d of %d: %d batches ending at %x, want %d ending at %x", i, n, len(pruned), pend, len(full), end)
			}
			for b := range pruned[:len(pruned)-1] {
				if !reflect.DeepEqual(pruned[b].pos, full[b].pos) {
					t.Fatalf("reader %d of %d batch %d: position %x, want %x", i, n, b, pruned[b].pos, full[b].pos)
				}
				r := open([]int{0, 6}) // resumed with another projection
				if err := r.Seek(pruned[b].pos); err != nil {
					t.Fatal(err)
				}
				rest, _ := runSteps(t, r)
				var got, want [][]string
				for _, s := range rest {
					got = append(got, s.rows...)
				}
				for _, s := range full[b+1:] {
					for _, row := range s.rows {
						want = append(want, []string{row[0], row[6]})
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("reader %d of %d resumed after batch %d with other columns: %d rows differ from the full stream's %d", i, n, b, len(got), len(want))
				}
			}
		}
	}
}

func TestSetColumnsErrors(t *testing.T) {
	g := New(Config{Table: "bid"})
	for _, tc := range []struct {
		table string
		cols  []int
	}{{"bid", []int{2, 1}}, {"bid", []int{1, 1}}, {"bid", []int{7}}, {"bid", []int{-1}}, {"auction", []int{10}}, {"items", nil}} {
		if err := g.SetColumns(tc.table, tc.cols); pgerr.CodeOf(err) != pgerr.InvalidParameterValue {
			t.Errorf("SetColumns(%s, %v) = %v, want a 22023 error", tc.table, tc.cols, err)
		}
	}
}
