package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// testEvents is small enough for the batch engine, large enough that every
// query has output (q2's auctions, q3's sellers) and epochs pass mid-run.
const testEvents = 60_000

// windowEvents spans 40 s of event time (10,000 events a second), so the
// 10 s windows of the windowed queries close during the run.
const windowEvents = 400_000

// closedBefore is the watermark the bid source reaches at the end of a run
// (date_time - 4 s of its last bid): the end a window must not pass to be
// closed, and so emitted under EMIT ON WINDOW CLOSE.
const closedBefore = "(SELECT max(date_time) - INTERVAL '4' SECOND FROM bid)"

// windowedBatch are the batch versions of the windowed queries: the same
// query without EMIT, restricted to the windows the watermark closed by the
// end of the run (the runtime does not close the last windows when a
// finite source ends).
var windowedBatch = map[string]string{
	"q5": `SELECT AuctionBids.auction, AuctionBids.num
FROM (SELECT bid.auction, count(*) AS num, window_start AS starttime
      FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND)
      GROUP BY bid.auction, window_start, window_end HAVING window_end <= ` + closedBefore + `) AS AuctionBids
JOIN (SELECT max(CountBids.num) AS maxn, CountBids.starttime_c
      FROM (SELECT count(*) AS num, window_start AS starttime_c
            FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND)
            GROUP BY bid.auction, window_start, window_end HAVING window_end <= ` + closedBefore + `) AS CountBids
      GROUP BY CountBids.starttime_c) AS MaxBids
ON AuctionBids.starttime = MaxBids.starttime_c AND AuctionBids.num >= MaxBids.maxn`,
	"q8": `SELECT P.id, P.name, P.starttime
FROM (SELECT id, name, window_start AS starttime, window_end AS endtime
      FROM TUMBLE(person, date_time, INTERVAL '10' SECOND)
      GROUP BY id, name, window_start, window_end
      HAVING window_end <= (SELECT max(date_time) - INTERVAL '4' SECOND FROM person)) P
JOIN (SELECT seller, window_start AS starttime, window_end AS endtime
      FROM TUMBLE(auction, date_time, INTERVAL '10' SECOND)
      GROUP BY seller, window_start, window_end
      HAVING window_end <= (SELECT max(date_time) - INTERVAL '4' SECOND FROM auction)) A
  ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime`,
	"q11": `SELECT B.bidder, count(*) AS bid_count, window_start AS starttime, window_end AS endtime
FROM SESSION(bid, date_time, INTERVAL '10' SECOND) B
GROUP BY B.bidder, window_start, window_end HAVING window_end <= ` + closedBefore,
	"q7": `SELECT B.auction, B.price, B.bidder, B.date_time
FROM bid B
JOIN (SELECT MAX(price) AS maxprice, window_end AS date_time
      FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND)
      GROUP BY window_end HAVING window_end <= ` + closedBefore + `) B1 ON B.price = B1.maxprice
WHERE B.date_time BETWEEN B1.date_time - INTERVAL '10' SECOND AND B1.date_time`,
}

// tiedRanks are the queries whose output numbers rows that tie in the
// ranking's order (q19: ROW_NUMBER() OVER (PARTITION BY auction ORDER BY
// price DESC) with equal prices). SQL leaves the order of ties open, and
// the batch engine numbers them in arrival order while the streaming top-N
// orders them by their values (so that replays agree), so these queries
// are compared through views of the rows that do not depend on it: each
// lists the columns (0-based) of one view. The first view is the rows
// without their number, the second (partition, ranked value, number).
var tiedRanks = map[string][][]int{
	"q19": {{0, 1, 2, 3, 4, 5, 6}, {0, 2, 7}},
}

// project keeps the columns cols of text rows ("a|b|c") and sorts them.
func project(rows []string, cols []int) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		f := strings.Split(r, "|")
		p := make([]string, len(cols))
		for j, c := range cols {
			p[j] = f[c]
		}
		out[i] = strings.Join(p, "|")
	}
	slices.Sort(out)
	return out
}

