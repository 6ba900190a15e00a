package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Streaming from the outside: SUBSCRIBE read by psql (COPY ... TO STDOUT and
// a cursor) and by pgx (a plain query whose rows keep coming), rows arriving
// as other connections write; a subscriber that stops reading is ended
// while its view goes on; a followed file source feeding a subscription.
// Timeouts only bound a hang: every wait is for an expected line or row.

const streamTimeout = 60 * time.Second

// execAll runs statements in order on c.
func execAll(t *testing.T, ctx context.Context, c *pgx.Conn, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// viewFixture creates table t (k int PRIMARY KEY, v text) with rows (1, a)
// and (2, b), and view v over it.
func viewFixture(t *testing.T, ctx context.Context, c *pgx.Conn) {
	t.Helper()
	execAll(t, ctx, c,
		"CREATE TABLE t (k int PRIMARY KEY, v text)",
		"INSERT INTO t VALUES (1, 'a'), (2, 'b')",
		"CREATE MATERIALIZED VIEW v AS SELECT k, v FROM t WHERE k < 1000")
}

// psqlLines runs psql with line-buffered output (stdbuf: psql's stdio
// buffers a pipe fully) and returns its output lines as they come and a
// writer to its stdin. The process ends with ctx.
func psqlLines(t *testing.T, ctx context.Context, s *server, args ...string) (<-chan string, io.WriteCloser) {
	t.Helper()
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed (apt-get install postgresql-client)")
	}
	stdbuf, err := exec.LookPath("stdbuf")
	if err != nil {
		t.Skip("stdbuf (coreutils) is not installed")
	}
	host, port := splitAddr(s.addr)
	all := append([]string{"-oL", psql, "-X", "-q", "-h", host, "-p", port, "-U", "streamsql", "-d", "streamsql"}, args...)
	cmd := exec.CommandContext(ctx, stdbuf, all...)
	cmd.Env = append(os.Environ(), "PGPASSWORD=streamsql", "PGCONNECT_TIMEOUT=10", "PAGER=", "PSQLRC=/dev/null")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start psql: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines, stdin
}

// change is one subscription row: op, epoch time, then the view's columns.
type change struct {
	op   string
	at   time.Time
	cols string // the view's columns, "|"-separated
}

// parseChange reads a psql output line of the subscription ("|"- or
// tab-separated).
func parseChange(line string) (change, bool) {
	sep := "|"
	if strings.Contains(line, "\t") {
		sep = "\t"
	}
	f := strings.Split(line, sep)
	if len(f) < 3 {
		return change{}, false
	}
	at, err := time.Parse("2006-01-02 15:04:05.999999-07", f[1])
	if err != nil {
		return change{}, false
	}
	return change{op: f[0], at: at, cols: strings.Join(f[2:], "|")}, true
}

// nextChanges reads lines until it has n changes; other lines fail the test.
func nextChanges(t *testing.T, ctx context.Context, lines <-chan string, n int) []change {
	t.Helper()
	var got []change
	for len(got) < n {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("psql ended after %d of %d changes: %v", len(got), n, got)
			}
			c, ok := parseChange(l)
			if !ok {
				t.Fatalf("unexpected psql output %q (after %v)", l, got)
			}
			got = append(got, c)
		case <-ctx.Done():
			t.Fatalf("waited for %d changes, got %v: %v", n, got, ctx.Err())
		}
	}
	return got
}

// describe renders changes as "op cols" for comparison, in order.
func describe(cs []change) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.op + " " + c.cols
	}
	return strings.Join(parts, ", ")
}

// sameSet compares changes ignoring their order (rows of one epoch).
func sameSet(cs []change, want ...string) bool {
	left := map[string]int{}
	for _, c := range cs {
		left[c.op+" "+c.cols]++
	}
	for _, w := range want {
		if left[w] == 0 {
			return false
		}
		left[w]--
	}
	return len(cs) == len(want)
}

