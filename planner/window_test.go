package planner

import (
	"slices"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
)

// windowDB has t (k, v, ts timestamp) with rows around the Unix epoch and
// tz (k, ts timestamptz).
func windowDB(t *testing.T) *testDB {
	return newTestDB(t,
		"CREATE TABLE t (k int, v int, ts timestamp)",
		`INSERT INTO t VALUES
			(1, 1, '1969-12-31 23:59:53'), (1, 2, '1969-12-31 23:59:58'), (1, 3, '1970-01-01 00:00:04'),
			(2, 4, '1970-01-01 00:00:01'), (2, 5, '1970-01-01 00:00:12'), (2, 6, NULL)`,
		"CREATE TABLE tz (k int, ts timestamptz)",
		"INSERT INTO tz VALUES (1, '2024-01-01 00:00:07+00'), (1, '2024-01-01 00:00:21+00')",
		"CREATE VIEW tv AS SELECT k, v * 10 AS v10, ts FROM t WHERE k = 2",
	)
}

func TestWindowBindErrors(t *testing.T) {
	d := windowDB(t)
	for _, c := range []struct {
		sql, code, msg, at string // at: the text the error position points at
	}{
		{"SELECT * FROM TUMBLE(t, ts, INTERVAL '0 seconds')", "22023", "size of TUMBLE must be greater than zero, not 0s", "INTERVAL '0"},
		{"SELECT * FROM HOP(t, ts, INTERVAL '-1 second', INTERVAL '10 seconds')", "22023", "slide of HOP must be greater than zero, not -1s", "INTERVAL '-1"},
		{"SELECT * FROM HOP(t, ts, INTERVAL '3 seconds', INTERVAL '10 seconds')", "22023", "size of HOP (10s) must be a multiple of its slide (3s)", "INTERVAL '10"},
		{"SELECT * FROM HOP(t, ts, INTERVAL '20 seconds', INTERVAL '10 seconds')", "22023", "size of HOP (10s) must be a multiple of its slide (20s)", ""},
		{"SELECT * FROM HOP(t, ts, INTERVAL '1 millisecond', INTERVAL '1 day')", "22023", "HOP puts every row in 86400000 windows", ""},
		{"SELECT * FROM CUMULATE(t, ts, INTERVAL '4 seconds', INTERVAL '10 seconds')", "22023", "size of CUMULATE (10s) must be a multiple of its step (4s)", ""},
		{"SELECT * FROM SESSION(t, ts, INTERVAL '0 s')", "22023", "gap of SESSION must be greater than zero", ""},
		{"SELECT * FROM TUMBLE(t, ts, INTERVAL '1 month')", "22023", "size of TUMBLE must not contain months or years", ""},
		{"SELECT * FROM TUMBLE(t, ts, NULL::interval)", "22023", "size of TUMBLE must not be NULL", ""},
		{"SELECT * FROM TUMBLE(t, ts, 5)", "42804", "size of TUMBLE must be an interval, not integer", "5)"},
		{"SELECT * FROM TUMBLE(t, k, INTERVAL '5 seconds')", "42804", `the time column of TUMBLE must be of type timestamp or timestamp with time zone, but "k" is integer`, "k,"},
		{"SELECT * FROM TUMBLE(t, nope, INTERVAL '5 seconds')", "42703", `column "nope" does not exist`, "nope"},
		{"SELECT * FROM TUMBLE(t, ts)", "42883", `TUMBLE is missing its argument "size"`, "TUMBLE"},
		{"SELECT * FROM SESSION(t, ts, '1 s', '2 s')", "42883", "too many arguments for SESSION", "'2 s'"},
		{"SELECT * FROM TUMBLE(t, ts, width => INTERVAL '5 seconds')", "42883", `TUMBLE has no parameter named "width"`, "width"},
		{"SELECT * FROM TUMBLE(t, ts, size => '1 s', size => '2 s')", "42601", `argument "size" of TUMBLE is given more than once`, ""},
		{"SELECT * FROM TUMBLE(t, ts, v * INTERVAL '1 s')", "42703", `column "v" does not exist`, ""},
		{"SELECT * FROM TUMBLE(nope, ts, INTERVAL '5 seconds')", "42P01", `relation "nope" does not exist`, "nope"},
		{"SELECT * FROM TUMBLE(1, ts, INTERVAL '5 seconds')", "42809", "the first argument of TUMBLE must be a table, source or view name, or a parenthesized subquery", ""},
		{"SELECT TUMBLE_START(ts, INTERVAL '5 s') FROM t", "42803", "tumble_start can only be used with GROUP BY TUMBLE(...)", "TUMBLE_START"},
		{"SELECT HOP_END(ts, INTERVAL '5 s') FROM t GROUP BY TUMBLE(ts, INTERVAL '5 s')", "42803", "hop_end can only be used with GROUP BY HOP(...)", ""},
		{"SELECT count(*) FROM t GROUP BY TUMBLE(ts, INTERVAL '5 s'), SESSION(ts, INTERVAL '5 s')", "42803", "GROUP BY can have only one group window", "SESSION"},
		{"SELECT count(*) FROM t GROUP BY TUMBLE(k, INTERVAL '5 s')", "42804", "the time column of TUMBLE must be of type timestamp", ""},
		{"SELECT count(*) FROM t GROUP BY TUMBLE(ts + INTERVAL '1 s', INTERVAL '5 s')", "0A000", "the time argument of GROUP BY TUMBLE must be a column", ""},
	} {
		_, _, err := d.run(c.sql)
		e := pgerr.As(err)
		if e == nil || string(e.Code) != c.code || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%s:\n got %v\nwant %s %s", c.sql, err, c.code, c.msg)
			continue
		}
		if c.at != "" {
			if want := strings.Index(c.sql, c.at) + 1; e.Position != want {
				t.Errorf("%s: position %d, want %d (%q)", c.sql, e.Position, want, c.at)
			}
		}
	}
}

