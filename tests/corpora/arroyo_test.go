package corpora

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/tests/harness"
	"github.com/streamsql/streamsql/tests/slt"
)

// minArroyoPassed is the Arroyo pass count last recorded in README.md.
const minArroyoPassed = 11

// TestArroyoSuite runs ../shared/corpora/arroyo's queries (translated by
// TranslateArroyo) over the wire on fresh in-process servers: it creates
// the sources and the sink's materialized view, waits until the finite
// files are read (FLUSH), closes the windows still open by advancing the
// manual clock past every idle_timeout (Arroyo closes them at the end of
// its input), reads the view and compares its rows with the golden output
// order-insensitively (timestamps and numbers normalised; a Debezium
// golden is replayed to its final state). Queries listed in skip.txt (at
// line 1) are skipped with their reason. It fails when fewer than
// minArroyoPassed pass.
func TestArroyoSuite(t *testing.T) {
	root := os.Getenv("STREAMSQL_CORPORA")
	if root == "" {
		root = filepath.Join("..", "..", "..", "shared", "corpora")
	}
	dir, err := filepath.Abs(filepath.Join(root, "arroyo"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "queries", "*.sql"))
	if len(files) == 0 {
		t.Skipf("arroyo corpus not found at %s", dir)
	}
	skip, err := slt.LoadSkipList("skip.txt")
	if err != nil {
		t.Fatal(err)
	}
	passed, failed, skipped := 0, 0, 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		if skip.Has(f, 1) {
			skipped++
			t.Logf("%s: skipped", name)
			continue
		}
		if err := runArroyo(t, dir, f); err != nil {
			failed++
			t.Logf("%s: FAIL: %v", name, err)
			continue
		}
		passed++
		t.Logf("%s: ok", name)
	}
	t.Logf("arroyo: %d passed, %d failed, %d skipped", passed, failed, skipped)
	if passed < minArroyoPassed {
		t.Errorf("%d Arroyo queries passed, fewer than the %d of tests/corpora/README.md", passed, minArroyoPassed)
	}
}

// runArroyo runs one query file and compares its view with the golden output.
func runArroyo(t *testing.T, dir, file string) error {
	src, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	q, err := TranslateArroyo(string(src), filepath.Join(dir, "inputs"))
	if err != nil {
		return fmt.Errorf("translate: %w", err)
	}
	golden, err := os.ReadFile(filepath.Join(dir, "golden_outputs", strings.TrimSuffix(filepath.Base(file), ".sql")+".json"))
	if err != nil {
		return err
	}
	want, err := goldenRows(golden, q.Updating)
	if err != nil {
		return fmt.Errorf("golden: %w", err)
	}
	if len(want) == 0 {
		return fmt.Errorf("golden: no rows")
	}
	srv := harness.Start(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, srv.ConnString())
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	stmts := append(append([]string(nil), q.Setup...), q.Query, "FLUSH")
	if q.Windowed {
		stmts = append(stmts, "ADVANCE CLOCK BY INTERVAL '36500 days'")
	}
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s, pgx.QueryExecModeSimpleProtocol); err != nil {
			if q.Fail != "" && s == q.Query {
				t.Logf("%s: refused as Arroyo refuses it (%s): %v", filepath.Base(file), q.Fail, err)
				return nil
			}
			return fmt.Errorf("%s: %w", firstLine(s), err)
		}
	}
	if q.Fail != "" {
		return fmt.Errorf("accepted, but Arroyo refuses it: %s", q.Fail)
	}
	rows, err := conn.Query(ctx, "SELECT * FROM "+q.View, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return err
	}
	var got []string
	for rows.Next() {
		fields := rows.FieldDescriptions()
		vals := map[string]string{}
		for i, raw := range rows.RawValues() {
			name := fields[i].Name
			if len(q.Cols) == len(fields) {
				name = q.Cols[i]
			}
			v := "NULL"
			if raw != nil {
				v = normValue(string(raw))
			}
			vals[name] = v
		}
		got = append(got, canonRow(vals))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("rows differ:\n%s", diffRows(got, want))
	}
	return nil
}

// goldenRows reads a golden file as canonical rows, sorted; a Debezium
// changelog ({before, after, op}) is replayed to its final rows.
func goldenRows(data []byte, updating bool) ([]string, error) {
	count := map[string]int{}
	var order []string
	add := func(obj map[string]any, n int) {
		vals := map[string]string{}
		for k, v := range obj {
			vals[strings.ToLower(k)] = normJSON(v)
		}
		r := canonRow(vals)
		if _, ok := count[r]; !ok {
			order = append(order, r)
		}
		count[r] += n
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			return nil, err
		}
		if !updating {
			add(obj, 1)
			continue
		}
		if b, ok := obj["before"].(map[string]any); ok {
			add(b, -1)
		}
		if a, ok := obj["after"].(map[string]any); ok {
			add(a, 1)
		}
	}
	var out []string
	for _, r := range order {
		for i := 0; i < count[r]; i++ {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out, nil
}

// canonRow renders a row as name=value pairs in name order.
func canonRow(vals map[string]string) string {
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + "=" + vals[k])
	}
	return b.String()
}