// checkEpochs checks that epoch times never go back and are recent.
func checkEpochs(t *testing.T, start time.Time, cs []change) {
	t.Helper()
	for i, c := range cs {
		if c.at.Before(start.Add(-time.Minute)) || c.at.After(time.Now().Add(time.Minute)) {
			t.Errorf("epoch_time %v is not around now", c.at)
		}
		if i > 0 && c.at.Before(cs[i-1].at) {
			t.Errorf("epoch_time went back: %v after %v", c.at, cs[i-1].at)
		}
	}
}

// TestSubscribeCopyPsql streams COPY (SUBSCRIBE TO v) TO STDOUT through psql
// while another connection writes.
func TestSubscribeCopyPsql(t *testing.T) {
	s := startServer(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), streamTimeout)
	defer cancel()
	c := s.connect(ctx)
	viewFixture(t, ctx, c)
	start := time.Now()

	pctx, stop := context.WithCancel(ctx)
	lines, _ := psqlLines(t, pctx, s, "-c", "COPY (SUBSCRIBE TO v) TO STDOUT")
	var all []change
	snap := nextChanges(t, ctx, lines, 2)
	if !sameSet(snap, "insert 1|a", "insert 2|b") || snap[0].at != snap[1].at {
		t.Fatalf("snapshot: %s (times %v, %v)", describe(snap), snap[0].at, snap[1].at)
	}
	all = append(all, snap...)
	// No FLUSH: a committed row reaches the subscriber within an epoch.
	execAll(t, ctx, c, "INSERT INTO t VALUES (3, 'c'), (1000, 'not in the view')")
	got := nextChanges(t, ctx, lines, 1)
	if describe(got) != "insert 3|c" {
		t.Fatalf("after an insert: %s", describe(got))
	}
	all = append(all, got...)
	execAll(t, ctx, c, "UPDATE t SET v = 'bb' WHERE k = 2")
	got = nextChanges(t, ctx, lines, 2)
	if describe(got) != "update_before 2|b, update_after 2|bb" {
		t.Fatalf("after an update: %s", describe(got))
	}
	all = append(all, got...)
	execAll(t, ctx, c, "DELETE FROM t WHERE k = 1")
	got = nextChanges(t, ctx, lines, 1)
	if describe(got) != "delete 1|a" {
		t.Fatalf("after a delete: %s", describe(got))
	}
	all = append(all, got...)
	checkEpochs(t, start, all)

	// psql goes away; the view goes on.
	stop()
	execAll(t, ctx, c, "INSERT INTO t VALUES (4, 'd')", "FLUSH")
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM v").Scan(&n); err != nil || n != 3 {
		t.Fatalf("view after the subscriber left: %d rows, %v", n, err)
	}
}

// TestSubscribeCursorPsql reads a subscription through a cursor in an
// interactive psql session: FETCH returns what is ready, waiting only for
// the first row.
func TestSubscribeCursorPsql(t *testing.T) {
	s := startServer(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), streamTimeout)
	defer cancel()
	c := s.connect(ctx)
	viewFixture(t, ctx, c)

	lines, stdin := psqlLines(t, ctx, s, "-A", "-t", "-v", "ON_ERROR_STOP=1")
	send := func(sql string) {
		if _, err := io.WriteString(stdin, sql+"\n"); err != nil {
			t.Fatalf("write to psql: %v", err)
		}
	}
	send("BEGIN;")
	send("DECLARE c CURSOR FOR SUBSCRIBE TO v;")
	send("FETCH ALL FROM c;")
	if got := nextChanges(t, ctx, lines, 2); !sameSet(got, "insert 1|a", "insert 2|b") {
		t.Fatalf("snapshot: %s", describe(got))
	}
	execAll(t, ctx, c, "INSERT INTO t VALUES (5, 'e')")
	send("FETCH ALL FROM c;") // waits for the insert's epoch
	if got := nextChanges(t, ctx, lines, 1); describe(got) != "insert 5|e" {
		t.Fatalf("after an insert: %s", describe(got))
	}
	send("COMMIT;")
	send("SELECT 'done';")
	for l := range lines {
		if l == "done" {
			break
		}
		if l != "" {
			t.Fatalf("unexpected psql output %q", l)
		}
	}
	stdin.Close()
}

