package engine

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

func openManual(t *testing.T, dir string) (*Engine, *Session) {
	t.Helper()
	e, err := Open(Config{DataDir: dir, Clock: NewManualClock(), BarrierInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	return e, s
}

// WATERMARK FOR is bound at CREATE TABLE / CREATE SOURCE: a bad one is a
// clear error pointing at it, and nothing is created.
func TestWatermarkClauseIsChecked(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	mustRun(t, s, "CREATE TABLE ok (id int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND WITH (idle_timeout = '10s')) APPEND ONLY")
	mustRun(t, s, "CREATE TABLE ok2 (ts timestamptz, WATERMARK FOR ts AS ts - INTERVAL '1 minute') ")
	mustRun(t, s, "CREATE SOURCE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, date_time TIMESTAMP, extra VARCHAR, "+
		"WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND) WITH (connector = 'nexmark', table = 'bid', events = 100)")
	mustRun(t, s, "CREATE SOURCE person (WATERMARK FOR date_time AS date_time) WITH (connector = 'nexmark', table = 'person', events = 100)")
	for _, tc := range []struct {
		q    string
		code pgerr.Code
		msg  string
		near string // the error position points here
	}{
		{"CREATE TABLE b (ts timestamp, WATERMARK FOR ts AS 1)", pgerr.DatatypeMismatch,
			`watermark expression for column "ts" must be of type timestamp without time zone, not integer`, "1)"},
		{"CREATE TABLE b (ts timestamp, WATERMARK FOR ts AS ts::timestamptz)", pgerr.DatatypeMismatch,
			`watermark expression for column "ts" must be of type timestamp without time zone, not timestamp with time zone`, "::"},
		{"CREATE TABLE b (ts timestamptz, WATERMARK FOR ts AS ts - '1 minute')", pgerr.DatatypeMismatch, // timestamptz - timestamptz
			`watermark expression for column "ts" must be of type timestamp with time zone, not interval`, "- '"},
		{"CREATE TABLE b (a int, WATERMARK FOR a AS a)", pgerr.DatatypeMismatch,
			`watermark column "a" must be of type timestamp or timestamp with time zone, not integer`, "a AS"},
		{"CREATE TABLE b (ts timestamp, WATERMARK FOR nope AS ts)", pgerr.UndefinedColumn, `column "nope" does not exist`, "nope"},
		{"CREATE TABLE b (ts timestamp, WATERMARK FOR ts AS nope)", pgerr.UndefinedColumn, `column "nope" does not exist`, "nope)"},
		{"CREATE TABLE b (ts timestamp, WATERMARK FOR ts AS ts WITH (idle_timeout = 'soon'))", pgerr.InvalidParameterValue, `invalid value for idle_timeout: "soon"`, ""},
		{"CREATE TABLE b (ts timestamp, WATERMARK FOR ts AS ts WITH (idle_timeout = '1 month'))", pgerr.InvalidParameterValue, `invalid value for idle_timeout: "1 month"`, ""},
		{"CREATE TABLE b (ts timestamp, WATERMARK FOR ts AS ts WITH (colour = 'red'))", pgerr.InvalidParameterValue, `unrecognized watermark option "colour"`, ""},
		{"CREATE TABLE b (ts timestamp, WATERMARK FOR ts AS max(ts))", pgerr.GroupingError, "aggregate functions are not allowed in WATERMARK expressions", "max"},
		{"CREATE SOURCE b (WATERMARK FOR date_time AS '2024-01-01') WITH (connector = 'nexmark', table = 'bid')", pgerr.InvalidColumnReference,
			`watermark expression for column "date_time" does not refer to it`, "'2024"},
		{"CREATE SOURCE b (WATERMARK FOR price AS price) WITH (connector = 'nexmark', table = 'bid')", pgerr.DatatypeMismatch,
			`watermark column "price" must be of type timestamp or timestamp with time zone, not bigint`, "price AS"},
	} {
		_, _, err := run(t, s, tc.q)
		pe := pgerr.As(err)
		if pe == nil || pe.Code != tc.code || (tc.msg != "" && pe.Message != tc.msg) {
			t.Errorf("%s: got %v, want %s %s", tc.q, err, tc.code, tc.msg)
			continue
		}
		if want := strings.Index(tc.q, tc.near) + 1; tc.near != "" && pe.Position != want {
			t.Errorf("%s: position %d, want %d", tc.q, pe.Position, want)
		}
	}
	if got := mustRun(t, s, "SHOW TABLES"); strings.Join(got, ",") != "ok,ok2" {
		t.Fatalf("tables: %v", got)
	}
	if got := mustRun(t, s, "SHOW SOURCES"); strings.Join(got, ",") != "bid,person" {
		t.Fatalf("sources: %v", got)
	}
	e.Close()
	// The clauses survive a restart and show in EXPLAIN.
	e, s = open(t, dir)
	defer e.Close()
	rel, err := e.cat.Resolve("", "bid", []string{"public"})
	if err != nil || rel.Watermark == nil || rel.Watermark.Column != "date_time" || rel.Watermark.Expr != "date_time - INTERVAL '4' SECOND" {
		t.Fatalf("bid's watermark: %+v, %v", rel, err)
	}
	plan := strings.Join(mustRun(t, s, "EXPLAIN CREATE MATERIALIZED VIEW v AS SELECT id FROM ok"), "\n")
	if !strings.Contains(plan, "StreamScan: table ok (append only) (watermark (ok.ts - '00:00:05'::interval second), idle timeout 10s)") {
		t.Fatalf("plan:\n%s", plan)
	}
}

// A view's watermark follows its table's; a join's is the smaller of its
// inputs' (on the key); streamsql_views counts rows in and out.
func TestViewWatermarksAndCounters(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE a (ts timestamp, x int, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) APPEND ONLY")
	mustRun(t, s, "CREATE TABLE b (ts timestamp, y int, WATERMARK FOR ts AS ts) APPEND ONLY")
	mustRun(t, s, "INSERT INTO a VALUES ('2024-01-01 00:00:10', 1), ('2024-01-01 00:00:30', 2)")
	mustRun(t, s, "CREATE MATERIALIZED VIEW va AS SELECT x, ts FROM a WHERE x > 0")
	mustRun(t, s, "CREATE MATERIALIZED VIEW j AS SELECT a.ts, x, y FROM a JOIN b ON a.ts = b.ts")
	mustRun(t, s, "CREATE MATERIALIZED VIEW agg AS SELECT ts, count(*) AS n FROM a GROUP BY ts")
	mustRun(t, s, "CREATE MATERIALIZED VIEW sums AS SELECT x, count(*) AS n FROM a GROUP BY x")
	status := func() string {
		mustRun(t, s, "FLUSH")
		return strings.Join(mustRun(t, s, "SELECT viewname, rows_in, rows_out, view_rows, late_rows, watermark FROM streamsql_views ORDER BY 1"), "\n")
	}
	want := "agg|2|2|2|0|2024-01-01 00:00:25+00\n" +
		"j|2|0|0|0|NULL\n" + // b has no watermark yet
		"sums|2|2|2|0|NULL\n" + // x has none
		"va|2|2|2|0|2024-01-01 00:00:25+00"
	if got := status(); got != want {
		t.Fatalf("status:\n%s\nwant:\n%s", got, want)
	}
	mustRun(t, s, "INSERT INTO b VALUES ('2024-01-01 00:00:10', 7)")
	mustRun(t, s, "INSERT INTO a VALUES ('2024-01-01 00:00:40', 3)")
	want = "agg|3|3|3|0|2024-01-01 00:00:35+00\n" +
		"j|4|1|1|0|2024-01-01 00:00:10+00\n" + // min(a 35s, b 10s)
		"sums|3|3|3|0|NULL\n" +
		"va|3|3|3|0|2024-01-01 00:00:35+00"
	if got := status(); got != want {
		t.Fatalf("status:\n%s\nwant:\n%s", got, want)
	}
	mustRun(t, s, "INSERT INTO b VALUES ('2024-01-01 00:01:00', 8)")
	if got := mustRun(t, s, "FLUSH; SELECT watermark FROM streamsql_views WHERE viewname = 'j'"); strings.Join(got, ",") != "2024-01-01 00:00:35+00" {
		t.Fatalf("join watermark: %v", got)
	}
}

// With the manual clock, ADVANCE CLOCK moves an idle table's watermark;
// with the wall clock it is refused.
func TestAdvanceClockMovesIdleWatermarks(t *testing.T) {
	e, s := openManual(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE m (host text, ts timestamptz, WATERMARK FOR ts AS ts - INTERVAL '2' SECOND WITH (idle_timeout = '10s')) APPEND ONLY")
	mustRun(t, s, "CREATE MATERIALIZED VIEW v AS SELECT host, ts FROM m")
	mustRun(t, s, "INSERT INTO m VALUES ('a', '2024-06-01 12:00:00+00')")
	wm := func() string {
		return strings.Join(mustRun(t, s, "SELECT watermark FROM streamsql_views WHERE viewname = 'v'"), ",")
	}
	mustRun(t, s, "FLUSH")
	if got := wm(); got != "2024-06-01 11:59:58+00" {
		t.Fatalf("watermark %s", got)
	}
	if _, tag, err := run(t, s, "ADVANCE CLOCK BY INTERVAL '9 seconds'"); err != nil || tag != "ADVANCE CLOCK" {
		t.Fatalf("advance: %q %v", tag, err)
	}
	if got := wm(); got != "2024-06-01 11:59:58+00" {
		t.Fatalf("watermark after 9s: %s", got)
	}
	mustRun(t, s, "ADVANCE CLOCK BY '1s'")
	if got := wm(); got != "2024-06-01 12:00:08+00" {
		t.Fatalf("watermark after 10s idle: %s", got)
	}
	for q, code := range map[string]pgerr.Code{
		"ADVANCE CLOCK BY INTERVAL '1 month'": pgerr.InvalidParameterValue,
		"ADVANCE CLOCK BY INTERVAL '-1 s'":    pgerr.InvalidParameterValue,
		"ADVANCE CLOCK BY 'soon'":             pgerr.InvalidDatetimeFormat,
	} {
		if _, _, err := run(t, s, q); pgerr.CodeOf(err) != code {
			t.Errorf("%s: got %v, want %s", q, err, code)
		}
	}

	e2, s2 := open(t, t.TempDir())
	defer e2.Close()
	if _, _, err := run(t, s2, "ADVANCE CLOCK BY INTERVAL '1 second'"); pgerr.CodeOf(err) != pgerr.ObjectNotInPrerequisiteState {
		t.Fatalf("wall clock advanced: %v", err)
	}
}

// LATE ROWS INTO's table must have the late rows' columns, then text, then
// timestamptz; the writer appends rows with the view's name and watermark.
func TestLateRowsTable(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE good (ts timestamp, v bigint, view_name text, watermark timestamptz)")
	mustRun(t, s, "CREATE TABLE short (ts timestamp, view_name text, watermark timestamptz)")
	mustRun(t, s, "CREATE TABLE wrongtail (ts timestamp, v bigint, view_name text, watermark timestamp)")
	mustRun(t, s, "CREATE MATERIALIZED VIEW mv AS SELECT * FROM good")
	in := []types.Column{{Name: "ts", Type: types.TTimestamp}, {Name: "v", Type: types.TInt8}}
	plan := &stream.WindowAgg{Input: &stream.Scan{Cols: in}}
	path := []string{"public"}
	if rel, err := e.lateRowsTable("good", path, plan); err != nil || rel.Name != "good" {
		t.Fatalf("good: %v", err)
	}
	for name, code := range map[string]pgerr.Code{
		"short": pgerr.DatatypeMismatch, "wrongtail": pgerr.DatatypeMismatch,
		"mv": pgerr.WrongObjectType, "nope": pgerr.UndefinedTable,
	} {
		if _, err := e.lateRowsTable(name, path, plan); pgerr.CodeOf(err) != code {
			t.Errorf("%s: got %v, want %s", name, err, code)
		}
	}
	// Without a windowed operator only the last two columns are checked.
	if _, err := e.lateRowsTable("short", path, &stream.Scan{Cols: in}); err != nil {
		t.Errorf("short without a window: %v", err)
	}
	good, err := e.cat.Resolve("", "good", path)
	if err != nil {
		t.Fatal(err)
	}
	hot := e.lateRowsStore(&catalog.Relation{Name: "hot", OID: 90001}, good.OID)
	tb := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
	tb.Append(arrow.Timestamp(1_000_000))
	vb := array.NewInt64Builder(memory.DefaultAllocator)
	vb.Append(42)
	rows := array.NewRecordBatch(types.ArrowSchema(in), []arrow.Array{tb.NewArray(), vb.NewArray()}, 1)
	if err := hot.Store([]arrow.RecordBatch{rows}, []int64{5_000_000}, 0); err != nil {
		t.Fatal(err)
	}
	if got := mustRun(t, s, "SELECT * FROM good"); strings.Join(got, ",") != "1970-01-01 00:00:01|42|hot|1970-01-01 00:00:05+00" {
		t.Fatalf("late rows: %v", got)
	}
	// With a checkpoint's epoch the write records it, per view.
	cold := e.lateRowsStore(&catalog.Relation{Name: "cold", OID: 90002}, good.OID)
	if err := hot.Store([]arrow.RecordBatch{rows}, []int64{5_000_000}, 7); err != nil {
		t.Fatal(err)
	}
	if err := cold.Store([]arrow.RecordBatch{rows}, []int64{math.MinInt64}, 3); err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "INSERT INTO good VALUES (NULL, 1, 'user', NULL)") // keeps the record
	h, herr := hot.Stored()
	c, cerr := cold.Stored()
	if h != 7 || c != 3 || herr != nil || cerr != nil {
		t.Fatalf("stored: hot %d %v, cold %d %v", h, herr, c, cerr)
	}
	if got := mustRun(t, s, "SELECT count(*), count(watermark) FROM good WHERE view_name = 'cold'"); strings.Join(got, ",") != "1|0" {
		t.Fatalf("cold's rows: %v", got)
	}
	if _, _, err := run(t, s, "DROP MATERIALIZED VIEW mv; DROP TABLE good"); err != nil {
		t.Fatal(err)
	}
	if err := hot.Store([]arrow.RecordBatch{rows}, []int64{5_000_000}, 0); err == nil {
		t.Fatal("wrote into a dropped table")
	}
	_ = catalog.KindTable
}