func TestWindowBatchResults(t *testing.T) {
	d := windowDB(t)
	for _, c := range []struct {
		sql  string
		want []string // sorted
	}{
		// Windows before the epoch and before the first row; NULL times drop.
		{"SELECT v, window_start, window_end FROM TUMBLE(t, ts, INTERVAL '5 seconds')", []string{
			"1|1969-12-31 23:59:50|1969-12-31 23:59:55", "2|1969-12-31 23:59:55|1970-01-01 00:00:00",
			"3|1970-01-01 00:00:00|1970-01-01 00:00:05", "4|1970-01-01 00:00:00|1970-01-01 00:00:05",
			"5|1970-01-01 00:00:10|1970-01-01 00:00:15"}},
		// An offset (negative, larger than the size: reduced modulo it).
		{"SELECT v, window_start FROM TUMBLE(t, ts, INTERVAL '5 seconds', INTERVAL '-7 seconds')", []string{
			"1|1969-12-31 23:59:53", "2|1969-12-31 23:59:58", "3|1970-01-01 00:00:03", "4|1969-12-31 23:59:58", "5|1970-01-01 00:00:08"}},
		// The Flink form with named arguments.
		{"SELECT v, window_start, window_end FROM TABLE(HOP(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), SIZE => INTERVAL '10' SECONDS, SLIDE => INTERVAL '5' SECONDS)) WHERE k = 1", []string{
			"1|1969-12-31 23:59:45|1969-12-31 23:59:55", "1|1969-12-31 23:59:50|1970-01-01 00:00:00",
			"2|1969-12-31 23:59:50|1970-01-01 00:00:00", "2|1969-12-31 23:59:55|1970-01-01 00:00:05",
			"3|1969-12-31 23:59:55|1970-01-01 00:00:05", "3|1970-01-01 00:00:00|1970-01-01 00:00:10"}},
		{"SELECT window_start, window_end, sum(v) FROM CUMULATE(t, ts, INTERVAL '5 seconds', INTERVAL '15 seconds') GROUP BY 1, 2", []string{
			"1969-12-31 23:59:45|1969-12-31 23:59:55|1", "1969-12-31 23:59:45|1970-01-01 00:00:00|3",
			"1970-01-01 00:00:00|1970-01-01 00:00:05|7", "1970-01-01 00:00:00|1970-01-01 00:00:10|7",
			"1970-01-01 00:00:00|1970-01-01 00:00:15|12"}},
		// Sessions per GROUP BY key: k=1's rows are 5s and 6s apart (gap 6:
		// two sessions), k=2's 11s apart.
		{"SELECT k, window_start, window_end, count(*), sum(v) FROM SESSION(t, ts, INTERVAL '6 seconds') GROUP BY k, window_start, window_end", []string{
			"1|1969-12-31 23:59:53|1970-01-01 00:00:04|2|3", "1|1970-01-01 00:00:04|1970-01-01 00:00:10|1|3",
			"2|1970-01-01 00:00:01|1970-01-01 00:00:07|1|4", "2|1970-01-01 00:00:12|1970-01-01 00:00:18|1|5"}},
		// Without a key the sessions run over all rows.
		{"SELECT window_start, window_end, count(*) FROM SESSION(t, ts, INTERVAL '6 seconds') GROUP BY window_start, window_end", []string{
			"1969-12-31 23:59:53|1970-01-01 00:00:10|4", "1970-01-01 00:00:12|1970-01-01 00:00:18|1"}},
		// PARTITION BY keys the sessions when there is no GROUP BY.
		{"SELECT v, window_end, count(*) OVER (PARTITION BY k, window_start) FROM SESSION(t, ts, INTERVAL '6 seconds')", []string{
			"1|1970-01-01 00:00:04|2", "2|1970-01-01 00:00:04|2", "3|1970-01-01 00:00:10|1",
			"4|1970-01-01 00:00:07|1", "5|1970-01-01 00:00:18|1"}},
		// A WHERE over SESSION applies after the sessions are made.
		{"SELECT v, window_start FROM SESSION(t, ts, INTERVAL '6 seconds') WHERE v > 3", []string{
			"4|1969-12-31 23:59:53", "5|1970-01-01 00:00:12"}},
		// Inputs: a view, a subquery, a WITH query; aliases.
		{"SELECT w.v10, w.window_start FROM TUMBLE(tv, ts, INTERVAL '10 seconds') AS w", []string{
			"40|1970-01-01 00:00:00", "50|1970-01-01 00:00:10"}},
		{"SELECT a, b, ws FROM TUMBLE((SELECT v AS a, ts AS b FROM t WHERE v < 3), b, INTERVAL '1 minute') AS x(a, b, ws)", []string{
			"1|1969-12-31 23:59:53|1969-12-31 23:59:00", "2|1969-12-31 23:59:58|1969-12-31 23:59:00"}},
		{"WITH c AS (SELECT * FROM tz) SELECT window_start, window_end FROM HOP(c, ts, INTERVAL '10 seconds', INTERVAL '20 seconds')", []string{
			"2024-01-01 00:00:00+00|2024-01-01 00:00:20+00", "2024-01-01 00:00:10+00|2024-01-01 00:00:30+00",
			"2024-01-01 00:00:20+00|2024-01-01 00:00:40+00", "2023-12-31 23:59:50+00|2024-01-01 00:00:10+00"}},
		// The legacy group windows.
		{"SELECT k, TUMBLE_START(ts, INTERVAL '10' SECOND), TUMBLE_END(ts, INTERVAL '10' SECOND), count(*) FROM t WHERE v < 5 GROUP BY k, TUMBLE(ts, INTERVAL '10' SECOND)", []string{
			"1|1969-12-31 23:59:50|1970-01-01 00:00:00|2", "1|1970-01-01 00:00:00|1970-01-01 00:00:10|1",
			"2|1970-01-01 00:00:00|1970-01-01 00:00:10|1"}},
		{"SELECT HOP_START(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND) AS s, count(*) FROM t GROUP BY HOP(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND) HAVING count(*) > 1", []string{
			"1969-12-31 23:59:50|2", "1969-12-31 23:59:55|3", "1970-01-01 00:00:00|2"}},
		{"SELECT k, SESSION_START(ts, INTERVAL '6' SECOND), SESSION_END(ts, INTERVAL '6' SECOND), max(v) FROM t GROUP BY SESSION(ts, INTERVAL '6' SECOND), k", []string{
			"1|1969-12-31 23:59:53|1970-01-01 00:00:04|2", "1|1970-01-01 00:00:04|1970-01-01 00:00:10|3",
			"2|1970-01-01 00:00:01|1970-01-01 00:00:07|4", "2|1970-01-01 00:00:12|1970-01-01 00:00:18|5"}},
	} {
		rows, _, err := d.run(c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		want := sorted(c.want)
		if got := sorted(rows); !slices.Equal(got, want) {
			t.Errorf("%s:\n got %v\nwant %v", c.sql, got, want)
		}
	}
}

func TestWindowBatchPlans(t *testing.T) {
	d := windowDB(t)
	for _, c := range []struct{ sql, want string }{
		// Filters that read no window column go below the window; SESSION keeps them above.
		{"SELECT * FROM HOP(t, ts, INTERVAL '5 seconds', INTERVAL '10 seconds') WHERE v > 1 AND window_end > ts", `
Filter: (window_end > t.ts)
  WindowExpand: HOP(slide 5s, size 10s) on ts
    Seq Scan on t (filter: (t.v > 1))`},
		{"SELECT k, window_start, count(*) FROM SESSION(t, ts, INTERVAL '5 seconds') WHERE v > 1 GROUP BY k, window_start", `
HashAggregate: count(*) group by t.k, t.window_start
  Project: t.k, window_start
    Filter: (t.v > 1)
      SessionWindow: SESSION(gap 5s) on ts PARTITION BY t.k
        Seq Scan on t`},
		{"SELECT TUMBLE_END(ts, INTERVAL '1' MINUTE, INTERVAL '30' SECOND), count(*) FROM t GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE, INTERVAL '30' SECOND)", `
Project: window_end, count
  HashAggregate: count(*) group by window_start, window_end
    WindowExpand: TUMBLE(size 1m0s, offset 30s) on ts
      Seq Scan on t`},
	} {
		got := "\n" + strings.TrimRight(d.explain(c.sql), "\n")
		if got != c.want {
			t.Errorf("%s:\n got%s\nwant%s", c.sql, got, c.want)
		}
	}
}

// windowStreamDB is newStreamDB with a watermark on bid.ts.
func windowStreamDB(t *testing.T) *streamDB {
	d := newStreamDB(t)
	d.cat.rels["bid"].Watermark = &catalog.Watermark{Column: "ts", Expr: "ts - INTERVAL '5' SECOND"}
	d.mustExec("CREATE TABLE ev (id int8 PRIMARY KEY, t_s timestamptz)")
	return d
}

// planEmit plans query (which may end with EMIT) as a continuous query.
func (d *streamDB) planEmit(query string) (*StreamQuery, error) {
	stmts, err := sql.Parse(query)
	if err != nil {
		return nil, err
	}
	env := d.env(query)
	env.Emit = emitOf(stmts[0])
	return PlanStream(env, stmts[0].AST)
}

func TestWindowStreamPlans(t *testing.T) {
	d := windowStreamDB(t)
	for _, c := range []struct {
		sql        string
		want       string
		key        []int
		appendOnly bool
	}{
		{"SELECT auction, window_start, window_end, count(*), max(price) FROM TUMBLE(bid, ts, INTERVAL '10' SECOND) GROUP BY auction, window_start, window_end", `
StreamProject: auction, window_start, window_end, count, max
└─StreamWindowAgg: TUMBLE(size 10s, offset 0s) count(*), max(bid.price) GROUP BY bid.auction (emit on update)   state: per open window and group (bid.auction): count, count per value of bid.price
  └─StreamProject: bid.auction, bid.price, bid.ts
    └─StreamScan: table bid (append only) (watermark (bid.ts - '00:00:05'::interval second))`, []int{0, 1}, false},
		{"SELECT window_start, window_end, auction, count(*) FROM TUMBLE(bid, ts, INTERVAL '10' SECOND) GROUP BY window_start, window_end, auction", `
StreamWindowAgg: TUMBLE(size 10s, offset 0s) count(*) GROUP BY bid.auction (emit on update)   state: per open window and group (bid.auction): count
└─StreamProject: bid.auction, bid.ts
  └─StreamScan: table bid (append only) (watermark (bid.ts - '00:00:05'::interval second))`, []int{0, 2}, false},
		// Through a subquery; only window_end grouped; avg finished by a cast.
		{"SELECT e, a FROM (SELECT window_end AS e, avg(p)::int8 AS a FROM (SELECT price AS p, window_end FROM HOP(bid, ts, INTERVAL '2' SECOND, INTERVAL '10' SECOND)) s GROUP BY 1) g", `
StreamProject: window_end, (avg)::bigint
└─StreamWindowAgg: HOP(slide 2s, size 10s, offset 0s) avg(bid.price) (emit on update)   state: per open pane: sum and count
  └─StreamProject: bid.price, bid.ts
    └─StreamScan: table bid (append only) (watermark (bid.ts - '00:00:05'::interval second))`, []int{0}, false},
		{"SELECT bidder, SESSION_START(ts, INTERVAL '1' MINUTE), count(*) FROM bid GROUP BY bidder, SESSION(ts, INTERVAL '1' MINUTE) EMIT ON WINDOW CLOSE", `
StreamProject: bidder, window_start, count
└─StreamWindowAgg: SESSION(gap 1m0s) count(*) GROUP BY bid.bidder (emit on window close)   state: per open session and group (bid.bidder): count
  └─StreamProject: bid.bidder, bid.ts
    └─StreamScan: table bid (append only) (watermark (bid.ts - '00:00:05'::interval second))`, nil, true}, // a session's end is part of its key
		{"SELECT window_start, window_end, sum(price) FROM CUMULATE(bid, ts, INTERVAL '1' MINUTE, INTERVAL '1' HOUR) GROUP BY window_start, window_end EMIT ON WINDOW CLOSE WITH DELAY INTERVAL '1' SECOND ALLOW LATENESS '1 minute'", `
StreamWindowAgg: CUMULATE(step 1m0s, size 1h0m0s, offset 0s) sum(bid.price) (emit on window close, delay 1s, allow lateness 1m0s)   state: per open window: sum
└─StreamProject: bid.price, bid.ts
  └─StreamScan: table bid (append only) (watermark (bid.ts - '00:00:05'::interval second))`, []int{1}, false},
		// EMIT ON WINDOW CLOSE on a plain SELECT: rows held until the watermark passes them.
		{"SELECT auction, ts FROM bid WHERE price > 10 EMIT ON WINDOW CLOSE WITH DELAY '1 second'", `
StreamEowc: ts, delay 1s   state: the rows the watermark has not passed
└─StreamProject: bid.auction, bid.ts
  └─StreamFilter: (bid.price > '10'::bigint)
    └─StreamScan: table bid (append only) (watermark (bid.ts - '00:00:05'::interval second))`, nil, true},
		// No aggregation: the windows are expanded.
		{"SELECT * FROM HOP(ev, t_s, INTERVAL '2' SECOND, INTERVAL '10' SECOND)", `
StreamWindowExpand: HOP(slide 2s, size 10s) on t_s
└─StreamScan: table ev`, []int{0, 2}, false},
		// An expression of the window: an ordinary aggregation over the expansion.
		{"SELECT date_trunc('hour', window_start), count(*) FROM TUMBLE(bid, ts, INTERVAL '10' SECOND) GROUP BY 1", `
StreamHashAgg: count(*) GROUP BY date_trunc('hour'::text, bid.window_start)   state: per group (date_trunc('hour'::text, bid.window_start)): count
└─StreamProject: window_start
  └─StreamWindowExpand: TUMBLE(size 10s) on ts
    └─StreamProject: bid.ts
      └─StreamScan: table bid (append only) (watermark (bid.ts - '00:00:05'::interval second))`, []int{0}, false},
	} {
		q, err := d.planEmit(c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		got := "\n" + strings.Join(ExplainStream(q.Root), "\n")
		if got != c.want || !slices.Equal(q.Key, c.key) || q.AppendOnly != c.appendOnly {
			t.Errorf("%s:\n got%s\nkey %v append-only %v\nwant%s\nkey %v append-only %v", c.sql, got, q.Key, q.AppendOnly, c.want, c.key, c.appendOnly)
		}
	}
}

func TestWindowEmitSpec(t *testing.T) {
	d := windowStreamDB(t)
	const q = "SELECT window_start, count(*) FROM TUMBLE(bid, ts, INTERVAL '10' SECOND) GROUP BY window_start "
	for _, c := range []struct {
		emit string
		want stream.EmitSpec
	}{
		{"", stream.EmitSpec{}},
		{"EMIT CHANGES", stream.EmitSpec{}},
		{"EMIT FINAL", stream.EmitSpec{Mode: stream.EmitOnWindowClose}},
		{"EMIT AFTER WATERMARK WITH DELAY '2 seconds'", stream.EmitSpec{Mode: stream.EmitOnWindowClose, Delay: 2e6}},
		{"EMIT ON WINDOW CLOSE WITH DELAY INTERVAL '1' MINUTE EARLY EVERY INTERVAL '5' SECOND ALLOW LATENESS INTERVAL '1' DAY LATE ROWS INTO late",
			stream.EmitSpec{Mode: stream.EmitOnWindowClose, Delay: 60e6, EarlyEvery: 5e6, AllowLateness: 86400e6, LateRows: true}},
		{"EMIT EVERY '500 milliseconds'", stream.EmitSpec{Mode: stream.EmitEvery, Every: 500e3}},
	} {
		sq, err := d.planEmit(q + c.emit)
		if err != nil {
			t.Errorf("%s: %v", c.emit, err)
			continue
		}
		wa, ok := sq.Root.Inputs()[0].(*stream.WindowAgg)
		if !ok {
			wa, ok = sq.Root.(*stream.WindowAgg)
		}
		if !ok || wa.Emit != c.want {
			t.Errorf("%s: %+v, want %+v", c.emit, wa, c.want)
		}
	}
	for _, c := range []struct{ sql, code, msg, at string }{
		{q + "EMIT EVERY INTERVAL '0' SECOND", "22023", "the interval of EMIT EVERY must be greater than zero, not 0s", "INTERVAL '0'"},
		{q + "EMIT ON WINDOW CLOSE WITH DELAY '-1 s'", "22023", "the interval of WITH DELAY must not be negative", "'-1 s'"},
		{q + "EMIT ON WINDOW CLOSE WITH DELAY '1 month'", "22023", "the interval of WITH DELAY must not contain months", "'1 month'"},
		{q + "EMIT ON WINDOW CLOSE WITH DELAY 'soon'", "22007", `invalid input syntax for type interval: "soon"`, "'soon'"},
		// No watermark: nothing would ever close.
		{"SELECT window_start, count(*) FROM TUMBLE(ev, t_s, INTERVAL '10' SECOND) GROUP BY 1 EMIT ON WINDOW CLOSE", "42P17", "EMIT ON WINDOW CLOSE needs a watermark, but the query reads no table or source with one", "EMIT"},
		{"SELECT auction, count(*) FROM bid GROUP BY 1 EMIT FINAL", "0A000", "EMIT FINAL needs a windowed aggregation or an output column that carries the watermark", "EMIT"},
		{"SELECT auction, extract(epoch FROM ts) FROM bid EMIT ON WINDOW CLOSE", "0A000", "EMIT ON WINDOW CLOSE needs a windowed aggregation or an output column", "EMIT"},
		{"SELECT auction, count(*) FROM bid GROUP BY 1 EMIT EVERY '1 s'", "0A000", "EMIT EVERY is not supported yet on a query without a windowed aggregation", "EMIT"},
		{"SELECT * FROM SESSION(bid, ts, INTERVAL '1' SECOND)", "0A000", "SESSION without a GROUP BY on window_start or window_end cannot be used in a materialized view", ""},
	} {
		_, err := d.planEmit(c.sql)
		e := pgerr.As(err)
		if e == nil || string(e.Code) != c.code || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%s:\n got %v\nwant %s %s", c.sql, err, c.code, c.msg)
			continue
		}
		if c.at != "" {
			if want := strings.Index(c.sql, c.at) + 1; e.Position != want {
				t.Errorf("%s: position %d, want %d (%q)", c.sql, e.Position, want, c.at)
			}
		}
	}
}

// The Nexmark queries with windows (RisingWave's and Flink's texts) plan
// their windowed aggregations as WindowAggs.
func TestWindowNexmarkShapes(t *testing.T) {
	d := windowStreamDB(t)
	d.mustExec("CREATE TABLE people (id int8, name text, date_time timestamp)")
	d.mustExec("CREATE TABLE auctions (id int8, seller int8, date_time timestamp)")
	for _, c := range []struct {
		name, sql string
		aggs      int
	}{
		{"q5", `SELECT AuctionBids.auction, AuctionBids.num FROM (
			SELECT bid.auction, count(*) AS num, window_start AS starttime
			FROM HOP(bid, ts, INTERVAL '2' SECOND, INTERVAL '10' SECOND)
			GROUP BY window_start, bid.auction) AS AuctionBids
		JOIN (
			SELECT max(CountBids.num) AS maxn, CountBids.starttime_c FROM (
				SELECT count(*) AS num, window_start AS starttime_c
				FROM HOP(bid, ts, INTERVAL '2' SECOND, INTERVAL '10' SECOND)
				GROUP BY bid.auction, window_start) AS CountBids
			GROUP BY CountBids.starttime_c) AS MaxBids
		ON AuctionBids.starttime = MaxBids.starttime_c AND AuctionBids.num >= MaxBids.maxn`, 1}, // its count computed once (stream_subshare.go)
		{"q7", `SELECT B.auction, B.price, B.bidder, B.ts FROM bid B JOIN (
			SELECT MAX(price) AS maxprice, window_end AS date_time FROM TUMBLE(bid, ts, INTERVAL '10' SECOND) GROUP BY window_end) B1
		ON B.price = B1.maxprice WHERE B.ts BETWEEN B1.date_time - INTERVAL '10' SECOND AND B1.date_time`, 1},
		{"q8", `SELECT P.id, P.name, P.starttime FROM (
			SELECT id, name, window_start AS starttime, window_end AS endtime FROM TUMBLE(people, date_time, INTERVAL '10' SECOND)
			GROUP BY id, name, window_start, window_end) P
		JOIN (
			SELECT seller, window_start AS starttime, window_end AS endtime FROM TUMBLE(auctions, date_time, INTERVAL '10' SECOND)
			GROUP BY seller, window_start, window_end) A
		ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime`, 2},
		{"q11", `SELECT B.bidder, count(*) AS bid_count, SESSION_START(B.ts, INTERVAL '10' SECOND) AS starttime, SESSION_END(B.ts, INTERVAL '10' SECOND) AS endtime
		FROM bid B GROUP BY B.bidder, SESSION(B.ts, INTERVAL '10' SECOND)`, 1},
		{"flink q5 form", `SELECT auction, count(*) FROM TABLE(HOP(TABLE bid, DESCRIPTOR(ts), INTERVAL '2' SECONDS, INTERVAL '10' SECONDS)) GROUP BY auction, window_start, window_end`, 1},
	} {
		q, err := d.planEmit(c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		plan := strings.Join(ExplainStream(q.Root), "\n")
		if n := strings.Count(plan, "StreamWindowAgg"); n != c.aggs {
			t.Errorf("%s: %d windowed aggregations, want %d:\n%s", c.name, n, c.aggs, plan)
		}
	}
}