// TestSubscribePgx reads SUBSCRIBE as a plain query with pgx (the extended
// protocol, binary results): rows keep coming as another connection writes;
// a CancelRequest ends the subscription (57014) and the connection goes on.
func TestSubscribePgx(t *testing.T) {
	s := startServer(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), streamTimeout)
	defer cancel()
	c := s.connect(ctx)
	viewFixture(t, ctx, c)

	sub := s.connect(ctx)
	qctx, stop := context.WithCancel(ctx)
	defer stop()
	rows, err := sub.Query(qctx, "SUBSCRIBE TO v")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range rows.FieldDescriptions() {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "op,epoch_time,k,v" {
		t.Fatalf("columns %v", names)
	}
	next := func(n int) []change {
		var out []change
		for len(out) < n && rows.Next() {
			var ch change
			var k int32
			var v string
			if err := rows.Scan(&ch.op, &ch.at, &k, &v); err != nil {
				t.Fatalf("scan: %v", err)
			}
			ch.cols = fmt.Sprintf("%d|%s", k, v)
			out = append(out, ch)
		}
		if len(out) < n {
			t.Fatalf("subscription ended after %v: %v", out, rows.Err())
		}
		return out
	}
	start := time.Now()
	all := next(2)
	if !sameSet(all, "insert 1|a", "insert 2|b") {
		t.Fatalf("snapshot: %s", describe(all))
	}
	for i := 3; i <= 5; i++ {
		execAll(t, ctx, c, fmt.Sprintf("INSERT INTO t VALUES (%d, 'x%d')", i, i))
		got := next(1)
		if want := fmt.Sprintf("insert %d|x%d", i, i); describe(got) != want {
			t.Fatalf("got %s, want %s", describe(got), want)
		}
		all = append(all, got...)
	}
	checkEpochs(t, start, all)

	if err := sub.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	rows.Close()
	var pe *pgconn.PgError
	if !errors.As(rows.Err(), &pe) || pe.Code != "57014" {
		t.Fatalf("after a cancel request: %v, want 57014", rows.Err())
	}
	// The same connection serves on; a new subscription starts from the
	// current rows.
	again := sub
	var n int
	if err := again.QueryRow(ctx, "SELECT count(*) FROM v").Scan(&n); err != nil || n != 5 {
		t.Fatalf("count after cancel: %d, %v", n, err)
	}
	// pgx's Query returns with the first row: progress rows come every
	// epoch even without changes.
	ctx2, stop2 := context.WithCancel(ctx)
	defer stop2()
	rows2, err := again.Query(ctx2, "SUBSCRIBE TO v WITH (snapshot = false, progress = true)")
	if err != nil {
		t.Fatal(err)
	}
	if !rows2.Next() {
		t.Fatalf("no progress row: %v", rows2.Err())
	}
	vals, err := rows2.Values()
	if err != nil || vals[0] != "progress" || vals[2] != nil || vals[3] != nil {
		t.Fatalf("progress row %v, %v", vals, err)
	}
	stop2() // Close would read to the end, which never comes
	rows2.Close()
}

