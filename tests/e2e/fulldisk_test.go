package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestFullDisk runs streamsqld on a real 8 MiB tmpfs, fills it, and checks
// issue 5's promise: writes fail with 53100 and leave nothing behind (no
// acknowledged-but-lost row, no visible-but-not-durable one), reads, views
// and subscriptions go on, CHECKPOINT fails and is counted, DDL fails
// without leaving half an object; once space returns everything works
// again without a restart, and a kill -9 then loses nothing acknowledged.
// It needs root (or CAP_SYS_ADMIN) to mount the tmpfs, and skips without.
func TestFullDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root or CAP_SYS_ADMIN): %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { // registered before the server's: runs after its kill
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	flags := []string{"--checkpoint-interval", "200ms", "--barrier-interval", "20ms"}
	s := startServer(t, dir, flags...)
	c := s.connect(ctx)
	execAll(t, ctx, c,
		"CREATE TABLE t (id bigint PRIMARY KEY, g int NOT NULL, pad text)",
		"CREATE MATERIALIZED VIEW v AS SELECT g, count(*) AS n, sum(id) AS s FROM t GROUP BY g",
		// A view that changes while the disk is full: over a generator.
		"CREATE SOURCE bid WITH (connector = 'nexmark', table = 'bid', events_per_second = '5000')",
		"CREATE MATERIALIZED VIEW nb AS SELECT count(*) AS n FROM bid",
	)
	const viewQuery = "SELECT g, count(*) AS n, sum(id) AS s FROM t GROUP BY g"
	pad := strings.Repeat("x", 1000)
	acked := map[int64]bool{}  // ids whose INSERT or COPY returned success
	failed := map[int64]bool{} // ids whose write failed
	// g is id % 7 until space returns, then 7: a group the old subscriber
	// can only see after it.
	g := int64(7)
	insert := func(id int64) error {
		_, err := c.Exec(ctx, "INSERT INTO t VALUES ($1, $2, $3)", id, id%g, pad)
		if err == nil {
			acked[id] = true
		} else {
			failed[id] = true
		}
		return err
	}
	next := int64(1)
	for ; next <= 50; next++ {
		if err := insert(next); err != nil {
			t.Fatalf("insert %d: %v", next, err)
		}
	}
	execAll(t, ctx, c, "FLUSH", "CHECKPOINT")

	// A subscriber from before the disk fills (progress rows make pgx's
	// Query return at once).
	sub := s.connect(ctx)
	subCtx, stopSub := context.WithCancel(ctx)
	defer stopSub()
	subRows, err := sub.Query(subCtx, "SUBSCRIBE TO v WITH (snapshot = false, progress = true)")
	if err != nil {
		t.Fatalf("SUBSCRIBE: %v", err)
	}
	newGroup := make(chan struct{}) // closed when the subscriber sees g = 7
	go func() {
		for subRows.Next() {
			vals, err := subRows.Values()
			if err != nil {
				return
			}
			if g, _ := vals[2].(int32); vals[0] != "progress" && g == 7 {
				close(newGroup)
				return
			}
		}
	}()

	// A subscriber to the generator's view, whose changes go on meanwhile.
	genSub := s.connect(ctx)
	genRows, err := genSub.Query(subCtx, "SUBSCRIBE TO nb WITH (snapshot = false, progress = true)")
	if err != nil {
		t.Fatalf("SUBSCRIBE: %v", err)
	}
	genChanges := make(chan struct{}, 1<<16) // one per change of nb
	go func() {
		for genRows.Next() {
			if vals, err := genRows.Values(); err == nil && vals[0] != "progress" {
				genChanges <- struct{}{}
			}
		}
	}()

	// Fill the disk: a ballast file up to ENOSPC, then rows until a write fails.
	ballast := filepath.Join(dir, "ballast")
	fillDisk(t, ballast)
	var full *pgconn.PgError
	for tries := 0; full == nil; tries++ {
		if tries == 200 {
			t.Fatalf("200 inserts on a full disk succeeded")
		}
		err := insert(next)
		next++
		if err != nil {
			if !errors.As(err, &full) {
				t.Fatalf("insert on a full disk: %v (not a server error)", err)
			}
		}
	}
	if full.Code != "53100" || !strings.Contains(full.Message, `"t"`) {
		t.Fatalf("insert on a full disk: %s %q, want 53100 naming table \"t\"", full.Code, full.Message)
	}
	t.Logf("full disk: %s: %s", full.Code, full.Message)
	// More writes fail the same way, through COPY too; the connection serves on.
	if err := insert(next); pgCode(err) != "53100" {
		t.Fatalf("second insert on a full disk: %v", err)
	}
	next++
	copyRows := [][]any{}
	for i := 0; i < 20; i++ {
		copyRows = append(copyRows, []any{next, int32(next % 7), pad})
		failed[next] = true
		next++
	}
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"id", "g", "pad"}, pgx.CopyFromRows(copyRows)); pgCode(err) != "53100" {
		t.Fatalf("COPY on a full disk: %v, want 53100", err)
	}
	checkRows(t, ctx, c, acked, failed)
	execAll(t, ctx, c, "FLUSH")
	checkView(t, ctx, c, "v", viewQuery)
	// The generator's view moves on, and its subscriber gets the changes.
	for len(genChanges) > 0 {
		<-genChanges
	}
	var n1, n2 int64
	if err := c.QueryRow(ctx, "SELECT n FROM nb").Scan(&n1); err != nil {
		t.Fatal(err)
	}
	for n2 <= n1 {
		execAll(t, ctx, c, "FLUSH")
		if err := c.QueryRow(ctx, "SELECT n FROM nb").Scan(&n2); err != nil {
			t.Fatalf("view over a generator on a full disk: %v", err)
		}
	}
	select {
	case <-genChanges:
	case <-time.After(30 * time.Second):
		t.Fatalf("the subscription to nb got nothing while the disk was full")
	}
	// A new subscription gets the view's snapshot.
	func() {
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		c2 := s.connect(ctx)
		rows, err := c2.Query(sctx, "SUBSCRIBE TO v")
		if err != nil {
			t.Fatalf("SUBSCRIBE on a full disk: %v", err)
		}
		if !rows.Next() {
			t.Fatalf("SUBSCRIBE on a full disk: no snapshot row: %v", rows.Err())
		}
		stop()
		rows.Close()
	}()
	// CHECKPOINT fails and is counted; DDL fails whole.
	if _, err := c.Exec(ctx, "CHECKPOINT"); pgCode(err) != "53100" && pgCode(err) != "58030" {
		t.Fatalf("CHECKPOINT on a full disk: %v, want 53100 or 58030", err)
	} else {
		t.Logf("CHECKPOINT on a full disk: %v", err)
	}
	var failures int64
	var lastErr *string
	if err := c.QueryRow(ctx, "SELECT failures, last_error FROM pg_catalog.streamsql_checkpoints").Scan(&failures, &lastErr); err != nil {
		t.Fatal(err)
	}
	if failures == 0 || lastErr == nil || *lastErr == "" {
		t.Fatalf("streamsql_checkpoints on a full disk: failures %d, last_error %v", failures, lastErr)
	}
	for _, q := range []string{
		"CREATE TABLE t2 (id int PRIMARY KEY, x text)",
		"CREATE MATERIALIZED VIEW v2 AS SELECT id % 3 AS k, count(*) AS n FROM t GROUP BY 1",
	} {
		if _, err := c.Exec(ctx, q); pgCode(err) != "53100" {
			t.Fatalf("%s on a full disk: %v, want 53100", q, err)
		} else {
			t.Logf("%s: %v", q, err)
		}
	}
	var half int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname IN ('t2', 'v2')").Scan(&half); err != nil || half != 0 {
		t.Fatalf("failed DDL left %d relations (%v)", half, err)
	}
	select {
	case <-s.exited:
		t.Fatalf("streamsqld exited on a full disk:\n%s", s.out.String())
	default:
	}

	// Space returns: writes and checkpoints work again without a restart.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	g = 1 << 40 // g = id from now on: > 7
	if err := func() error { _, err := c.Exec(ctx, "INSERT INTO t VALUES ($1, 7, $2)", next, pad); return err }(); err != nil {
		t.Fatalf("insert after space returned: %v", err)
	}
	acked[next] = true
	next++
	for i := 0; i < 30; i++ {
		if err := insert(next); err != nil {
			t.Fatalf("insert after space returned: %v", err)
		}
		next++
	}
	for id := range failed { // a failed write left no key behind
		if err := insert(id); err != nil {
			t.Fatalf("insert of id %d, whose earlier insert failed: %v", id, err)
		}
		delete(failed, id)
		break
	}
	execAll(t, ctx, c, "CHECKPOINT", "FLUSH")
	checkRows(t, ctx, c, acked, failed)
	checkView(t, ctx, c, "v", viewQuery)
	// The subscriber from before the full disk saw the changes since (it
	// subscribed without a snapshot: every change it got came after).
	select {
	case <-newGroup:
	case <-time.After(30 * time.Second):
		t.Fatalf("the subscription from before the full disk got nothing after it")
	}
	stopSub()

	// A crash now loses nothing acknowledged and revives nothing failed.
	for i := 0; i < 10; i++ {
		if err := insert(next); err != nil {
			t.Fatalf("insert: %v", err)
		}
		next++
	}
	s.kill()
	s = startServer(t, dir, flags...)
	c = s.connect(ctx)
	execAll(t, ctx, c, "FLUSH")
	checkRows(t, ctx, c, acked, failed)
	checkView(t, ctx, c, "v", viewQuery)
	// The DDL that failed left nothing: the names are free.
	execAll(t, ctx, c,
		"CREATE TABLE t2 (id int PRIMARY KEY, x text)",
		"CREATE MATERIALIZED VIEW v2 AS SELECT id % 3 AS k, count(*) AS n FROM t GROUP BY 1",
		"INSERT INTO t2 VALUES (1, 'a')", "CHECKPOINT")
}

