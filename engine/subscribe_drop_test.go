package engine

import (
	"errors"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// A subscription whose table, view or query input is dropped ends with
// 55000 naming what was dropped, as a view's subscription does, instead of
// sending progress rows forever.
func TestSubscriptionEndsWhenItsInputIsDropped(t *testing.T) {
	e, err := Open(Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, _ := e.NewSession("tester", "db", nil)
	w, _ := e.NewSession("writer", "db", nil)
	for _, c := range []struct{ setup, sub, drop, want string }{
		{"CREATE MATERIALIZED VIEW v AS SELECT id FROM t", "SUBSCRIBE TO v WITH (progress = true)", "DROP MATERIALIZED VIEW v",
			`subscription ended: materialized view "v" was dropped`},
		{"", "SUBSCRIBE TO t WITH (progress = true)", "DROP TABLE t", `subscription ended: table "t" was dropped`},
		{"", "SUBSCRIBE TO (SELECT id * 2 AS d FROM t WHERE id > 0) WITH (progress = true)", "DROP TABLE t",
			`subscription ended: table "t" was dropped`},
		{"CREATE MATERIALIZED VIEW v AS SELECT id FROM t", "SUBSCRIBE TO (SELECT id + 1 AS d FROM v) WITH (progress = true)", "DROP MATERIALIZED VIEW v",
			`subscription ended: materialized view "v" was dropped`},
		{"CREATE SOURCE src WITH (connector = 'nexmark', table = 'bid', events_per_second = '10')", "SUBSCRIBE TO src WITH (progress = true)", "DROP SOURCE src",
			`subscription ended: source "src" was dropped`},
		{"CREATE SOURCE src WITH (connector = 'nexmark', table = 'bid', events_per_second = '10')", "SUBSCRIBE (SELECT auction FROM src) WITH (progress = true)", "DROP SOURCE src",
			`subscription ended: source "src" was dropped`},
	} {
		mustRun(t, w, "CREATE TABLE t (id bigint); INSERT INTO t VALUES (1)")
		if c.setup != "" {
			mustRun(t, w, c.setup)
		}
		sub, err := subscribe(t, s, c.sub)
		if err != nil {
			t.Fatal(err)
		}
		sub.read(1) // the snapshot
		mustRun(t, w, c.drop)
		mustRun(t, w, "FLUSH")
		for {
			// Progress rows may come before the end; the end must come.
			_, err := sub.res.Rows.Next()
			if err == nil {
				continue
			}
			var pe *pgerr.Error
			if !errors.As(err, &pe) || pe.Code != pgerr.ObjectNotInPrerequisiteState || pe.Message != c.want {
				t.Fatalf("%s after %s: %v, want 55000 %s", c.sub, c.drop, err, c.want)
			}
			break
		}
		sub.close()
		mustRun(t, w, "DROP TABLE IF EXISTS t CASCADE; DROP SOURCE IF EXISTS src")
	}
}