// TestSubscribeOverflow: a subscriber that stops reading holds back only
// itself. Its unread changes in memory are bounded
// (--subscribe-buffer-bytes); past that a subscriber of a materialized
// view goes on from the view's changelog on disk, one of a query spills
// to a file of its own, and, reading again, each gets every change
// (nothing is dropped), while the view, FLUSH and other subscribers go on.
func TestSubscribeOverflow(t *testing.T) {
	const batches, batch = 3, 100_000
	s := startServer(t, t.TempDir(), "--subscribe-buffer-bytes", "16kB")
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*streamTimeout)
	defer cancel()
	c := s.connect(ctx)
	// One row to start with: pgx's Query returns with the first row.
	execAll(t, ctx, c, "CREATE TABLE big (id bigint)", "INSERT INTO big VALUES (0)", "CREATE MATERIALIZED VIEW bv AS SELECT id FROM big")

	// The stalled subscribers: a small socket receive buffer, so that the
	// kernel holds few of their rows.
	cfg, err := pgx.ParseConfig(s.connString())
	if err != nil {
		t.Fatal(err)
	}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetReadBuffer(16 << 10)
		}
		return conn, err
	}
	stalled := func(ctx context.Context, q string) (*pgx.Conn, pgx.Rows) {
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(context.Background()) })
		rows, err := conn.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return conn, rows
	}
	slowView, viewRows := stalled(ctx, "SUBSCRIBE TO bv")
	queryCtx, stopQuery := context.WithCancel(ctx)
	defer stopQuery()
	_, queryRows := stalled(queryCtx, "SUBSCRIBE (SELECT id FROM big)")
	// A subscriber that keeps reading, through a cursor.
	reader := s.connect(ctx)
	execAll(t, ctx, reader, "BEGIN", "DECLARE live CURSOR FOR SUBSCRIBE TO bv WITH (snapshot = false)")

	// Far more rows than the bound plus what sockets and buffers hold.
	seen := 0
	for b := 0; b < batches; b++ {
		execAll(t, ctx, c, fmt.Sprintf("INSERT INTO big SELECT generate_series(%d, %d)", b*batch+1, (b+1)*batch), "FLUSH")
		// FLUSH returned: the stalled subscribers did not hold the view back.
		for seen < (b+1)*batch {
			r, err := reader.Query(ctx, "FETCH 100000 FROM live")
			if err != nil {
				t.Fatal(err)
			}
			for r.Next() {
				seen++
			}
			if r.Close(); r.Err() != nil {
				t.Fatalf("the reading subscriber failed: %v", r.Err())
			}
		}
	}
	if seen != batches*batch {
		t.Fatalf("the reading subscriber saw %d rows, want %d", seen, batches*batch)
	}
	t.Logf("written and read by the live subscriber (%v)", time.Since(began))
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM bv").Scan(&n); err != nil || n != batches*batch+1 {
		t.Fatalf("view has %d rows (%v), want %d", n, err, batches*batch+1)
	}

	// The stalled subscriber of the view reads again: every row, each once.
	ids := make(map[int64]bool, batches*batch+1)
	for len(ids) < batches*batch+1 && viewRows.Next() {
		vals, err := viewRows.Values()
		if err != nil {
			t.Fatal(err)
		}
		if op := vals[0].(string); op != "insert" {
			t.Fatalf("op %s", op)
		}
		id := vals[2].(int64)
		if ids[id] {
			t.Fatalf("row %d twice", id)
		}
		ids[id] = true
	}
	if len(ids) != batches*batch+1 {
		t.Fatalf("the stalled subscriber of the view got %d of %d rows: %v", len(ids), batches*batch+1, viewRows.Err())
	}
	t.Logf("the stalled subscriber of the view got all %d rows (%v)", len(ids), time.Since(began))

	// The stalled subscriber of a query read its spill: every row, each once.
	clear(ids)
	for len(ids) < batches*batch+1 && queryRows.Next() {
		vals, err := queryRows.Values()
		if err != nil {
			t.Fatal(err)
		}
		id := vals[2].(int64)
		if ids[id] || vals[0].(string) != "insert" {
			t.Fatalf("query subscriber: %v (seen before: %v)", vals, ids[id])
		}
		ids[id] = true
	}
	if len(ids) != batches*batch+1 {
		t.Fatalf("the stalled subscriber of a query got %d of %d rows: %v", len(ids), batches*batch+1, queryRows.Err())
	}
	t.Logf("the stalled subscriber of a query got all %d rows (%v)", len(ids), time.Since(began))
	stopQuery() // Close would read to the end, which never comes
	queryRows.Close()
	var pe *pgconn.PgError
	// Dropping the view ends its subscription (55000); the connection is
	// fine.
	execAll(t, ctx, c, "DROP MATERIALIZED VIEW bv")
	for viewRows.Next() {
	}
	viewRows.Close()
	if !errors.As(viewRows.Err(), &pe) || pe.Code != "55000" {
		t.Fatalf("the view's subscription after DROP: %v", viewRows.Err())
	}
	if err := slowView.QueryRow(ctx, "SELECT count(*) FROM big").Scan(&n); err != nil || n != batches*batch+1 {
		t.Fatalf("stalled subscriber's connection: %d, %v", n, err)
	}
}

