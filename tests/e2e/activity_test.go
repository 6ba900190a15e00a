package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestStatActivityCancelTerminate: pg_stat_activity lists the sessions
// with their state and query; pg_cancel_backend cancels another
// session's statement, pg_terminate_backend ends its connection (FATAL
// 57P01), and a role that is not a superuser may not signal a
// superuser's session (42501).
func TestStatActivityCancelTerminate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := startServer(t, t.TempDir())
	admin := s.connect(ctx)
	execAll(t, ctx, admin, "CREATE USER bob")

	cfg, err := pgx.ParseConfig(s.connString() + " application_name=sleeper")
	if err != nil {
		t.Fatal(err)
	}
	sleeper, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sleeper.Close(context.Background())
	var pid int32
	if err := sleeper.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	// The sleeper runs a long statement in the background.
	slept := make(chan error, 1)
	go func() {
		_, err := sleeper.Exec(ctx, "SELECT pg_sleep(30)")
		slept <- err
	}()
	var state, query, app, btype string
	for {
		err := admin.QueryRow(ctx, "SELECT state, query, application_name, backend_type FROM pg_stat_activity WHERE pid = $1", pid).
			Scan(&state, &query, &app, &btype)
		if err != nil {
			t.Fatal(err)
		}
		if state == "active" {
			break
		}
		select { // polling for the statement to start
		case <-ctx.Done():
			t.Fatalf("the sleeper never showed active: %s %q", state, query)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if query != "SELECT pg_sleep(30)" || app != "sleeper" || btype != "client backend" {
		t.Errorf("activity of the sleeper: %q %q %q", query, app, btype)
	}
	var n int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = pg_backend_pid() AND state = 'active'").Scan(&n); err != nil || n != 1 {
		t.Errorf("own session: %d, %v", n, err)
	}

	// bob may neither cancel nor see the superuser's query.
	bcfg, _ := pgx.ParseConfig(strings.Replace(s.connString(), "user=streamsql", "user=bob", 1))
	bob, err := pgx.ConnectConfig(ctx, bcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close(context.Background())
	var seen string
	if err := bob.QueryRow(ctx, "SELECT query FROM pg_stat_activity WHERE pid = $1", pid).Scan(&seen); err != nil || seen != "<insufficient privilege>" {
		t.Errorf("bob sees %q, %v", seen, err)
	}
	var ok bool
	err = bob.QueryRow(ctx, "SELECT pg_cancel_backend($1)", pid).Scan(&ok)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42501" {
		t.Errorf("bob's cancel: %v", err)
	}

	if err := admin.QueryRow(ctx, "SELECT pg_cancel_backend($1)", pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	if err := <-slept; !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("the sleeper's statement ended with %v", err)
	}
	if err := admin.QueryRow(ctx, "SELECT pg_cancel_backend(999999)").Scan(&ok); err != nil || ok {
		t.Errorf("cancel of no session: %v %v", ok, err)
	}

	// Terminate the (now idle) sleeper.
	if err := admin.QueryRow(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("terminate: %v %v", ok, err)
	}
	_, err = sleeper.Exec(ctx, "SELECT 1")
	var ne net.Error
	if err == nil || !(errors.As(err, &pe) && pe.Code == "57P01" || errors.As(err, &ne) || strings.Contains(err.Error(), "57P01") ||
		strings.Contains(err.Error(), "closed") || strings.Contains(err.Error(), "EOF")) {
		t.Fatalf("the terminated session still works: %v", err)
	}
	for { // the session goes away
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal(fmt.Sprintf("the terminated session %d is still listed", pid))
		case <-time.After(20 * time.Millisecond):
		}
	}
}
