package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster/clustertest"
)

// TestStatementLog: the coordinator appends statements numbered 1, 2,
// 3; a follower sees those written before it started and those written
// after, each once and in order; a coordinator whose term ended cannot
// append; the new one continues the numbering.
func TestStatementLog(t *testing.T) {
	e := clustertest.StartEtcd(t)
	a := join(t, e.Endpoint, "/dl", "a")
	waitFor(t, "a to be coordinator", a.IsCoordinator)
	b := join(t, e.Endpoint, "/dl", "b")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fa, err := a.Fence()
	if err != nil {
		t.Fatal(err)
	}
	st, err := fa.AppendStatement(ctx, Statement{SQL: "CREATE SOURCE s", OID: 16384})
	if err != nil || st.Seq != 1 || st.Coordinator != "a" {
		t.Fatalf("first append %+v: %v", st, err)
	}
	seen := make(chan Statement, 10)
	fctx, fcancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- FollowStatements(fctx, b.Client(), "/dl", func(s Statement) error { seen <- s; return nil })
	}()
	if _, err := fa.AppendStatement(ctx, Statement{SQL: "CREATE MATERIALIZED VIEW v", Assignment: &Assignment{Generation: 7}}); err != nil {
		t.Fatal(err)
	}
	for want := uint64(1); want <= 2; want++ {
		select {
		case s := <-seen:
			if s.Seq != want {
				t.Fatalf("entry %d, want %d", s.Seq, want)
			}
			if want == 2 && (s.Assignment == nil || s.Assignment.Generation != 7) {
				t.Fatalf("entry 2's assignment %+v", s.Assignment)
			}
		case <-ctx.Done():
			t.Fatalf("entry %d not followed", want)
		}
	}

	expireLease(ctx, t, b, a)
	waitFor(t, "b to be coordinator", b.IsCoordinator)
	if _, err := fa.AppendStatement(ctx, Statement{SQL: "stale"}); !errors.Is(err, ErrNotCoordinator) {
		t.Fatalf("stale coordinator's append: %v", err)
	}
	fb, err := b.Fence()
	if err != nil {
		t.Fatal(err)
	}
	if s, err := fb.AppendStatement(ctx, Statement{SQL: "CREATE SOURCE t"}); err != nil || s.Seq != 3 || s.Coordinator != "b" {
		t.Fatalf("new coordinator's append %+v: %v", s, err)
	}
	select {
	case s := <-seen:
		if s.Seq != 3 || s.SQL != "CREATE SOURCE t" {
			t.Fatalf("followed %+v", s)
		}
	case <-ctx.Done():
		t.Fatal("entry 3 not followed")
	}
	fcancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("follow ended with %v", err)
	}
	select {
	case s := <-seen:
		t.Fatalf("entry %d seen twice or stale entry logged", s.Seq)
	default:
	}
}
