package sql

import (
	"reflect"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// parseOne parses q, which must hold exactly one statement.
func parseOne(t *testing.T, q string) Statement {
	t.Helper()
	stmts, err := Parse(q)
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	if len(stmts) != 1 {
		t.Fatalf("%q: %d statements", q, len(stmts))
	}
	return stmts[0]
}

func columnNames(t *testing.T, st Statement) []string {
	t.Helper()
	cs := st.AST.GetCreateStmt()
	if st.Ext != nil && st.Ext.Source != nil {
		if st.AST != nil {
			t.Fatalf("%q: CREATE SOURCE has an AST", st.Source)
		}
		cs = st.Ext.Source.Stmt
	}
	if cs == nil {
		t.Fatalf("%q: AST is %T, want CreateStmt", st.Source, st.AST.GetNode())
	}
	var names []string
	for _, e := range cs.TableElts {
		names = append(names, e.GetColumnDef().GetColname())
	}
	return names
}

func TestCreateTableWatermark(t *testing.T) {
	for _, tc := range []struct {
		q, col, expr string
		cols         []string
		appendOnly   bool
		idle         string
	}{
		{"CREATE TABLE bids (auction BIGINT, ts TIMESTAMP,\n WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) APPEND ONLY",
			"ts", "ts - INTERVAL '5' SECOND", []string{"auction", "ts"}, true, ""},
		{"create table t (watermark for \"TS\" as \"TS\" - interval '1 minute', \"TS\" timestamp, v int)",
			"TS", `"TS" - interval '1 minute'`, []string{"TS", "v"}, false, ""},
		{"CREATE TABLE m (ts timestamptz, WATERMARK FOR ts AS ts WITH (idle_timeout = '10s'))",
			"ts", "ts", []string{"ts"}, false, "10s"},
		{"CREATE TABLE IF NOT EXISTS s.t (a int, PRIMARY KEY (a)) append only", "", "", []string{"a", ""}, true, ""},
	} {
		st := parseOne(t, tc.q)
		if got := columnNames(t, st); strings.Join(got, ",") != strings.Join(tc.cols, ",") {
			t.Errorf("%q: columns %v, want %v", tc.q, got, tc.cols)
		}
		if st.Ext == nil || st.Ext.AppendOnly != tc.appendOnly {
			t.Errorf("%q: ext %+v, want append only %v", tc.q, st.Ext, tc.appendOnly)
			continue
		}
		w := st.Ext.Watermark
		if tc.col == "" {
			if w != nil {
				t.Errorf("%q: unexpected watermark %+v", tc.q, w)
			}
			continue
		}
		if w == nil || w.Column != tc.col || w.Expr != tc.expr || tc.q[w.ExprPos:w.ExprPos+len(w.Expr)] != w.Expr {
			t.Errorf("%q: watermark %+v", tc.q, w)
			continue
		}
		if v, _ := w.Options.Get("idle_timeout"); v != tc.idle {
			t.Errorf("%q: idle_timeout %q", tc.q, v)
		}
		if !strings.HasPrefix(tc.q[w.Pos:], "WATERMARK") && !strings.HasPrefix(tc.q[w.Pos:], "watermark") {
			t.Errorf("%q: Pos %d", tc.q, w.Pos)
		}
	}
}

func TestCreateSource(t *testing.T) {
	q := "CREATE SOURCE IF NOT EXISTS metrics (host TEXT, cpu DOUBLE PRECISION, ts TIMESTAMPTZ,\n" +
		"  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND WITH (idle_timeout = '10s'))\n" +
		"  WITH (Connector = 'kafka', topic = 'it''s', properties.bootstrap.server = '127.0.0.1:9092', n = 5) FORMAT JSON"
	st := parseOne(t, q)
	if got := strings.Join(columnNames(t, st), ","); got != "host,cpu,ts" {
		t.Fatalf("columns %s", got)
	}
	if rel := st.Ext.Source.Stmt.Relation; rel.Relname != "metrics" || int(rel.Location) != strings.Index(q, "metrics") {
		t.Errorf("relation %+v", rel)
	}
	e := st.Ext
	if e.Kind != KindCreateSource || e.Source.Name != "metrics" || !e.Source.IfNotExists || e.Source.Format != "JSON" {
		t.Fatalf("ext %+v source %+v", e, e.Source)
	}
	want := map[string]string{"connector": "kafka", "topic": "it's", "properties.bootstrap.server": "127.0.0.1:9092", "n": "5"}
	for k, v := range want {
		if got, ok := e.Source.Options.Get(k); !ok || got != v {
			t.Errorf("option %s = %q, want %q", k, got, v)
		}
	}
	if len(e.Source.Options) != len(want) || e.Watermark == nil || e.Watermark.Expr != "ts - INTERVAL '2' SECOND" {
		t.Errorf("options %+v watermark %+v", e.Source.Options, e.Watermark)
	}

	st = parseOne(t, "CREATE SOURCE nexmark WITH (connector = 'nexmark', events_per_second = '100000')")
	if len(columnNames(t, st)) != 0 || st.Ext.Source.Name != "nexmark" {
		t.Errorf("no-column source: %+v", st.Ext.Source)
	}
	if v, _ := st.Ext.Source.Options.Get("events_per_second"); v != "100000" {
		t.Errorf("events_per_second %q", v)
	}

	q = "CREATE SOURCE s (id BIGINT, p STRUCT<\"id\" BIGINT, inner STRUCT<a INT, b INT>>, z INT) WITH (connector = 'x') FORMAT PLAIN ENCODE JSON"
	st = parseOne(t, q)
	if got := strings.Join(columnNames(t, st), ","); got != "id,p,z" {
		t.Fatalf("struct columns %s", got)
	}
	s := st.Ext.Structs
	if len(s) != 1 || s[0].Fields != `"id" BIGINT, inner STRUCT<a INT, b INT>` || q[s[0].FieldsPos:s[0].FieldsPos+3] != `"id` {
		t.Errorf("structs %+v", s)
	}
	if st.Ext.Source.Format != "PLAIN" || st.Ext.Source.Encode != "JSON" {
		t.Errorf("format %+v", st.Ext.Source)
	}
}

func TestCreateSourceInclude(t *testing.T) {
	q := "CREATE SOURCE s (v int) INCLUDE partition AS p, offset INCLUDE timestamp AS \"Ts\", key " +
		"WITH (connector = 'kafka') FORMAT PLAIN ENCODE JSON"
	st := parseOne(t, q)
	inc := st.Ext.Source.Include
	want := []Include{{"partition", "p", strings.Index(q, "partition")}, {"offset", "", strings.Index(q, "offset")},
		{"timestamp", "Ts", strings.Index(q, "timestamp")}, {"key", "", strings.Index(q, "key")}}
	if !reflect.DeepEqual(inc, want) {
		t.Fatalf("include %+v, want %+v", inc, want)
	}
	if got := strings.Join(columnNames(t, st), ","); got != "v" {
		t.Fatalf("columns %s", got)
	}
	for _, q := range []string{
		"CREATE SOURCE s (v int) INCLUDE WITH (connector = 'kafka')",
		"CREATE SOURCE s (v int) INCLUDE key AS WITH (connector = 'kafka')",
		"CREATE SOURCE s (v int) INCLUDE key, WITH (connector = 'kafka')",
		"CREATE SOURCE s (v int) WITH (connector = 'kafka') INCLUDE key",
	} {
		if _, err := Parse(q); pgerr.CodeOf(err) != pgerr.SyntaxError {
			t.Errorf("%q: %v, want a syntax error", q, err)
		}
	}
}

func TestCreateTableConnector(t *testing.T) {
	for _, tc := range []struct{ q, format, encode string }{
		{"CREATE TABLE t (id int PRIMARY KEY, v text) WITH (connector = 'kafka', topic = 't') FORMAT UPSERT ENCODE JSON", "UPSERT", "JSON"},
		{"CREATE TABLE t (v text) APPEND ONLY INCLUDE offset AS o WITH (connector = 'kafka', properties.bootstrap.server = 'h:1') FORMAT JSON", "JSON", ""},
		{"CREATE TABLE t (v text) WITH (connector = 'kafka')", "", ""},
	} {
		st := parseOne(t, tc.q)
		c := st.Ext.TableConnector
		if st.AST == nil || c == nil || c.Format != tc.format || c.Encode != tc.encode {
			t.Errorf("%q: %+v", tc.q, c)
			continue
		}
		if v, _ := c.Options.Get("connector"); v != "kafka" {
			t.Errorf("%q: options %+v", tc.q, c.Options)
		}
	}
	if st := parseOne(t, "CREATE TABLE t (v text) WITH (fillfactor = 70)"); st.Ext != nil && st.Ext.TableConnector != nil {
		t.Errorf("storage parameters taken for a connector")
	}
	for _, q := range []string{
		"CREATE TABLE t (v text) FORMAT JSON",
		"CREATE TABLE t (v text) INCLUDE offset",
	} {
		_, err := Parse(q)
		if e := pgerr.As(err); e == nil || e.Code != pgerr.SyntaxError {
			t.Errorf("%q: %v", q, err)
		}
	}
}

func TestCreateSink(t *testing.T) {
	for _, tc := range []struct{ q, from, query string }{
		{"CREATE SINK out FROM hot WITH (connector = 'kafka', topic = 'hot') FORMAT JSON", "hot", ""},
		{"CREATE SINK out FROM (SELECT a FROM hot WHERE a > 1) WITH (connector = 'kafka')", "", "SELECT a FROM hot WHERE a > 1"},
		{"CREATE SINK out AS WITH x AS (SELECT 1 AS a) SELECT a FROM x\nWITH ( connector = 'blackhole', type = 'append-only')", "",
			"WITH x AS (SELECT 1 AS a) SELECT a FROM x"},
		{"CREATE SINK out AS SELECT * FROM TUMBLE(bid, ts, INTERVAL '10' SECOND) EMIT ON WINDOW CLOSE WITH (connector = 'blackhole')", "",
			"SELECT * FROM TUMBLE(bid, ts, INTERVAL '10' SECOND)"},
	} {
		st := parseOne(t, tc.q)
		sk := st.Ext.Sink
		if st.Ext.Kind != KindCreateSink || sk.Name != "out" || sk.From != tc.from || sk.Query != tc.query {
			t.Errorf("%q: sink %+v", tc.q, sk)
			continue
		}
		if sk.Query != "" && tc.q[sk.QueryPos:sk.QueryPos+len(sk.Query)] != sk.Query {
			t.Errorf("%q: QueryPos %d", tc.q, sk.QueryPos)
		}
		if _, ok := sk.Options.Get("connector"); !ok {
			t.Errorf("%q: options %+v", tc.q, sk.Options)
		}
		sel := sk.Stmt.GetSelectStmt()
		if sel == nil || st.AST != nil {
			t.Errorf("%q: AST %v, query %v", tc.q, st.AST, sk.Stmt)
			continue
		}
		if tc.from != "" {
			rv := sel.FromClause[0].GetRangeVar()
			if rv.GetRelname() != tc.from || int(rv.GetLocation()) != strings.Index(tc.q, "hot") {
				t.Errorf("%q: TABLE target %+v", tc.q, rv)
			}
		}
	}
	if st := parseOne(t, "CREATE SINK out AS SELECT 1 EMIT ON WINDOW CLOSE WITH (a = 'b')"); st.Ext.Emit == nil {
		t.Errorf("sink EMIT not lifted")
	}
}

func TestEmit(t *testing.T) {
	const base = "CREATE MATERIALIZED VIEW v AS SELECT window_end, count(*) FROM TUMBLE(t, ts, INTERVAL '1' MINUTE) GROUP BY window_end "
	for _, tc := range []struct {
		clause                              string
		mode                                EmitMode
		written                             string
		delay, early, lateness, every, into string
	}{
		{"EMIT ON UPDATE", EmitOnUpdate, "EMIT ON UPDATE", "", "", "", "", ""},
		{"emit changes", EmitOnUpdate, "EMIT CHANGES", "", "", "", "", ""},
		{"EMIT ON WINDOW CLOSE", EmitOnWindowClose, "EMIT ON WINDOW CLOSE", "", "", "", "", ""},
		{"EMIT ON WINDOW CLOSE WITH DELAY INTERVAL '5' SECOND EARLY EVERY '1 second'\n ALLOW LATENESS INTERVAL '1 minute' LATE ROWS INTO public.\"Late\"",
			EmitOnWindowClose, "EMIT ON WINDOW CLOSE", "INTERVAL '5' SECOND", "'1 second'", "INTERVAL '1 minute'", "", "public.Late"},
		{"EMIT ON WINDOW CLOSE LATE ROWS INTO l ALLOW LATENESS INTERVAL '1' DAY TO SECOND", EmitOnWindowClose, "EMIT ON WINDOW CLOSE",
			"", "", "INTERVAL '1' DAY TO SECOND", "", "l"},
		{"EMIT FINAL", EmitOnWindowClose, "EMIT FINAL", "", "", "", "", ""},
		{"EMIT AFTER WATERMARK WITH DELAY '2 seconds'", EmitOnWindowClose, "EMIT AFTER WATERMARK", "'2 seconds'", "", "", "", ""},
		{"EMIT EVERY INTERVAL '10' SECOND", EmitEvery, "EMIT EVERY", "", "", "", "INTERVAL '10' SECOND", ""},
	} {
		q := base + tc.clause + ";"
		st := parseOne(t, q)
		if st.AST.GetCreateTableAsStmt() == nil {
			t.Errorf("%q: AST %T", tc.clause, st.AST.GetNode())
		}
		e := st.Ext.Emit
		if e == nil || e.Mode != tc.mode || e.Written != tc.written || e.Delay.Text != tc.delay ||
			e.EarlyEvery.Text != tc.early || e.AllowLateness.Text != tc.lateness || e.Every.Text != tc.every ||
			e.LateRowsInto != tc.into || e.Pos != len(base) {
			t.Errorf("%q: emit %+v", tc.clause, e)
			continue
		}
		for _, iv := range []Interval{e.Delay, e.EarlyEvery, e.AllowLateness, e.Every} {
			if iv.Text != "" && q[iv.Pos:iv.Pos+len(iv.Text)] != iv.Text {
				t.Errorf("%q: interval %+v misplaced", tc.clause, iv)
			}
		}
	}
	// A plain SELECT may end with EMIT too; so may EXPLAIN of a view.
	if st := parseOne(t, "SELECT * FROM t EMIT ON WINDOW CLOSE"); st.Ext.Emit == nil || st.AST.GetSelectStmt() == nil {
		t.Errorf("SELECT ... EMIT not lifted")
	}
	if st := parseOne(t, "EXPLAIN CREATE MATERIALIZED VIEW v AS SELECT 1 EMIT CHANGES"); st.Ext.Emit == nil || st.AST.GetExplainStmt() == nil {
		t.Errorf("EXPLAIN ... EMIT not lifted")
	}
	// "emit" as an ordinary name is left alone.
	for _, q := range []string{"SELECT emit FROM t", "SELECT 1 AS emit", "SELECT * FROM a JOIN b emit ON a.x = emit.x"} {
		if st := parseOne(t, q); st.Ext != nil {
			t.Errorf("%q: lifted %+v", q, st.Ext)
		}
	}
}

func TestSubscribe(t *testing.T) {
	for _, tc := range []struct {
		q, target, query, wrapper string
		snapshot, progress        bool
	}{
		{"SUBSCRIBE TO hot", "hot", "", "", true, false},
		{"subscribe hot WITH (snapshot = false, progress = true)", "hot", "", "", false, true},
		{"SUBSCRIBE TO (SELECT a FROM hot EMIT CHANGES) WITH (progress = on)", "", "SELECT a FROM hot", "", true, true},
		{"DECLARE c CURSOR FOR SUBSCRIBE TO hot", "hot", "", "DECLARE", true, false},
		{"COPY (SUBSCRIBE TO hot WITH (snapshot = false)) TO STDOUT", "hot", "", "COPY", false, false},
	} {
		st := parseOne(t, tc.q)
		s := st.Ext.Subscribe
		if st.Ext.Kind != KindSubscribe || s.Target != tc.target || s.Query != tc.query || s.Wrapper != tc.wrapper ||
			s.Snapshot != tc.snapshot || s.Progress != tc.progress {
			t.Errorf("%q: %+v", tc.q, s)
			continue
		}
		if st.AST != nil {
			t.Errorf("%q: has an AST", tc.q)
		}
		switch tc.wrapper {
		case "":
			if s.Outer != nil {
				t.Errorf("%q: outer %v", tc.q, s.Outer)
			}
		case "DECLARE":
			d := s.Outer.GetDeclareCursorStmt()
			if d.GetPortalname() != "c" || s.Cursor != "c" {
				t.Errorf("%q: cursor %q / %q", tc.q, d.GetPortalname(), s.Cursor)
			}
		case "COPY":
			if c := s.Outer.GetCopyStmt(); c == nil || c.Query != s.Stmt {
				t.Errorf("%q: outer %v", tc.q, s.Outer)
			}
		}
		sel := s.Stmt.GetSelectStmt()
		if sel == nil || len(sel.FromClause) != 1 {
			t.Errorf("%q: query %v", tc.q, s.Stmt)
			continue
		}
		if tc.target != "" && int(sel.FromClause[0].GetRangeVar().GetLocation()) != strings.Index(tc.q, "hot") {
			t.Errorf("%q: target location %d", tc.q, sel.FromClause[0].GetRangeVar().GetLocation())
		}
	}
	if st := parseOne(t, "SUBSCRIBE TO (SELECT a FROM hot EMIT CHANGES)"); st.Ext.Emit == nil || st.Ext.Emit.Written != "EMIT CHANGES" {
		t.Errorf("EMIT inside SUBSCRIBE not lifted: %+v", st.Ext)
	}
}

func TestStandaloneStatements(t *testing.T) {
	for _, tc := range []struct {
		q    string
		kind Kind
		show string
		drop Drop
	}{
		{"FLUSH", KindFlush, "", Drop{}},
		{"show sources", KindShow, "SOURCES", Drop{}},
		{"SHOW SINKS", KindShow, "SINKS", Drop{}},
		{"SHOW TABLES", KindShow, "TABLES", Drop{}},
		{"SHOW MATERIALIZED VIEWS", KindShow, "MATERIALIZED VIEWS", Drop{}},
		{"DROP SOURCE IF EXISTS s.\"Src\" CASCADE", KindDropSource, "", Drop{Name: "s.Src", NamePos: 22, IfExists: true, Cascade: true}},
		{"drop sink k", KindDropSink, "", Drop{Name: "k", NamePos: 10}},
		{"DROP SOURCE a, B ,c", KindDropSource, "", Drop{Name: "a", NamePos: 12, Names: []string{"a", "b", "c"}, NamePositions: []int{12, 15, 18}}},
		{"ALTER MATERIALIZED VIEW s.mv RESUME", KindResume, "", Drop{Name: "s.mv", NamePos: 24}},
		{"alter materialized view if exists \"V\" resume", KindResume, "", Drop{Name: "V", NamePos: 34, IfExists: true}},
	} {
		st := parseOne(t, " "+tc.q+" ")
		if st.AST != nil || st.Ext == nil || st.Ext.Kind != tc.kind || st.Ext.Show != tc.show || st.Text() != tc.q {
			t.Errorf("%q: %+v ext %+v", tc.q, st, st.Ext)
			continue
		}
		if tc.drop.Names == nil {
			tc.drop.Names, tc.drop.NamePositions = []string{tc.drop.Name}, []int{tc.drop.NamePos}
		}
		want := tc.drop
		want.NamePos++
		want.NamePositions = nil
		for _, p := range tc.drop.NamePositions {
			want.NamePositions = append(want.NamePositions, p+1)
		}
		if tc.drop.Name != "" && !reflect.DeepEqual(*st.Ext.Drop, want) {
			t.Errorf("%q: drop %+v", tc.q, st.Ext.Drop)
		}
	}
	// SET of the RisingWave session variables is PostgreSQL's SET.
	for _, q := range []string{"SET RW_IMPLICIT_FLUSH TO true", "set streaming_parallelism = 1", "SHOW search_path"} {
		st := parseOne(t, q)
		if st.Ext != nil || (st.AST.GetVariableSetStmt() == nil && st.AST.GetVariableShowStmt() == nil) {
			t.Errorf("%q: %v ext %+v", q, st.AST, st.Ext)
		}
	}
}

func TestQuotedKeywordsLiftNothing(t *testing.T) {
	for _, q := range []string{
		"SELECT 'EMIT ON UPDATE'",
		"SELECT 'it''s EMIT CHANGES'",
		"SELECT E'\\' EMIT ON UPDATE'",
		"SELECT $$ APPEND ONLY $$, $tag$ FLUSH $x$ $tag$",
		"SELECT 1 -- EMIT ON UPDATE",
		"SELECT /* outer /* EMIT CHANGES */ still comment */ 1",
		`SELECT "EMIT" FROM "TABLE"`,
		"CREATE TABLE t (a text DEFAULT 'WATERMARK FOR a AS a', \"append\" int)",
		"SELECT * FROM t FOR UPDATE",
		"SELECT INTERVAL '1' minutes", // PostgreSQL: the alias "minutes"
	} {
		st := parseOne(t, q)
		if st.Ext != nil {
			t.Errorf("%q: lifted %+v", q, st.Ext)
		}
		if st.AST == nil {
			t.Errorf("%q: no AST", q)
		}
	}
}

func TestSeveralStatements(t *testing.T) {
	q := "FLUSH; CREATE TABLE t (a int, ts timestamp, WATERMARK FOR ts AS ts) APPEND ONLY;\n" +
		"SELECT 'x;y' EMIT CHANGES; SHOW SOURCES; SUBSCRIBE hot; SELECT 2"
	stmts, err := Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		text string
		kind Kind
		ast  bool
	}{
		{"FLUSH", KindFlush, false},
		{"CREATE TABLE t (a int, ts timestamp, WATERMARK FOR ts AS ts) APPEND ONLY", "", true},
		{"SELECT 'x;y' EMIT CHANGES", "", true},
		{"SHOW SOURCES", KindShow, false},
		{"SUBSCRIBE hot", KindSubscribe, false},
		{"SELECT 2", "", true},
	}
	if len(stmts) != len(want) {
		t.Fatalf("%d statements", len(stmts))
	}
	for i, w := range want {
		s := stmts[i]
		kind := Kind("")
		if s.Ext != nil {
			kind = s.Ext.Kind
		}
		if s.Text() != w.text || kind != w.kind || (s.AST != nil) != w.ast {
			t.Errorf("stmt %d: %q kind %q ast %v", i, s.Text(), kind, s.AST != nil)
		}
	}
	if !stmts[1].Ext.AppendOnly || stmts[2].Ext.Emit == nil || stmts[5].Ext != nil || stmts[4].Ext.Subscribe.Stmt == nil {
		t.Errorf("extensions attached to the wrong statements")
	}
}