// normJSON normalises a golden JSON value.
func normJSON(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return normValue(x.String())
	case string:
		return normValue(x)
	}
	return fmt.Sprint(v)
}

var timestampLike = regexp.MustCompile(`^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d(:?\d\d)?)?$`)

// normValue normalises a value's text (ours or the golden's): numbers to
// 10 significant digits, booleans to true/false, timestamps to UTC
// "2006-01-02 15:04:05.999999".
func normValue(s string) string {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return strconv.FormatFloat(f, 'g', 10, 64)
	}
	switch s {
	case "t", "true":
		return "true"
	case "f", "false":
		return "false"
	}
	if timestampLike.MatchString(s) {
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999",
			"2006-01-02 15:04:05.999999999Z07", "2006-01-02 15:04:05.999999999Z07:00"} {
			if ts, err := time.Parse(layout, s); err == nil {
				return ts.UTC().Format("2006-01-02 15:04:05.999999")
			}
		}
	}
	return s
}

// diffRows lists the rows only one side has (at most 10 each).
func diffRows(got, want []string) string {
	var b strings.Builder
	only := func(a, b2 []string) []string {
		var out []string
		rest := append([]string(nil), b2...)
		for _, r := range a {
			if i := slices.Index(rest, r); i >= 0 {
				rest = slices.Delete(rest, i, i+1)
			} else {
				out = append(out, r)
			}
		}
		return out
	}
	g, w := only(got, want), only(want, got)
	fmt.Fprintf(&b, "  %d rows, want %d; %d unexpected, %d missing\n", len(got), len(want), len(g), len(w))
	for i, r := range g {
		if i == 10 {
			break
		}
		fmt.Fprintf(&b, "  + %s\n", r)
	}
	for i, r := range w {
		if i == 10 {
			break
		}
		fmt.Fprintf(&b, "  - %s\n", r)
	}
	return b.String()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

func TestTranslateArroyo(t *testing.T) {
	src := `--pk=k
CREATE TABLE ev (timestamp TIMESTAMP NOT NULL, k BIGINT UNSIGNED, x DOUBLE) WITH (
  connector = 'single_file', path = '$input_dir/ev.json', format = 'json', type = 'source', event_time_field = 'timestamp');
CREATE TABLE out (hour TIMESTAMP, n BIGINT) WITH (connector = 'single_file', path = '$output_path', format = 'json', type = 'sink');
INSERT INTO out SELECT a.window.start, n FROM (
  SELECT k, HOP(INTERVAL '1' minute, INTERVAL '1' hour) AS window, count(*) AS n FROM ev WHERE k > 1 GROUP BY 1, 2) a
JOIN (SELECT TUMBLE(INTERVAL '1' hour) AS window, count(*) AS m FROM ev GROUP BY window) b ON a.window = b.window`
	q, err := TranslateArroyo(src, "/in")
	if err != nil {
		t.Fatal(err)
	}
	wantSetup := `CREATE SOURCE ev ("timestamp" timestamp, "k" bigint, "x" double precision, WATERMARK FOR "timestamp" AS "timestamp" - INTERVAL '1 second' WITH (idle_timeout = '1s')) WITH (connector = 'file', path = '/in/ev.json', format = 'json')`
	if len(q.Setup) != 1 || q.Setup[0] != wantSetup {
		t.Errorf("setup %q", q.Setup)
	}
	for _, want := range []string{
		"SELECT a.window_start, n FROM",
		`SELECT k, window_start AS window_start, window_end AS window_end, count(*) AS n FROM HOP((SELECT * FROM ev WHERE k > 1), "timestamp", INTERVAL '1' minute, INTERVAL '1' hour) GROUP BY k, window_start, window_end`,
		`FROM TUMBLE(ev, "timestamp", INTERVAL '1' hour) GROUP BY window_start, window_end`,
		"ON (a.window_start = b.window_start AND a.window_end = b.window_end)",
		"EMIT ON WINDOW CLOSE",
	} {
		if !strings.Contains(q.Query, want) {
			t.Errorf("query lacks %q:\n%s", want, q.Query)
		}
	}
	if q.View != "out" || !slices.Equal(q.Cols, []string{"hour", "n"}) || q.Updating || !q.Windowed || q.PK != "k" {
		t.Errorf("%+v", q)
	}
}

func TestGoldenRowsReplaysDebezium(t *testing.T) {
	data := `{"before":null,"after":{"k":1,"n":1},"op":"c"}
{"before":{"k":1,"n":1},"after":{"k":1,"n":2},"op":"u"}
{"before":null,"after":{"k":2,"n":5,"ts":"2023-10-09T17:13:40.200"},"op":"c"}
{"before":{"k":2,"n":5,"ts":"2023-10-09T17:13:40.2+00:00"},"after":null,"op":"d"}`
	got, err := goldenRows([]byte(data), true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"k=1, n=2"}) {
		t.Fatalf("%q", got)
	}
	if normValue("2023-10-09 17:13:40.2") != normValue("2023-10-09T17:13:40.200") || normValue("49.5000000000000000") != normValue("49.5") {
		t.Fatal("normValue")
	}
}