// TestFileSourceFollow appends to a followed file and reads the new rows
// from a subscription to a view over it.
func TestFileSourceFollow(t *testing.T) {
	s := startServer(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), streamTimeout)
	defer cancel()
	path := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(path, []byte("1,start\n2,running\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := s.connect(ctx)
	execAll(t, ctx, c,
		fmt.Sprintf("CREATE SOURCE ev (id int, msg text) WITH (connector = 'file', path = '%s', follow = 'true') FORMAT CSV", path),
		"CREATE MATERIALIZED VIEW evv AS SELECT id, upper(msg) AS msg FROM ev")
	qctx, stop := context.WithCancel(ctx)
	rows, err := s.connect(ctx).Query(qctx, "SUBSCRIBE TO evv")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	defer stop() // first: Close would read to the end, which never comes
	seen := map[int32]string{}
	wait := func(id int32) {
		for seen[id] == "" && rows.Next() {
			var op string
			var at time.Time
			var k int32
			var msg string
			if err := rows.Scan(&op, &at, &k, &msg); err != nil {
				t.Fatal(err)
			}
			if op != "insert" {
				t.Fatalf("op %s for row %d", op, k)
			}
			seen[k] = msg
		}
		if seen[id] == "" {
			t.Fatalf("row %d never came: %v (seen %v)", id, rows.Err(), seen)
		}
	}
	wait(1)
	wait(2)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("3,appended\n4,par"); err != nil {
		t.Fatal(err)
	}
	wait(3)
	if _, err := f.WriteString("tial line\nnot a number,x\n5,after a bad row\n"); err != nil {
		t.Fatal(err)
	}
	wait(5)
	if seen[3] != "APPENDED" || seen[4] != "PARTIAL LINE" || seen[5] != "AFTER A BAD ROW" || len(seen) != 5 {
		t.Fatalf("rows %v", seen)
	}
	var errs int64
	if err := c.QueryRow(ctx, "SELECT row_errors FROM streamsql_views WHERE viewname = 'evv'").Scan(&errs); err != nil || errs != 1 {
		t.Fatalf("row errors %d, %v; want the bad row counted once", errs, err)
	}
}

// TestSubscribePlainPsql: psql (libpq) collects a plain query's rows until
// the statement ends, so a plain SUBSCRIBE shows nothing in psql until
// something ends it (here statement_timeout; Ctrl-C sends a cancel
// request); psql then reports the error and goes on. COPY (SUBSCRIBE ...)
// TO STDOUT or a cursor is how psql streams.
func TestSubscribePlainPsql(t *testing.T) {
	s := startServer(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), streamTimeout)
	defer cancel()
	viewFixture(t, ctx, s.connect(ctx))
	lines, _ := psqlLines(t, ctx, s, "-A", "-t",
		"-c", "SET statement_timeout = '300ms'", "-c", "SUBSCRIBE TO v", "-c", "SELECT count(*) FROM v")
	var out []string
	for l := range lines {
		out = append(out, l)
	}
	if got := strings.Join(out, "\n"); got != "ERROR:  canceling statement due to statement timeout\n2" {
		t.Fatalf("psql printed:\n%s", got)
	}
}