func TestFlinkWindowForm(t *testing.T) {
	for _, q := range []string{
		"SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(date_time), INTERVAL '10' SECOND))",
		"SELECT * FROM TABLE(\n  HOP(TABLE bid, DESCRIPTOR(date_time), INTERVAL '2' SECOND, INTERVAL '10' SECOND)) AS w",
		"SELECT * FROM TABLE(CUMULATE(DATA => TABLE bid, TIMECOL => DESCRIPTOR(date_time), STEP => INTERVAL '2' SECOND, SIZE => INTERVAL '10' SECOND))",
		"SELECT * FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND)",
		"SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(date_time), INTERVAL '10' MINUTES))",
		"SELECT * FROM HOP(bid, date_time, slide => INTERVAL '2' SECOND, size => INTERVAL '10' SECOND)",
	} {
		st := parseOne(t, q)
		rf := st.AST.GetSelectStmt().FromClause[0].GetRangeFunction()
		if rf == nil {
			t.Errorf("%q: not a RangeFunction", q)
			continue
		}
		fc := rf.Functions[0].GetList().Items[0].GetFuncCall()
		args := fc.Args
		first := args[0]
		if na := first.GetNamedArgExpr(); na != nil {
			first = na.Arg
		}
		ref := first.GetColumnRef()
		if ref == nil || ref.Fields[0].GetString_().Sval != "bid" || int(ref.Location) != strings.Index(q, "bid") {
			t.Errorf("%q: first argument %v", q, first)
		}
		second := args[1]
		if na := second.GetNamedArgExpr(); na != nil {
			second = na.Arg
		}
		if ref := second.GetColumnRef(); ref == nil || int(ref.Location) != strings.Index(q, "date_time") {
			t.Errorf("%q: second argument %v", q, second)
		}
		if strings.Contains(q, "MINUTES") {
			// The same typmod as PostgreSQL's INTERVAL '10' MINUTE.
			want := parseOne(t, "SELECT INTERVAL '10' MINUTE").AST.GetSelectStmt().TargetList[0].GetResTarget().Val.GetTypeCast()
			tc := args[2].GetTypeCast()
			if tc == nil || len(tc.TypeName.Typmods) != 1 ||
				tc.TypeName.Typmods[0].GetAConst().GetIval().GetIval() != want.TypeName.Typmods[0].GetAConst().GetIval().GetIval() {
				t.Errorf("%q: third argument %v", q, args[2])
			}
		}
	}
}