// TestQueriesEqualBatchQueries checks that what each query sends its
// discard sink nets to the rows of the same query run as a batch query over
// the same events (loaded into materialized views by the engine).
func TestQueriesEqualBatchQueries(t *testing.T) {
	var plain []string
	for _, q := range Queries() {
		if _, ok := windowedBatch[q]; !ok && q != "q12" {
			plain = append(plain, q)
		}
	}
	// The side input does not change during a run, so q13's lookup join
	// equals the plain join.
	checkBatch(t, plain, testEvents, func(q, text string) string {
		return strings.ReplaceAll(text, " FOR SYSTEM_TIME AS OF PROCTIME()", "")
	})
}

// TestWindowedQueriesEqualBatchQueries checks the windowed queries (EMIT ON
// WINDOW CLOSE) against their batch versions over the closed windows.
func TestWindowedQueriesEqualBatchQueries(t *testing.T) {
	var windowed []string
	for _, q := range Queries() {
		if _, ok := windowedBatch[q]; ok {
			windowed = append(windowed, q)
		}
	}
	checkBatch(t, windowed, windowEvents, func(q, _ string) string { return windowedBatch[q] })
}

// TestQ12ProcessingTime checks q12, whose windows depend on when rows
// arrive: its windows are 10 s aligned and cover the run, and summed over
// windows the counts per bidder are those of the batch query.
func TestQ12ProcessingTime(t *testing.T) {
	text, err := QuerySQL("q12")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	var mu sync.Mutex
	var chunks []*stream.Chunk
	res, err := Run(context.Background(), Options{Query: "q12", Events: testEvents, BarrierInterval: time.Millisecond,
		OnChunk: func(c *stream.Chunk) { mu.Lock(); chunks = append(chunks, c); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	mu.Lock()
	got, _ := netRows(t, res.Columns, chunks)
	mu.Unlock()
	perBidder := map[string]int64{}
	for _, r := range got {
		f := strings.Split(r, "|") // bidder|bid_count|starttime|endtime
		var n int64
		fmt.Sscan(f[1], &n)
		perBidder[f[0]] += n
		start, err1 := time.Parse("2006-01-02 15:04:05-07", f[2])
		end, err2 := time.Parse("2006-01-02 15:04:05-07", f[3])
		if err1 != nil || err2 != nil {
			t.Fatalf("row %s: %v %v", r, err1, err2)
		}
		if end.Sub(start) != 10*time.Second || start.Unix()%10 != 0 {
			t.Fatalf("row %s: not a 10 s aligned window", r)
		}
		if end.Before(t0) || start.After(t1) {
			t.Fatalf("row %s: window outside the run [%s, %s]", r, t0, t1)
		}
	}
	var sums []string
	for b, n := range perBidder {
		sums = append(sums, fmt.Sprintf("%s|%d", b, n))
	}
	slices.Sort(sums)
	batch := newBatchDB(t, testEvents)
	want := batch.query(t, "SELECT bidder, count(*) FROM bid GROUP BY bidder")
	if len(want) == 0 {
		t.Fatal("no bids: the test checks nothing")
	}
	if d := diff(sums, want); d != "" {
		t.Fatalf("q12 counts per bidder differ from the batch query:\n%s", d)
	}
	// The batch query runs with PROCTIME() as now(): one window per bidder.
	if b := batch.query(t, "SELECT count(DISTINCT starttime) FROM ("+text+") q"); len(b) != 1 || b[0] != "1" {
		t.Fatalf("batch q12: %v windows, want 1", b)
	}
}

func checkBatch(t *testing.T, queries []string, events int64, batchText func(q, text string) string) {
	checkBatchAt(t, queries, events, []int{0}, batchText)
}

// checkBatchAt is checkBatch with each query run at each parallelism of
// pars (0: the default, GOMAXPROCS).
func checkBatchAt(t *testing.T, queries []string, events int64, pars []int, batchText func(q, text string) string) {
	batch := newBatchDB(t, events)
	for _, q := range queries {
		for _, par := range pars {
			name := q
			if len(pars) > 1 {
				name = fmt.Sprintf("%s/par%d", q, par)
			}
			checkBatchOne(t, batch, q, name, events, par, batchText)
		}
	}
}

func checkBatchOne(t *testing.T, batch *batchDB, q, name string, events int64, par int, batchText func(q, text string) string) {
	{
		t.Run(name, func(t *testing.T) {
			text, err := QuerySQL(q)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex // OnChunk runs on the sink's goroutine
			var chunks []*stream.Chunk
			res, err := Run(context.Background(), Options{Query: q, Events: events, BarrierInterval: time.Millisecond, Parallelism: par,
				OnChunk: func(c *stream.Chunk) { mu.Lock(); chunks = append(chunks, c); mu.Unlock() }})
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			got, rows := netRows(t, res.Columns, chunks)
			mu.Unlock()
			if rows != res.Rows {
				t.Fatalf("sink counted %d rows, chunks hold %d", res.Rows, rows)
			}
			want := batch.query(t, batchText(q, text))
			if views, ok := tiedRanks[q]; ok {
				for _, cols := range views {
					if d := diff(project(got, cols), project(want, cols)); d != "" {
						t.Fatalf("%s: stream result differs from the batch query in columns %v:\n%s", q, cols, d)
					}
				}
				got, want = project(got, views[0]), project(want, views[0])
			}
			if len(want) == 0 {
				t.Fatalf("%s has no rows over %d events: the test checks nothing", q, events)
			}
			t.Logf("%d result rows from %d sink rows", len(want), rows)
			if d := diff(got, want); d != "" {
				t.Fatalf("%s: stream result differs from the batch query (%d vs %d rows):\n%s", q, len(got), len(want), d)
			}
		})
	}
}

// The generator-only run and the materialized run see the same rows.
func TestGeneratorOnlyAndMaterialize(t *testing.T) {
	ctx := context.Background()
	g, err := Run(ctx, Options{Query: "q3", Events: testEvents, GeneratorOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(testEvents / 50 * 4); g.Rows != want { // persons and auctions
		t.Fatalf("generator-only q3 read %d rows, want %d", g.Rows, want)
	}
	d, err := Run(ctx, Options{Query: "q4", Events: testEvents})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Run(ctx, Options{Query: "q4", Events: testEvents, Materialize: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows != 5 || d.Rows < 5 {
		t.Fatalf("q4 has %d rows materialized (want one per category, 5), its sink got %d", m.Rows, d.Rows)
	}
	if _, err := Run(ctx, Options{Query: "q99"}); err == nil {
		t.Fatal("an unknown query ran")
	}
	if r, err := Run(ctx, Options{SQL: "SELECT count(*) FROM bid", Events: 5000}); err != nil || r.Rows == 0 || r.CPU <= 0 || r.PeakRSS == 0 {
		t.Fatalf("SQL run: %+v, %v", r, err)
	}
}

// netRows renders the sink's chunks as text rows ("a|b") and nets them:
// an insert adds a row, a retraction removes one. It also counts the rows.
func netRows(t *testing.T, cols []types.Column, chunks []*stream.Chunk) ([]string, int64) {
	t.Helper()
	count := map[string]int{}
	var n int64
	for _, c := range chunks {
		for i := 0; i < c.Len(); i++ {
			count[rowText(c.Rec, i, cols)] += int(c.Op(i).Sign())
			n++
		}
	}
	var out []string
	for r, k := range count {
		if k < 0 {
			t.Fatalf("row %s retracted more often than inserted", r)
		}
		for ; k > 0; k-- {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out, n
}

func rowText(rec arrow.RecordBatch, i int, cols []types.Column) string {
	f := make([]string, len(cols))
	for c, col := range cols {
		if v := types.ValueAt(rec.Column(c), i, col.Type); v == nil {
			f[c] = "NULL"
		} else {
			f[c] = types.FormatText(v, col.Type, &types.DefaultFormat)
		}
	}
	return strings.Join(f, "|")
}

// diff describes the first differences of two sorted row lists.
func diff(got, want []string) string {
	var b strings.Builder
	i, j, shown := 0, 0, 0
	for (i < len(got) || j < len(want)) && shown < 10 {
		switch {
		case j == len(want) || (i < len(got) && got[i] < want[j]):
			fmt.Fprintf(&b, "  extra   %s\n", got[i])
			i++
			shown++
		case i == len(got) || want[j] < got[i]:
			fmt.Fprintf(&b, "  missing %s\n", want[j])
			j++
			shown++
		default:
			i++
			j++
		}
	}
	return b.String()
}

// batchDB is an engine whose materialized views bid, auction and person
// hold the events the benchmark's sources generate, so the queries run
// over them as batch queries.
type batchDB struct {
	s *engine.Session
}

func newBatchDB(t *testing.T, events int64) *batchDB {
	t.Helper()
	eng, err := engine.Open(engine.Config{DataDir: t.TempDir(), BarrierInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	s, err := eng.NewSession("bench", "bench", nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &batchDB{s: s}
	for _, table := range []string{"person", "auction", "bid"} {
		d.exec(t, fmt.Sprintf("CREATE SOURCE nx_%s WITH (connector = 'nexmark', table = '%s', events = '%d')", table, table, events))
		d.exec(t, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS SELECT * FROM nx_%s", table, table))
	}
	for _, text := range Functions {
		d.exec(t, text)
	}
	d.exec(t, "CREATE TABLE side_input (key bigint PRIMARY KEY, value text)")
	d.exec(t, fmt.Sprintf("INSERT INTO side_input SELECT k, k::text FROM generate_series(0, %d) k", SideInputRows-1))
	return d
}

func (d *batchDB) exec(t *testing.T, text string) {
	t.Helper()
	d.query(t, text)
}

// query runs one statement and returns its rows as sorted text rows.
func (d *batchDB) query(t *testing.T, text string) []string {
	t.Helper()
	ctx := context.Background()
	stmts, err := sql.Parse(text)
	if err != nil || len(stmts) != 1 {
		t.Fatalf("%s: %v", text, err)
	}
	p, err := d.s.Prepare(ctx, stmts[0], nil)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	res, err := d.s.Execute(ctx, p, nil)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	if res.Rows == nil {
		return nil
	}
	defer res.Rows.Close()
	var out []string
	for {
		b, err := res.Rows.Next()
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if b == nil {
			break
		}
		for i := 0; i < int(b.NumRows()); i++ {
			out = append(out, rowText(b, i, res.Columns))
		}
	}
	slices.Sort(out)
	return out
}

// An aggregate's state grows with its distinct keys, not with its input:
// bids grouped by channel (about 10,000 channels, all seen within the
// first few hundred thousand events) keep the same state over 4x the
// events, while a join keeps its inputs' rows.
func TestAggregateStateFollowsKeysNotInput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 1.5M events")
	}
	const byChannel = "SELECT channel, count(*), max(price) FROM bid GROUP BY channel"
	state := func(events int64) int64 {
		r, err := Run(context.Background(), Options{SQL: byChannel, Events: events})
		if err != nil {
			t.Fatal(err)
		}
		return r.StateHeap
	}
	small, large := state(300_000), state(1_200_000)
	t.Logf("state: %s after 300K events, %s after 1.2M", MiB(small), MiB(large))
	if small <= 0 || large > small+small/4+(256<<10) {
		t.Fatalf("state grew from %s to %s with the input", MiB(small), MiB(large))
	}
}

// TestQueriesCreateMaterializedViews creates every query as a materialized
// view through the engine (over views of the sources' events), as a user
// would, and checks that each view answers.
func TestQueriesCreateMaterializedViews(t *testing.T) {
	d := newBatchDB(t, 20_000)
	for _, q := range Queries() {
		text, err := QuerySQL(q)
		if err != nil {
			t.Fatal(err)
		}
		d.exec(t, "CREATE MATERIALIZED VIEW nexmark_"+q+" AS "+text)
	}
	d.exec(t, "FLUSH")
	for _, q := range Queries() {
		if rows := d.query(t, "SELECT count(*) >= 0 FROM nexmark_"+q); len(rows) != 1 || rows[0] != "t" {
			t.Fatalf("%s: %v", q, rows)
		}
	}
}