// fillDisk writes path until the file system is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, size := range []int{256 << 10, 4 << 10, 512} {
		buf := make([]byte, size)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("ballast: %v", err)
				}
				break
			}
		}
	}
	if _, err := f.Write([]byte{1}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("ballast: the disk is not full: %v", err)
	}
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	if err == nil {
		return "success"
	}
	return err.Error()
}

// checkRows checks that t holds every acknowledged id and no failed one.
func checkRows(t *testing.T, ctx context.Context, c *pgx.Conn, acked, failed map[int64]bool) {
	t.Helper()
	rows, err := c.Query(ctx, "SELECT id FROM t")
	if err != nil {
		t.Fatal(err)
	}
	have := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		have[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var lost, revived []int64
	for id := range acked {
		if !have[id] {
			lost = append(lost, id)
		}
	}
	for id := range failed {
		if have[id] && !acked[id] {
			revived = append(revived, id)
		}
	}
	if len(lost) > 0 || len(revived) > 0 || len(have) != len(acked) {
		t.Fatalf("table t: %d rows, %d acknowledged; lost %v; rows of failed writes %v", len(have), len(acked), lost, revived)
	}
}

// checkView checks that view equals its query.
func checkView(t *testing.T, ctx context.Context, c *pgx.Conn, view, query string) {
	t.Helper()
	q := fmt.Sprintf("SELECT count(*) FROM ((SELECT * FROM %s EXCEPT ALL (%s)) UNION ALL ((%s) EXCEPT ALL SELECT * FROM %s)) d", view, query, query, view)
	var diff int
	if err := c.QueryRow(ctx, q).Scan(&diff); err != nil {
		t.Fatalf("%s: %v", view, err)
	}
	if diff != 0 {
		t.Fatalf("view %s differs from its query in %d rows", view, diff)
	}
}
