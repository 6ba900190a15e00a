package planner

import (
	"slices"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/catalog"
)

// A scan of a generator's source reads only the columns the plan needs:
// those of the output, of the conditions pushed into it and of the
// watermark (its column and expression, rebound over the read columns);
// a source of a connector that does not prune, and a table, read every
// column.
func TestStreamPruneSource(t *testing.T) {
	d := newNexmarkDB(t)
	d.cat.rels["bid"].Watermark = &catalog.Watermark{Column: "date_time", Expr: "date_time - INTERVAL '4' SECOND"}
	d.cat.rels["auction"].Connector = "kafka"
	for _, tc := range []struct {
		sql   string
		scans []string // EXPLAIN lines of the scans, in plan order
		read  [][]int  // their Read
	}{
		{"SELECT auction, max(price) FROM bid GROUP BY auction",
			[]string{"StreamScan: source bid (append only) (columns: auction, price, date_time) (watermark (bid.date_time - '00:00:04'::interval second))"},
			[][]int{{0, 2, 5}}},
		{"SELECT url FROM bid WHERE bidder > 5",
			[]string{"StreamScan: source bid (append only) (columns: bidder, url, date_time) (watermark (bid.date_time - '00:00:04'::interval second))"},
			[][]int{{1, 4, 5}}},
		{"SELECT count(*) FROM person",
			[]string{"StreamScan: source person (append only) (columns: id)"},
			[][]int{{0}}},
		{"SELECT * FROM person", []string{"StreamScan: source person (append only)"}, [][]int{nil}},
		{"SELECT a.id FROM auction a JOIN person p ON a.seller = p.id",
			[]string{"StreamScan: source auction a (append only)", "StreamScan: source person p (append only) (columns: id)"},
			[][]int{nil, {0}}},
	} {
		q := d.plan(t, tc.sql)
		scans := scansIn(q.Root)
		plan := strings.Join(ExplainStream(q.Root), "\n")
		if len(scans) != len(tc.scans) {
			t.Fatalf("%s: %d scans\n%s", tc.sql, len(scans), plan)
		}
		for i, sc := range scans {
			if sc.Explain() != tc.scans[i] || !slices.Equal(sc.Read, tc.read[i]) {
				t.Errorf("%s: scan %d is %q reading %v, want %q reading %v", tc.sql, i, sc.Explain(), sc.Read, tc.scans[i], tc.read[i])
			}
			if got := len(sc.Columns()); sc.Read != nil && got != len(sc.Read) {
				t.Errorf("%s: scan %d has %d columns, reads %d", tc.sql, i, got, len(sc.Read))
			}
			if w := sc.Watermark; w != nil {
				cols := sc.Columns()
				if w.Col >= len(cols) || cols[w.Col].Name != "date_time" {
					t.Errorf("%s: watermark column %d of %v", tc.sql, w.Col, cols)
				}
				for id := range refsOf(w.Expr) {
					if id >= len(cols) || cols[id].Name != "date_time" {
						t.Errorf("%s: the watermark reads column %d of %v", tc.sql, id, cols)
					}
				}
			}
		}
	}
}
