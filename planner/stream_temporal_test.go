package planner

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// TestStreamTemporalShapes: each form of temporal condition becomes a
// StreamTemporalFilter (mirrored forms turned round), the ordinary
// conjuncts stay a StreamFilter, and HAVING goes above the aggregation.
func TestStreamTemporalShapes(t *testing.T) {
	d := newStreamDB(t)
	for _, c := range []struct{ sql, want string }{
		{"SELECT * FROM bid WHERE ts > now() - interval '1 hour'", "StreamTemporalFilter: (bid.ts)::timestamp with time zone > (now() - '01:00:00'::interval)   state: the rows inside the window\n└─StreamScan: table bid (append only)"},
		{"SELECT * FROM bid WHERE now() - interval '1 hour' <= ts AND price > 10", "StreamTemporalFilter: (bid.ts)::timestamp with time zone >= (now() - '01:00:00'::interval)   state: the rows inside the window\n└─StreamFilter: (bid.price > '10'::bigint)"},
		{"SELECT * FROM bid WHERE ts + interval '1 hour' > now()", "StreamTemporalFilter"},
		{"SELECT * FROM bid WHERE ts < PROCTIME() - interval '1 minute'", "StreamTemporalFilter"},
		{"SELECT auction, max(ts) AS last FROM bid GROUP BY auction HAVING max(ts) < now() - interval '30 seconds'", "StreamTemporalFilter"},
	} {
		q := d.plan(t, c.sql)
		got := strings.Join(ExplainStream(q.Root), "\n")
		if !strings.Contains(got, c.want) {
			t.Errorf("%s:\ngot:\n%s\nwant in it:\n%s", c.sql, got, c.want)
		}
	}
	if q := d.plan(t, "SELECT * FROM bid WHERE ts < now()"); !q.AppendOnly {
		t.Errorf("ts < now() over an append-only table: not append only")
	}
	if q := d.plan(t, "SELECT * FROM bid WHERE ts > now()"); q.AppendOnly {
		t.Errorf("ts > now(): append only, but rows leave")
	}
}

// TestStreamTemporalRefused: now() anywhere but a temporal condition stays
// refused, with a hint that names the forms that work.
func TestStreamTemporalRefused(t *testing.T) {
	d := newStreamDB(t)
	for _, sql := range []string{
		"SELECT ts, now() FROM bid",
		"SELECT * FROM bid WHERE ts = now()",
		"SELECT * FROM bid WHERE ts > now() OR price > 1",
		"SELECT * FROM bid WHERE ts > now() - (price * interval '1 second')",
		"SELECT * FROM bid WHERE ts::date > now()::date",
		"SELECT * FROM bid WHERE ts > date_trunc('hour', now())",
		"SELECT * FROM bid b JOIN auction a ON a.id = b.auction AND b.ts > now() - interval '1 hour' + (a.category * interval '1 second')",
		"SELECT auction, count(*) FROM bid GROUP BY auction HAVING count(*) > extract(epoch from now())",
	} {
		_, err := PlanStream(d.env(sql), mustParse(t, sql))
		e := pgerr.As(err)
		if e == nil || e.Code != pgerr.FeatureNotSupported || e.Message != "now() cannot be used in a materialized view" ||
			!strings.Contains(e.Hint, "WHERE or HAVING") {
			t.Errorf("%s: got %v", sql, err)
		}
	}
}
