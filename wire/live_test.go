package wire

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// fakeLive is the fake session's never-ending query: its rows are the
// batches the test pushes into the liveIter it started.
const fakeLive = "select wire_live()"

// liveIter is a fake subscription: Next waits for a pushed batch or for
// the statement's context; TryNext does not wait; it never ends.
type liveIter struct {
	ctx    context.Context
	rows   chan arrow.RecordBatch
	closed chan struct{}
	once   sync.Once
}

func (s *fakeSession) startLive(ctx context.Context) *liveIter {
	it := &liveIter{ctx: ctx, rows: make(chan arrow.RecordBatch, 16), closed: make(chan struct{})}
	s.live <- it
	return it
}

func (it *liveIter) Next() (arrow.RecordBatch, error) {
	select {
	case b := <-it.rows:
		return b, nil
	case <-it.ctx.Done():
		return nil, fmt.Errorf("subscription: %w", it.ctx.Err())
	}
}

func (it *liveIter) TryNext() (arrow.RecordBatch, bool, error) {
	select {
	case b := <-it.rows:
		return b, true, nil
	default:
		return nil, false, nil
	}
}

func (it *liveIter) Close() error {
	it.once.Do(func() { close(it.closed) })
	return nil
}

// push makes the rows from..to available.
func (it *liveIter) push(from, to int) {
	b, _ := int32Batches(from, to, to-from+1).Next()
	it.rows <- b
}

func (it *liveIter) waitClosed(t *testing.T, what string) {
	t.Helper()
	select {
	case <-it.closed:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: the rows were not closed", what)
	}
}

func nextLive(t *testing.T, env *fakeEnv) *liveIter {
	t.Helper()
	select {
	case it := <-env.live:
		return it
	case <-time.After(20 * time.Second):
		t.Fatal("the live query did not start")
		return nil
	}
}

// TestLiveRowsStream: rows of a never-ending result reach the client as
// they arrive (each read below would hang if the wire held rows back until
// the end), a CancelRequest ends it with 57014 and closes its rows, and the
// connection goes on; over both protocols.
func TestLiveRowsStream(t *testing.T) {
	_, addr, env := startFake(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, fakeURL(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		// pgx's extended Query returns once the first row has come.
		started := make(chan *liveIter, 1)
		go func() {
			it := <-env.live
			it.push(1, 2)
			started <- it
		}()
		rows, err := conn.Query(ctx, fakeLive, mode)
		if err != nil {
			t.Fatal(err)
		}
		it := <-started
		next := func(want int32) {
			t.Helper()
			var got int32
			if !rows.Next() {
				t.Fatalf("[%v] no row %d: %v", mode, want, rows.Err())
			}
			if err := rows.Scan(&got); err != nil || got != want {
				t.Fatalf("[%v] row %d, %v; want %d", mode, got, err, want)
			}
		}
		next(1)
		next(2)
		it.push(3, 3)
		next(3)
		if err := conn.PgConn().CancelRequest(ctx); err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
		}
		var pgErr *pgconn.PgError
		if !errors.As(rows.Err(), &pgErr) || pgErr.Code != "57014" {
			t.Fatalf("[%v] canceled: %v", mode, rows.Err())
		}
		it.waitClosed(t, "cancel")
		var n int
		if err := conn.QueryRow(ctx, "select 5").Scan(&n); err != nil || n != 5 {
			t.Fatalf("[%v] after cancel: %d, %v", mode, n, err)
		}
	}
}