func TestTemporalJoinAndSessionFrame(t *testing.T) {
	q := "SELECT * FROM bid B JOIN side FOR SYSTEM_TIME AS OF PROCTIME() S ON B.a = S.k"
	st := parseOne(t, q)
	if tj := st.Ext.TemporalJoins; len(tj) != 1 || tj[0].AsOf != "PROCTIME()" || tj[0].Pos != strings.Index(q, "FOR") {
		t.Errorf("temporal join %+v", tj)
	}
	q = "SELECT first_value(tm) OVER (PARTITION BY bar ORDER BY tm SESSION WITH GAP '10 minutes') FROM t"
	st = parseOne(t, q)
	if sf := st.Ext.SessionFrames; len(sf) != 1 || sf[0].Gap.Text != "'10 minutes'" {
		t.Errorf("session frame %+v", sf)
	}
}

func TestExtensionErrors(t *testing.T) {
	for _, tc := range []struct {
		q, near string // near "" means end of input
		pos     int    // 1-based character position
	}{
		{"SELECT 'é'; CREATE MATERIALIZED VIEW v AS SELECT 1 EMIT ON WINDOW SHUT", "SHUT", 67},
		{"SELECT 1 EMIT ON WINDOW CLOSE WITH DELAY", "", 41},
		{"SELECT 1 EMIT ON WINDOW CLOSE WITH DELAY 5;", "5", 42},
		{"SELECT 1 EMIT ON WINDOW CLOSE WITH DELAY;", ";", 41},
		{"SELECT 1 EMIT CHANGES garbage", "garbage", 23},
		{"SELECT 1 EMIT CHANGES EMIT FINAL", "EMIT", 23},
		{"CREATE SOURCE s WITH (connector 'x')", "'x'", 33},
		{"CREATE SOURCE s (a int)", "", 24},
		{"CREATE TABLE t (a int, WATERMARK FOR a) APPEND ONLY", ")", 39},
		{"CREATE TABLE t (a int, WATERMARK FOR a AS) APPEND ONLY", ")", 42},
		{"CREATE SINK k WITH (a = 'b')", "WITH", 15},
		{"SUBSCRIBE TO hot WITH (snapshot = maybe)", "", 24},
		{"DROP SOURCE s t", "t", 15},
		{"FLUSH ALL", "ALL", 7},
		{"SELECT 1; EMIT CHANGES", "EMIT", 11}, // PostgreSQL's own error
	} {
		_, err := Parse(tc.q)
		e := pgerr.As(err)
		if e == nil || e.Code != pgerr.SyntaxError || e.Position != tc.pos {
			t.Errorf("%q: got %v (%+v)", tc.q, err, e)
			continue
		}
		want := `syntax error at or near "` + tc.near + `"`
		if tc.near == "" {
			want = "syntax error at end of input"
		}
		if tc.q == "SUBSCRIBE TO hot WITH (snapshot = maybe)" {
			want = "snapshot requires a Boolean value"
		}
		if e.Message != want {
			t.Errorf("%q: message %q, want %q", tc.q, e.Message, want)
		}
	}
}

