package clients

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestBIMetadataQueries runs the metadata queries of Grafana's and
// Metabase's PostgreSQL data sources (testdata/bi_queries.sql) over the
// objects of testdata/psql_describe.sql, through pgx in both the simple and
// the extended protocol, against streamsql and PostgreSQL, and compares
// the rows (the database's name aside).
func TestBIMetadataQueries(t *testing.T) {
	setup := statements(t, "psql_describe.sql")
	queries := statements(t, "bi_queries.sql")
	session := func(tg target) string {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := pgx.Connect(ctx, tg.url())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		for _, q := range setup {
			if _, err := conn.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		var out []string
		for i, q := range queries {
			for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
				rows, err := conn.Query(ctx, q, mode)
				if err != nil {
					t.Fatalf("query %d: %v", i+1, err)
				}
				out = append(out, fmt.Sprintf("query %d %v", i+1, mode))
				for rows.Next() {
					var fields []string
					for _, raw := range rows.RawValues() {
						if raw == nil {
							fields = append(fields, "NULL")
						} else {
							fields = append(fields, string(raw))
						}
					}
					if mode == pgx.QueryExecModeSimpleProtocol {
						out = append(out, strings.Join(fields, "|"))
					}
				}
				if err := rows.Err(); err != nil {
					t.Errorf("query %d %v: %v\n%s", i+1, mode, err, q)
				}
			}
		}
		return strings.ReplaceAll(strings.Join(out, "\n"), tg.db, "<db>") + "\n"
	}
	ours := session(streamsqlTarget(t))
	var pgOut string
	pg, live := postgresTarget(t)
	if live {
		pgOut = session(pg)
	}
	compareTranscripts(t, "bi", ours, pgOut, live, nil)
}

// statements reads testdata/name: SQL statements ending with ";" at the end
// of a line, psql meta-commands and comments left out.
func statements(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	cur := ""
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "--") || strings.HasPrefix(l, `\`) || strings.TrimSpace(l) == "" {
			continue
		}
		cur += l + "\n"
		if strings.HasSuffix(strings.TrimSpace(l), ";") {
			out = append(out, strings.TrimSpace(cur))
			cur = ""
		}
	}
	return out
}

// TestGrafanaTimeSeries is a Grafana time-series panel over a windowed
// materialized view: random metrics inserted through pgx with parameters,
// FLUSH, then Grafana's query shape with timestamptz parameters through
// pgx's statement cache (as its postgres data source runs it), compared
// with the averages computed here from the rows inserted.
func TestGrafanaTimeSeries(t *testing.T) {
	tg := streamsqlTarget(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, tg.url())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.Ping(ctx); err != nil { // Grafana's health check: "-- ping"
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE metrics (ts timestamptz NOT NULL, host text NOT NULL, load double precision NOT NULL)",
		"CREATE MATERIALIZED VIEW v AS SELECT window_start, host, avg(load) AS load" +
			" FROM TUMBLE(metrics, ts, INTERVAL '1 minute') GROUP BY window_start, host",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	sums, counts := map[key]float64{}, map[key]int{}
	rng := rand.New(rand.NewSource(42))
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	hosts := []string{"web-1", "web-2", "db-1"}
	batch := &pgx.Batch{}
	for i := 0; i < 3000; i++ {
		ts := base.Add(time.Duration(rng.Int63n(int64(90 * time.Minute))))
		host := hosts[rng.Intn(len(hosts))]
		load := math.Round(rng.Float64()*1000) / 100
		batch.Queue("INSERT INTO metrics VALUES ($1, $2, $3)", ts, host, load)
		k := key{ts.Truncate(time.Minute), host}
		sums[k] += load
		counts[k]++
	}
	if err := conn.SendBatch(ctx, batch).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "FLUSH"); err != nil {
		t.Fatal(err)
	}
	const q = "SELECT window_start AS time, host, load FROM v WHERE window_start BETWEEN $1 AND $2 ORDER BY 1"
	for _, r := range [][2]time.Duration{{0, 90 * time.Minute}, {10 * time.Minute, 25 * time.Minute}, {30*time.Minute + 30*time.Second, 31 * time.Minute}, {2 * time.Hour, 3 * time.Hour}} {
		from, to := base.Add(r[0]), base.Add(r[1])
		var want []string
		for k, s := range sums {
			if !k.start.Before(from) && !k.start.After(to) {
				want = append(want, fmt.Sprintf("%s %s %.9f", k.start.Format(time.RFC3339), k.host, s/float64(counts[k])))
			}
		}
		for run := 0; run < 2; run++ { // the second run reuses pgx's cached statement
			rows, err := conn.Query(ctx, q, from, to)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			var last time.Time
			for rows.Next() {
				var at time.Time
				var host string
				var load float64
				if err := rows.Scan(&at, &host, &load); err != nil {
					t.Fatal(err)
				}
				if at.Before(last) {
					t.Errorf("rows not ordered by time: %v after %v", at, last)
				}
				last = at
				got = append(got, fmt.Sprintf("%s %s %.9f", at.UTC().Format(time.RFC3339), host, load))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%v..%v: got %d rows, want %d:\n%s", from, to, len(got), len(want), lineDiff(strings.Join(want, "\n"), strings.Join(got, "\n")))
			}
		}
	}
	// Grafana's macros written out: $__timeFilter as literal timestamps and
	// $__timeGroupAlias(ts, 1m) over the table give the view's rows too.
	from, to := base.Add(10*time.Minute), base.Add(25*time.Minute)
	macro := fmt.Sprintf(`SELECT floor(extract(epoch from ts)/60)*60 AS "time", host, avg(load) AS load FROM metrics`+
		` WHERE ts >= '%s' AND ts < '%s' GROUP BY 1, 2 ORDER BY 1, 2`, from.Format(time.RFC3339), to.Add(time.Minute).Format(time.RFC3339))
	rows, err := conn.Query(ctx, macro, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var epoch float64
		var host string
		var load float64
		if err := rows.Scan(&epoch, &host, &load); err != nil {
			t.Fatal(err)
		}
		k := key{time.Unix(int64(epoch), 0).UTC(), host}
		if want := sums[k] / float64(counts[k]); math.Abs(load-want) > 1e-9 {
			t.Errorf("time group %v %s: %v, want %v", k.start, host, load, want)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := countKeys(sums, from, to); n != want {
		t.Errorf("time groups: %d rows, want %d", n, want)
	}
	// Grafana's second connection interpolates on the client (simple protocol).
	simple, err := pgx.Connect(ctx, tg.url()+"&default_query_exec_mode=simple_protocol")
	if err != nil {
		t.Fatal(err)
	}
	defer simple.Close(ctx)
	var s string
	if err := simple.QueryRow(ctx, "SELECT $1::text", "x").Scan(&s); err != nil || s != "x" {
		t.Fatalf("simple protocol: %q %v", s, err)
	}
}

// key is a window and host of TestGrafanaTimeSeries.
type key struct {
	start time.Time
	host  string
}

// countKeys counts the windows starting within [from, to].
func countKeys(sums map[key]float64, from, to time.Time) int {
	n := 0
	for k := range sums {
		if !k.start.Before(from) && !k.start.After(to) {
			n++
		}
	}
	return n
}
