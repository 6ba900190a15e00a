package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/jackc/pgx/v5"
)

// TestKillDuringFileSink: events go into a table while an EMIT ON WINDOW
// CLOSE view over them feeds two file sinks (JSON lines and Parquet) and
// checkpoints run; the server is killed with SIGKILL at random moments and
// restarted, several times. At the end the sinks' visible files must hold
// every closed window exactly once with the right count and sum: the same
// rows as a batch query over the events (an uninterrupted run), none
// missing, none twice, and no hidden in-progress file left behind after a
// FLUSH. Rounds: STREAMSQL_CRASH_ROUNDS (default 4); seed:
// STREAMSQL_CRASH_SEED.
func TestKillDuringFileSink(t *testing.T) {
	rounds := 4
	if n, err := strconv.Atoi(os.Getenv("STREAMSQL_CRASH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	seed := time.Now().UnixNano()
	if n, err := strconv.ParseInt(os.Getenv("STREAMSQL_CRASH_SEED"), 10, 64); err == nil {
		seed = n
	}
	t.Logf("seed %d (STREAMSQL_CRASH_SEED), %d rounds", seed, rounds)
	rng := rand.New(rand.NewSource(seed))
	dir, out := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	flags := []string{"--checkpoint-interval", "100ms", "--barrier-interval", "20ms"}

	s := startServer(t, dir, flags...)
	c := s.connect(ctx)
	for _, q := range []string{
		"CREATE TABLE ev (id bigint, k int, v int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) APPEND ONLY",
		"CREATE MATERIALIZED VIEW win AS SELECT window_start, k, count(*) AS n, sum(v) AS s FROM TUMBLE(ev, ts, INTERVAL '10' SECOND) GROUP BY window_start, k EMIT ON WINDOW CLOSE",
		fmt.Sprintf("CREATE SINK out_json FROM win WITH (connector = 'file', path = '%s') FORMAT JSON", filepath.Join(out, "json")),
		fmt.Sprintf("CREATE SINK out_pq FROM win WITH (connector = 'file', path = '%s', max_file_bytes = '20000') FORMAT PARQUET", filepath.Join(out, "pq")),
	} {
		mustExec(t, ctx, c, q)
	}
	c.Close(ctx)
	var evID int64
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for round := 0; round < rounds; round++ {
		if round > 0 {
			s = startServer(t, dir, flags...)
		}
		stopAt := time.Duration(100+rng.Intn(900)) * time.Millisecond
		wrng := rand.New(rand.NewSource(rng.Int63()))
		wc, err := pgx.Connect(ctx, s.connString())
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer wc.Close(context.Background())
			for {
				id := evID + 1
				ts := base.Add(time.Duration(id)*100*time.Millisecond - time.Duration(wrng.Intn(3000))*time.Millisecond)
				if _, err := wc.Exec(ctx, "INSERT INTO ev VALUES ($1, $2, $3, $4)", id, wrng.Intn(5), wrng.Intn(1000)-100, ts); err != nil {
					return // the kill
				}
				evID = id
			}
		}()
		time.Sleep(stopAt) // the crash's random moment (not a wait for a result)
		if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatalf("kill: %v", err)
		}
		<-s.exited
		<-done
		t.Logf("round %d: killed after %v (%d events acknowledged so far)", round, stopAt, evID)
	}

	s = startServer(t, dir, flags...)
	c = s.connect(ctx)
	defer c.Close(ctx)
	mustExec(t, ctx, c, "FLUSH") // commits what the sinks received
	var want []string
	rows, err := c.Query(ctx, "SELECT to_char(window_start, 'YYYY-MM-DD HH24:MI:SS'), k, count(*), sum(v) FROM TUMBLE(ev, ts, INTERVAL '10' SECOND) GROUP BY window_start, k "+
		"HAVING window_start + INTERVAL '10' SECOND <= (SELECT max(ts) - INTERVAL '5' SECOND FROM ev) ORDER BY 1, 2")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ws string
		var k, n, sum int64
		if err := rows.Scan(&ws, &k, &n, &sum); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("%s|%d|%d|%d", ws, k, n, sum))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) < 5 {
		t.Fatalf("only %d closed windows: the test wrote too little", len(want))
	}
	for name, got := range map[string][]string{"json": jsonWindows(t, filepath.Join(out, "json")), "parquet": parquetWindows(t, filepath.Join(out, "pq"))} {
		sort.Strings(got)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s sink holds %d rows, want %d windows once each:\n got: %v\nwant: %v", name, len(got), len(want), got, want)
		}
	}
	var status string
	var committed int64
	if err := c.QueryRow(ctx, "SELECT string_agg(status, ','), sum(rows) FROM streamsql_sinks").Scan(&status, &committed); err != nil {
		t.Fatal(err)
	}
	if status != "running,running" {
		t.Errorf("sink status %q", status)
	}
}

// sinkFiles lists the visible files under dir; a hidden file left there
// after a FLUSH fails the test.
func sinkFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") {
			t.Errorf("hidden file %s left after FLUSH", p)
			return nil
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// jsonWindows reads the rows of a JSON-lines sink of win.
func jsonWindows(t *testing.T, dir string) []string {
	var out []string
	for _, p := range sinkFiles(t, dir) {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var r struct {
				WindowStart string `json:"window_start"`
				K, N, S     int64
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s: %q: %v", p, sc.Text(), err)
			}
			out = append(out, fmt.Sprintf("%s|%d|%d|%d", r.WindowStart, r.K, r.N, r.S))
		}
		f.Close()
	}
	return out
}

// parquetWindows reads the rows of a Parquet sink of win with pqarrow.
func parquetWindows(t *testing.T, dir string) []string {
	var out []string
	for _, p := range sinkFiles(t, dir) {
		rf, err := file.OpenParquetFile(p, false)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		fr, err := pqarrow.NewFileReader(rf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := fr.ReadTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tr := array.NewTableReader(tbl, 1024)
		for tr.Next() {
			rec := tr.RecordBatch()
			ws, k := rec.Column(0).(*array.Timestamp), rec.Column(1).(*array.Int32)
			n, s := rec.Column(2).(*array.Int64), rec.Column(3).(*array.Int64)
			for i := 0; i < int(rec.NumRows()); i++ {
				at := time.UnixMicro(int64(ws.Value(i))).UTC().Format("2006-01-02 15:04:05")
				out = append(out, fmt.Sprintf("%s|%d|%d|%d", at, k.Value(i), n.Value(i), s.Value(i)))
			}
		}
		tr.Release()
		tbl.Release()
		rf.Close()
	}
	return out
}