// TestLaterErrorPositionsUnchanged: PostgreSQL's own errors after lifted
// clauses still point into the user's text.
func TestLaterErrorPositionsUnchanged(t *testing.T) {
	for _, tc := range []struct {
		q   string
		pos int
	}{
		{"FLUSH; SELEC 1", 8},
		{"CREATE TABLE t (a int, WATERMARK FOR a AS a) APPEND ONLY; SELECT 'é' FRM t", 74},
		{"SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND)) w WHER x", 77},
		{"CREATE SOURCE s WITH (a = 'b'); SELEC", 33},
		// The lifted 'é' became two spaces; the position still counts characters of the user's text.
		{"CREATE TABLE t (a text, WATERMARK FOR a AS a || 'é') APPEND ONLY; SELEC", 67},
		{"SELECT 1 EMIT EVERY 'é'; SELECT 'é' FRM t", 41},
	} {
		_, err := Parse(tc.q)
		e := pgerr.As(err)
		if e == nil || e.Code != pgerr.SyntaxError || e.Position != tc.pos {
			t.Errorf("%q: got %v (%+v), want position %d", tc.q, err, e, tc.pos)
		}
	}
}

func TestAdvanceClock(t *testing.T) {
	for _, tc := range []struct{ q, text string }{
		{"ADVANCE CLOCK BY INTERVAL '10 seconds'", "INTERVAL '10 seconds'"},
		{"advance clock by interval '5' second;", "interval '5' second"},
		{"ADVANCE CLOCK BY '1 minute'", "'1 minute'"},
	} {
		stmts, err := Parse(tc.q)
		if err != nil || len(stmts) != 1 || stmts[0].Ext == nil || stmts[0].AST != nil {
			t.Fatalf("%q: %v %+v", tc.q, err, stmts)
		}
		x := stmts[0].Ext
		if x.Kind != KindAdvanceClock || x.Advance.Text != tc.text || x.Advance.Pos != strings.Index(strings.ToUpper(tc.q), " BY ")+4 {
			t.Errorf("%q: %+v", tc.q, x)
		}
	}
	for _, q := range []string{"ADVANCE CLOCK", "ADVANCE CLOCK BY 5", "ADVANCE CLOCK BY '1s' now"} {
		if _, err := Parse(q); pgerr.As(err) == nil || pgerr.As(err).Code != pgerr.SyntaxError {
			t.Errorf("%q: got %v, want a syntax error", q, err)
		}
	}
}

// Option keys may have hyphens, as Flink's do (sink.delivery-guarantee),
// written without spaces; "a - b" is still an error.
func TestOptionKeyHyphens(t *testing.T) {
	st := parseOne(t, "CREATE SINK s FROM v WITH (connector = 'kafka', sink.delivery-guarantee = 'at-least-once', sink.topic.replication-factor = 1) FORMAT JSON")
	for k, v := range map[string]string{"sink.delivery-guarantee": "at-least-once", "sink.topic.replication-factor": "1"} {
		if got, ok := st.Ext.Sink.Options.Get(k); !ok || got != v {
			t.Errorf("option %s = %q, want %q (options %+v)", k, got, v, st.Ext.Sink.Options)
		}
	}
	if _, err := Parse("CREATE SINK s FROM v WITH (connector = 'kafka', sink.delivery - guarantee = 'x') FORMAT JSON"); err == nil {
		t.Error("a key with spaces around - was accepted")
	}
}
