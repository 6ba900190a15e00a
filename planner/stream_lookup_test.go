package planner

import (
	"slices"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
)

// planLookup plans query (which may end with EMIT and hold FOR SYSTEM_TIME
// AS OF clauses) as a continuous query.
func (d *streamDB) planLookup(query string) (*StreamQuery, error) {
	stmts, err := sql.Parse(query)
	if err != nil {
		return nil, err
	}
	env := d.env(query)
	env.Emit = emitOf(stmts[0])
	env.TemporalJoins = stmts[0].Ext.TemporalJoins
	return PlanStream(env, stmts[0].AST)
}

// TestLookupJoinPlans: the shapes of lookup joins: keys and residual
// filter, conditions on one side pushed below the join (a left join's only
// on the table side), append-only output with both keys as its key, the
// stream's watermark passed on, and a window on the stream side moved
// above the join so that GROUP BY window_start is a windowed aggregation.
func TestLookupJoinPlans(t *testing.T) {
	d := windowStreamDB(t)
	for _, c := range []struct {
		sql, want  string
		key        []int
		appendOnly bool
	}{
		{"SELECT b.price, a.name FROM bid b JOIN auction FOR SYSTEM_TIME AS OF PROCTIME() a ON a.id = b.auction AND a.category > 2 AND b.price > 5 AND a.seller <> b.bidder", `
StreamProject: b.price, a.name
└─StreamTemporalJoin: inner on b.auction = a.id filter (a.seller <> b.bidder) (lookup: table changes emit nothing)   state: table rows by (a.id)
  ├─StreamProject: b.auction, b.bidder, b.price
  │ └─StreamFilter: (b.price > '5'::bigint)
  │   └─StreamScan: table bid b (append only) (watermark (bid.ts - '00:00:05'::interval second))
  └─StreamProject: a.id, a.seller, a.name
    └─StreamFilter: (a.category > 2)
      └─StreamScan: table auction a`, nil, true},
		{"SELECT b.price, a.name FROM bid b LEFT JOIN auction FOR SYSTEM_TIME AS OF PROCTIME() AS a ON a.id = b.auction AND b.price > 5", `
StreamProject: b.price, a.name
└─StreamTemporalJoin: left on b.auction = a.id filter (b.price > '5'::bigint) (lookup: table changes emit nothing)   state: table rows by (a.id)`, nil, true},
		{"SELECT a.category, window_start, count(*) FROM TUMBLE(bid, ts, INTERVAL '10' SECOND) b JOIN auction FOR SYSTEM_TIME AS OF PROCTIME() a ON a.id = b.auction GROUP BY a.category, window_start EMIT ON WINDOW CLOSE", `
└─StreamWindowAgg: TUMBLE(size 10s, offset 0s) count(*) GROUP BY category (emit on window close)   state: per open window and group (category): count
  └─StreamTemporalJoin: inner on bid.auction = a.id (lookup: table changes emit nothing)   state: table rows by (a.id)`, []int{0, 1}, true},
	} {
		q, err := d.planLookup(c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		got := strings.Join(ExplainStream(q.Root), "\n")
		if !strings.Contains(got, strings.TrimPrefix(c.want, "\n")) {
			t.Errorf("%s:\ngot:\n%s\nwant in it:%s", c.sql, got, c.want)
		}
		if !slices.Equal(q.Key, c.key) || q.AppendOnly != c.appendOnly {
			t.Errorf("%s: key %v append only %v, want %v %v", c.sql, q.Key, q.AppendOnly, c.key, c.appendOnly)
		}
	}
	// The stream's watermark column passes the join.
	q, err := d.planLookup("SELECT b.ts, a.name FROM bid b JOIN auction FOR SYSTEM_TIME AS OF PROCTIME() a ON a.id = b.auction")
	if err != nil {
		t.Fatal(err)
	}
	if got := WatermarkCols(q.Root, nil); !slices.Equal(got, []int{0}) {
		t.Errorf("watermark columns %v, want [0]", got)
	}
}

// TestLookupJoinRefused: every unsupported form fails with its SQLSTATE
// and a message naming the clause.
func TestLookupJoinRefused(t *testing.T) {
	d := windowStreamDB(t)
	for _, c := range []struct {
		sql  string
		code pgerr.Code
		msg  string
	}{
		{"SELECT * FROM bid b JOIN auction FOR SYSTEM_TIME AS OF b.ts a ON a.id = b.auction", pgerr.FeatureNotSupported, "FOR SYSTEM_TIME AS OF b.ts is not supported"},
		{"SELECT * FROM bid b RIGHT JOIN auction FOR SYSTEM_TIME AS OF PROCTIME() a ON a.id = b.auction", pgerr.FeatureNotSupported, "with RIGHT JOIN"},
		{"SELECT * FROM bid b JOIN auction FOR SYSTEM_TIME AS OF PROCTIME() a ON a.id > b.auction", pgerr.FeatureNotSupported, "needs an equality"},
		{"SELECT * FROM bid b JOIN src FOR SYSTEM_TIME AS OF PROCTIME() s ON s.x = b.auction", pgerr.FeatureNotSupported, "is a source"},
		{"SELECT * FROM bid b JOIN pv FOR SYSTEM_TIME AS OF PROCTIME() p ON p.id = b.bidder", pgerr.FeatureNotSupported, "is a view"},
		{"WITH c AS (SELECT * FROM auction) SELECT * FROM bid b JOIN c FOR SYSTEM_TIME AS OF PROCTIME() ON c.id = b.auction", pgerr.FeatureNotSupported, "is a WITH query"},
		{"SELECT * FROM auction a JOIN auction FOR SYSTEM_TIME AS OF PROCTIME() x ON x.id = a.seller", pgerr.FeatureNotSupported, "stream side that only inserts"},
		{"SELECT * FROM auction FOR SYSTEM_TIME AS OF PROCTIME() a JOIN bid b ON a.id = b.auction", pgerr.FeatureNotSupported, "right side of a JOIN"},
	} {
		_, err := d.planLookup(c.sql)
		if e := pgerr.As(err); e == nil || e.Code != c.code || !strings.Contains(e.Message, c.msg) || e.Position == 0 {
			t.Errorf("%s: got %v, want %s %q with a position", c.sql, err, c.code, c.msg)
		}
	}
}

// TestLookupJoinWindowHint: EMIT ON WINDOW CLOSE over an ordinary join
// that loses the watermark is refused with a hint naming the lookup join.
func TestLookupJoinWindowHint(t *testing.T) {
	d := windowStreamDB(t)
	_, err := d.planLookup("SELECT window_start, category, count(*) FROM TUMBLE((SELECT b.*, a.category FROM bid b JOIN auction a ON a.id = b.auction), ts, INTERVAL '10' SECOND) GROUP BY window_start, category EMIT ON WINDOW CLOSE")
	e := pgerr.As(err)
	if e == nil {
		t.Fatalf("got %v, want 42P17", err)
	}
	if e.Code != pgerr.InvalidObjectDefinition || !strings.Contains(e.Hint, "FOR SYSTEM_TIME AS OF PROCTIME()") {
		t.Errorf("got %v (hint %q)", err, e.Hint)
	}
	// The same query as a lookup join plans.
	if _, err := d.planLookup("SELECT window_start, category, count(*) FROM TUMBLE((SELECT b.*, a.category FROM bid b JOIN auction FOR SYSTEM_TIME AS OF PROCTIME() a ON a.id = b.auction), ts, INTERVAL '10' SECOND) GROUP BY window_start, category EMIT ON WINDOW CLOSE"); err != nil {
		t.Error(err)
	} // The window joined with the table (not a subquery): the hint leads to
	// the lookup join as well, and that form plans.
	_, err = d.planLookup("SELECT window_start, a.category, count(*) FROM TUMBLE(bid, ts, INTERVAL '10' SECOND) b JOIN auction a ON a.id = b.auction GROUP BY window_start, a.category EMIT ON WINDOW CLOSE")
	if e := pgerr.As(err); e == nil || !strings.Contains(e.Hint, "FOR SYSTEM_TIME AS OF PROCTIME()") {
		t.Errorf("window joined with a table: got %v, want a hint naming FOR SYSTEM_TIME AS OF PROCTIME()", err)
	}
	if _, err := d.planLookup("SELECT window_start, a.category, count(*) FROM TUMBLE(bid, ts, INTERVAL '10' SECOND) b JOIN auction FOR SYSTEM_TIME AS OF PROCTIME() a ON a.id = b.auction GROUP BY window_start, a.category EMIT ON WINDOW CLOSE"); err != nil {
		t.Error(err)
	}
}
