package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// noticeConn connects with a handler that keeps the server's notices.
type noticeConn struct {
	*pgx.Conn
	mu      sync.Mutex
	notices []string
}

func connectNotices(t *testing.T, ctx context.Context, s *server) *noticeConn {
	t.Helper()
	cfg, err := pgx.ParseConfig(s.connString())
	if err != nil {
		t.Fatal(err)
	}
	nc := &noticeConn{}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		nc.mu.Lock()
		nc.notices = append(nc.notices, n.Severity+": "+n.Message)
		nc.mu.Unlock()
	}
	if nc.Conn, err = pgx.ConnectConfig(ctx, cfg); err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { nc.Close(context.Background()) })
	return nc
}

// take returns the notices received since the last take.
func (nc *noticeConn) take() []string {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	out := nc.notices
	nc.notices = nil
	return out
}

// TestReadWhileViewsRecover restarts streamsqld after a kill -9 with its
// views' recovery held (STREAMSQL_TEST_RECOVERY_GATE, a FIFO: the views are
// restored from the checkpoint, then wait before replaying the writes made
// after it). The server accepts connections at once; tables are read and
// written; a view's rows are the checkpoint's, and a read of it through
// every path (simple and extended protocol, a cursor, COPY TO) gets a
// NOTICE that it is recovering; streamsql_views says "recovering"; FLUSH
// waits. Opening the gate lets the recovery finish: FLUSH returns, the
// views hold the writes after the checkpoint, nothing is recovering, and
// the log tells each step.
func TestReadWhileViewsRecover(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	flags := []string{"--checkpoint-interval", "1h"} // CHECKPOINT only

	s := startServer(t, dir, flags...)
	c := s.connect(ctx)
	for _, q := range []string{
		"CREATE TABLE ev (id bigint PRIMARY KEY, k int, v int)",
		"INSERT INTO ev SELECT g, g % 10, g % 7 FROM generate_series(1, 20000) g",
		"CREATE MATERIALIZED VIEW per_k AS SELECT k, count(*) AS n, sum(v) AS s FROM ev GROUP BY k",
		"CREATE MATERIALIZED VIEW top3 AS SELECT id, v FROM ev ORDER BY v DESC, id LIMIT 3",
		"FLUSH",
		"CHECKPOINT",
		// After the checkpoint: replayed from the table's log at the restart.
		"INSERT INTO ev SELECT g, 0, 1 FROM generate_series(20001, 25000) g",
	} {
		mustExec(t, ctx, c, q)
	}
	s.kill()

	gate := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	released := false
	release := func() {
		if released {
			return
		}
		released = true
		f, err := os.OpenFile(gate, os.O_WRONLY, 0) // the server is blocked opening it for reading
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	s = startServerEnv(t, dir, []string{"STREAMSQL_TEST_RECOVERY_GATE=" + gate}, flags...)
	defer func() {
		if !released {
			s.kill() // the gate would hold its clean stop
		}
	}()
	nc := connectNotices(t, ctx, s)

	var n int64
	if err := nc.QueryRow(ctx, "SELECT count(*) FROM ev").Scan(&n); err != nil || n != 25000 {
		t.Fatalf("table while views recover: %d %v", n, err)
	}
	nc.take()
	if _, err := nc.Exec(ctx, "INSERT INTO ev VALUES (25001, 0, 1)"); err != nil {
		t.Fatal(err)
	}

	const atCheckpoint = "2000" // per_k's n for k = 0 at the checkpoint
	wantNotice := func(how string) {
		t.Helper()
		got := nc.take()
		if len(got) != 1 || !strings.HasPrefix(got[0], `NOTICE: materialized view "per_k" is recovering from checkpoint `) ||
			!strings.HasSuffix(got[0], ": replaying its input") {
			t.Fatalf("%s: notices %q, want one NOTICE that per_k is recovering", how, got)
		}
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec, pgx.QueryExecModeCacheStatement} {
		var got string
		if err := nc.QueryRow(ctx, "SELECT n::text FROM per_k WHERE k = 0", mode).Scan(&got); err != nil || got != atCheckpoint {
			t.Fatalf("per_k while recovering (%v): %q %v, want the checkpoint's %s", mode, got, err, atCheckpoint)
		}
		wantNotice(fmt.Sprintf("SELECT (%v)", mode))
	}
	tx, err := nc.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "DECLARE cur CURSOR FOR SELECT n FROM per_k WHERE k = 0"); err != nil {
		t.Fatal(err)
	}
	wantNotice("DECLARE")
	var got int64
	if err := tx.QueryRow(ctx, "FETCH 1 FROM cur").Scan(&got); err != nil || got != 2000 {
		t.Fatalf("FETCH: %d %v", got, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	if _, err := nc.PgConn().CopyTo(ctx, &buf, "COPY (SELECT n FROM per_k WHERE k = 0) TO STDOUT"); err != nil || buf.String() != atCheckpoint+"\n" {
		t.Fatalf("COPY TO: %q %v", buf.String(), err)
	}
	wantNotice("COPY TO")
	var status, recovery string
	if err := nc.QueryRow(ctx, "SELECT status, recovery FROM streamsql_views WHERE viewname = 'per_k'").Scan(&status, &recovery); err != nil ||
		status != "recovering" || !strings.HasPrefix(recovery, "recovering from checkpoint ") {
		t.Fatalf("streamsql_views while recovering: %q %q %v", status, recovery, err)
	}

	flushed := make(chan error, 1)
	go func() {
		fc, err := pgx.Connect(ctx, s.connString())
		if err != nil {
			flushed <- err
			return
		}
		defer fc.Close(context.Background())
		_, err = fc.Exec(ctx, "FLUSH")
		flushed <- err
	}()
	// FLUSH cannot return before the gate opens; a read after it started
	// still gets the checkpoint's rows.
	if err := nc.QueryRow(ctx, "SELECT count(*) FROM per_k").Scan(&n); err != nil || n != 10 {
		t.Fatalf("per_k: %d %v", n, err)
	}
	select {
	case err := <-flushed:
		t.Fatalf("FLUSH returned while the views recover: %v", err)
	default:
	}
	release()
	if err := <-flushed; err != nil {
		t.Fatalf("FLUSH: %v", err)
	}
	nc.take()
	if err := nc.QueryRow(ctx, "SELECT n FROM per_k WHERE k = 0").Scan(&got); err != nil || got != 2000+5001 {
		t.Fatalf("per_k after the recovery: %d %v, want %d", got, err, 2000+5001)
	}
	if notes := nc.take(); len(notes) != 0 {
		t.Fatalf("notices after the recovery: %q", notes)
	}
	if err := nc.QueryRow(ctx, "SELECT string_agg(status, ',' ORDER BY viewname) FROM streamsql_views WHERE recovery IS NULL").Scan(&status); err != nil || status != "running,running" {
		t.Fatalf("streamsql_views after the recovery: %q %v", status, err)
	}
	out := s.out.String()
	for _, want := range []string{"recovery: read checkpoint ", "recovery: materialized view per_k: restored from checkpoint ",
		"recovery: materialized view top3: ready in ", "recovery: all 2 materialized views ready in "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the log:\n%s", want, out)
		}
	}
}