// TestLivePortalSuspended: Execute with a row limit over a never-ending
// result sends the rows ready, suspends at the limit, waits for more only
// when it has none, and Sync closes the portal.
func TestLivePortalSuspended(t *testing.T) {
	_, addr, env := startFake(t, Options{})
	c := dialRaw(t, fakeURL(addr))
	c.send(&pgproto3.Parse{Query: fakeLive}, &pgproto3.Bind{}, &pgproto3.Execute{MaxRows: 3}, &pgproto3.Flush{})
	it := nextLive(t, env)
	it.push(1, 5)
	isSuspended := func(m pgproto3.BackendMessage) bool { _, ok := m.(*pgproto3.PortalSuspended); return ok }
	got := c.until(isSuspended)
	want := []string{"ParseComplete", "BindComplete", `DataRow "1"`, `DataRow "2"`, `DataRow "3"`, "PortalSuspended"}
	if !equalStrings(got, want) {
		t.Fatalf("first Execute: %q", got)
	}
	c.send(&pgproto3.Execute{MaxRows: 3}, &pgproto3.Flush{})
	// Rows 4 and 5 come before the wait for the third.
	n := 0
	got = c.until(func(m pgproto3.BackendMessage) bool { n++; return n == 2 })
	if !equalStrings(got, []string{`DataRow "4"`, `DataRow "5"`}) {
		t.Fatalf("second Execute before the wait: %q", got)
	}
	it.push(6, 7)
	got = c.until(isSuspended)
	if !equalStrings(got, []string{`DataRow "6"`, "PortalSuspended"}) {
		t.Fatalf("second Execute after the wait: %q", got)
	}
	got = c.roundTrip(&pgproto3.Sync{})
	if !equalStrings(got, []string{"ReadyForQuery I"}) {
		t.Fatalf("sync: %q", got)
	}
	it.waitClosed(t, "Sync")
}

// lineWriter hands each write of a COPY to the test.
type lineWriter chan string

func (w lineWriter) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

// TestLiveCopyOut: COPY of a never-ending result sends each row as it
// arrives; a CancelRequest ends it.
func TestLiveCopyOut(t *testing.T) {
	_, addr, env := startFake(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, fakeURL(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	w := make(lineWriter, 16)
	done := make(chan error, 1)
	go func() {
		_, err := conn.CopyTo(ctx, w, "copy ("+fakeLive+") to stdout")
		done <- err
	}()
	it := nextLive(t, env)
	for i := 1; i <= 3; i++ {
		it.push(i, i)
		select {
		case line := <-w:
			if line != fmt.Sprintf("%d\n", i) {
				t.Fatalf("copy line %q, want %d", line, i)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("row %d did not arrive", i)
		}
	}
	if err := conn.CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	var pgErr *pgconn.PgError
	if err := <-done; !errors.As(err, &pgErr) || pgErr.Code != "57014" {
		t.Fatalf("canceled COPY: %v", err)
	}
	it.waitClosed(t, "cancel")
	if res := conn.ExecParams(ctx, "select 1", nil, nil, nil, nil).Read(); res.Err != nil {
		t.Fatalf("after cancel: %v", res.Err)
	}
}

// TestLiveClientGoesAway: a client that hangs up ends the statement and its
// rows are closed, whether it hangs up while rows flow or while the result
// waits with nothing to send.
func TestLiveClientGoesAway(t *testing.T) {
	_, addr, env := startFake(t, Options{})
	for _, rowsFirst := range []bool{true, false} {
		c := dialRaw(t, fakeURL(addr))
		c.send(&pgproto3.Query{String: fakeLive})
		it := nextLive(t, env)
		if rowsFirst {
			it.push(1, 1)
			got := c.until(func(m pgproto3.BackendMessage) bool { _, ok := m.(*pgproto3.DataRow); return ok })
			if len(got) != 2 || got[1] != `DataRow "1"` {
				t.Fatalf("before hanging up: %q", got)
			}
		} else {
			got := c.until(func(m pgproto3.BackendMessage) bool { _, ok := m.(*pgproto3.RowDescription); return ok })
			if !strings.HasPrefix(got[0], "RowDescription") {
				t.Fatalf("before hanging up: %q", got)
			}
		}
		c.nc.Close()
		it.waitClosed(t, fmt.Sprintf("hang-up (rows first %v)", rowsFirst))
	}
}

// BenchmarkLiveRowLatency: one op is a row pushed into a waiting live
// result until the client has read it (the wire flushes, watches the
// client during the wait, and stops watching when the row comes).
func BenchmarkLiveRowLatency(b *testing.B) {
	_, addr, env := startFake(b, Options{})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, fakeURL(addr))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, fakeLive, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		b.Fatal(err)
	}
	it := <-env.live
	i := 0
	for b.Loop() {
		i++
		it.push(i, i)
		if !rows.Next() {
			b.Fatal(rows.Err())
		}
	}
	b.StopTimer()
	if err := conn.PgConn().CancelRequest(ctx); err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
	}
}
