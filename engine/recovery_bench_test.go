package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// BenchmarkRecovery measures a restart after CHECKPOINT with a large table
// and six views over it (issue 13): the time until Open returns (the
// server accepts connections then) and the time until every view has
// caught up (a FLUSH after Open returns). The data directory is built once
// (STREAMSQL_RECOVERY_ROWS rows, default 1,000,000; with
// STREAMSQL_RECOVERY_DIR set it is kept there and reused by later runs)
// and copied before each restart, so every iteration recovers the same
// state. The open time is when streamsqld would accept connections (the
// views then recover in the background); the caught-up time includes
// the views' recovery. STREAMSQL_RECOVERY_AFTER rows (default 0) are inserted after the
// checkpoint, for the views to replay.
//
//	go test ./engine -run '^$' -bench Recovery -benchtime 3x -cpuprofile cpu.out
func BenchmarkRecovery(b *testing.B) {
	rows := envInt("STREAMSQL_RECOVERY_ROWS", 1_000_000)
	after := envInt("STREAMSQL_RECOVERY_AFTER", 0)
	src := os.Getenv("STREAMSQL_RECOVERY_DIR")
	if src == "" {
		src = filepath.Join(b.TempDir(), "src")
	}
	if _, err := os.Stat(filepath.Join(src, "done")); err != nil {
		os.RemoveAll(src)
		buildRecoveryDir(b, src, rows, after)
	}
	b.ResetTimer()
	var open, caught, cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "data")
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu0 := cpuTime()
		start := time.Now()
		e, err := Open(recoveryConfig(dir))
		if err != nil {
			b.Fatal(err)
		}
		open += time.Since(start)
		s, err := e.NewSession("tester", "db", nil)
		if err != nil {
			b.Fatal(err)
		}
		benchExec(b, s, "FLUSH")
		caught += time.Since(start)
		cpu += cpuTime() - cpu0
		b.StopTimer()
		if got := benchExec(b, s, "SELECT count(*) FROM enriched"); got != strconv.Itoa(rows+after) {
			b.Fatalf("enriched has %s rows after recovery, want %d", got, rows+after)
		}
		e.Close()
		b.StartTimer()
	}
	b.ReportMetric(open.Seconds()/float64(b.N), "open-s")
	b.ReportMetric(caught.Seconds()/float64(b.N), "caught-up-s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s")
}

// recoveryConfig is the Config BenchmarkRecovery opens with: the views
// recover in the background, as in streamsqld (set by
// recovery_background.go; the file is absent from versions without it).
var recoveryConfig = func(dir string) Config { return Config{DataDir: dir, CheckpointInterval: -1} }

// recoveryViews are BenchmarkRecovery's views: aggregations, joins, a
// top-N.
var recoveryViews = []string{
	"CREATE MATERIALIZED VIEW per_host AS SELECT host, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi FROM ev GROUP BY host",
	"CREATE MATERIALIZED VIEW per_bucket AS SELECT id % 100000 AS b, count(*) AS n, avg(v) AS a FROM ev GROUP BY id % 100000",
	"CREATE MATERIALIZED VIEW enriched AS SELECT e.id, e.v, h.rack FROM ev e JOIN hosts h ON e.host = h.host",
	"CREATE MATERIALIZED VIEW per_rack AS SELECT h.rack, count(*) AS n, sum(e.v) AS s FROM ev e JOIN hosts h ON e.host = h.host GROUP BY h.rack",
	"CREATE MATERIALIZED VIEW top AS SELECT id, v FROM ev ORDER BY v DESC, id LIMIT 10",
	"CREATE MATERIALIZED VIEW per_minute AS SELECT date_trunc('minute', ts) AS m, count(*) AS n FROM ev GROUP BY 1",
}

// buildRecoveryDir makes the data directory BenchmarkRecovery restarts.
func buildRecoveryDir(b *testing.B, dir string, rows, after int) {
	e, err := Open(Config{DataDir: dir, CheckpointInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	s, err := e.NewSession("tester", "db", nil)
	if err != nil {
		b.Fatal(err)
	}
	benchExec(b, s, "CREATE TABLE hosts (host int PRIMARY KEY, rack int)")
	benchExec(b, s, "CREATE TABLE ev (id bigint PRIMARY KEY, host int, v int, ts timestamp)")
	benchExec(b, s, "INSERT INTO hosts SELECT g, g % 40 FROM generate_series(0, 999) g")
	for _, v := range recoveryViews {
		benchExec(b, s, v)
	}
	const chunk = 100_000
	insert := func(from, to int) {
		for lo := from; lo < to; lo += chunk {
			hi := min(lo+chunk, to)
			benchExec(b, s, fmt.Sprintf("INSERT INTO ev SELECT g, g %% 1000, (g %% 100003) * 7919 %% 100003, "+
				"TIMESTAMP '2026-01-01' + g * INTERVAL '1 second' FROM generate_series(%d, %d) g", lo, hi-1))
		}
	}
	insert(0, rows)
	benchExec(b, s, "FLUSH")
	benchExec(b, s, "CHECKPOINT")
	insert(rows, rows+after)
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
}

// benchExec runs one statement and returns its first row's first column
// as text ("" without rows).
func benchExec(tb testing.TB, s *Session, text string) string {
	tb.Helper()
	stmts, err := sql.Parse(text)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := s.Prepare(context.Background(), stmts[0], nil)
	if err != nil {
		tb.Fatalf("%s: %v", text, err)
	}
	res, err := s.Execute(context.Background(), p, make([]types.Value, len(p.ParamTypes)))
	if err != nil {
		tb.Fatalf("%s: %v", text, err)
	}
	out := ""
	if res.Rows != nil {
		defer res.Rows.Close()
		for {
			batch, err := res.Rows.Next()
			if err != nil {
				tb.Fatalf("%s: %v", text, err)
			}
			if batch == nil {
				break
			}
			if out == "" && batch.NumRows() > 0 {
				out = types.FormatText(types.ValueAt(batch.Column(0), 0, res.Columns[0].Type), res.Columns[0].Type, &types.DefaultFormat)
			}
		}
	}
	return out
}

// cpuTime is the process's CPU time so far (user and system): on a
// shared machine it varies less than the wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n >= 0 {
		return n
	}
	return def
}
