package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// subReader reads a subscription's rows as "op|epoch_time|col..." lines.
type subReader struct {
	t      *testing.T
	res    *Result
	cancel context.CancelFunc
	cols   []types.Column
}

func subscribe(t *testing.T, s *Session, text string) (*subReader, error) {
	t.Helper()
	stmts, err := sql.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	p, err := s.Prepare(ctx, stmts[0], nil)
	if err != nil {
		cancel()
		return nil, err
	}
	res, err := s.Execute(ctx, p, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	return &subReader{t: t, res: res, cancel: cancel, cols: p.Columns}, nil
}

// read returns the next n rows.
func (r *subReader) read(n int) []string {
	r.t.Helper()
	var out []string
	for len(out) < n {
		b, err := r.res.Rows.Next()
		if err != nil || b == nil {
			r.t.Fatalf("subscription after %v: %v", out, err)
		}
		for i := 0; i < int(b.NumRows()); i++ {
			var f []string
			for c, col := range r.cols {
				v := types.ValueAt(b.Column(c), i, col.Type)
				if v == nil {
					f = append(f, "NULL")
				} else {
					f = append(f, types.FormatText(v, col.Type, &types.DefaultFormat))
				}
			}
			out = append(out, strings.Join(f, "|"))
		}
	}
	return out
}

func (r *subReader) close() {
	r.res.Rows.Close()
	r.cancel()
}

// lastEpoch is the epoch_time of the last of rows.
func lastEpoch(rows []string) string { return strings.Split(rows[len(rows)-1], "|")[1] }

// body strips op's epoch_time: "op|cols".
func bodies(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		f := strings.Split(r, "|")
		out[i] = f[0] + "|" + strings.Join(f[2:], "|")
	}
	sort.Strings(out)
	return out
}

// A subscriber that went away resumes after the last epoch it saw: it gets
// exactly the changes it missed, then the live ones; the same after a
// restart of the server, also when epochs after the last checkpoint had
// already been sent (the replay is held back and only the difference
// goes out, here none).
func TestSubscribeSince(t *testing.T) {
	dir := t.TempDir()
	var logMu sync.Mutex
	var logs []string
	cfg := Config{DataDir: dir, CheckpointInterval: -1, Logf: func(f string, a ...any) {
		logMu.Lock()
		logs = append(logs, fmt.Sprintf(f, a...))
		logMu.Unlock()
	}}
	e, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := e.NewSession("tester", "db", nil)
	mustRun(t, s, "CREATE TABLE t (id int PRIMARY KEY, g int)")
	mustRun(t, s, "INSERT INTO t VALUES (1, 1), (2, 1), (3, 2)")
	mustRun(t, s, "CREATE MATERIALIZED VIEW per_g AS SELECT g, count(*) AS n FROM t GROUP BY g")

	sub, err := subscribe(t, s, "SUBSCRIBE TO per_g")
	if err != nil {
		t.Fatal(err)
	}
	snap := sub.read(2)
	w, _ := e.NewSession("writer", "db", nil)
	mustRun(t, w, "INSERT INTO t VALUES (4, 2); FLUSH")
	first := sub.read(2) // update 2|1 -> 2|2
	seen := lastEpoch(first)
	sub.close()
	if got := bodies(first); strings.Join(got, ",") != "update_after|2|2,update_before|2|1" {
		t.Fatalf("first changes: %v (snapshot %v)", got, snap)
	}

	// Missed while away: two epochs.
	mustRun(t, w, "INSERT INTO t VALUES (5, 3); FLUSH")
	mustRun(t, w, "DELETE FROM t WHERE id = 1; FLUSH")
	sub, err = subscribe(t, s, fmt.Sprintf("SUBSCRIBE TO per_g WITH (since = '%s')", seen))
	if err != nil {
		t.Fatal(err)
	}
	missed := sub.read(3)
	if got := bodies(missed); strings.Join(got, ",") != "insert|3|1,update_after|1|1,update_before|1|2" {
		t.Fatalf("missed changes: %v", missed)
	}
	mustRun(t, w, "INSERT INTO t VALUES (6, 3); FLUSH")
	live := sub.read(2)
	if got := bodies(live); strings.Join(got, ",") != "update_after|3|2,update_before|3|1" {
		t.Fatalf("live changes after resuming: %v", live)
	}
	seen = lastEpoch(live)
	sub.close()

	if got := mustRun(t, s, "SELECT changes_kept_since IS NOT NULL, changes_kept_bytes > 0 FROM streamsql_views WHERE viewname = 'per_g'"); strings.Join(got, ",") != "t|t" {
		t.Fatalf("streamsql_views of a view with a subscriber: %v", got)
	}

	// Bad values.
	if _, err := subscribe(t, s, "SUBSCRIBE TO per_g WITH (since = 'yesterday', snapshot = true)"); pgerr.CodeOf(err) != pgerr.InvalidParameterValue {
		t.Fatalf("since with snapshot: %v", err)
	}
	if _, err := subscribe(t, s, "SUBSCRIBE TO per_g WITH (since = '2001-01-01')"); pgerr.CodeOf(err) != pgerr.ObjectNotInPrerequisiteState {
		t.Fatalf("since before the log: %v", err)
	}
	if _, err := subscribe(t, s, "SUBSCRIBE TO per_g WITH (since = '2999-01-01')"); pgerr.CodeOf(err) != pgerr.InvalidParameterValue {
		t.Fatalf("since in the future: %v", err)
	}
	if _, err := subscribe(t, s, "SUBSCRIBE (SELECT * FROM t) WITH (since = '2001-01-01')"); pgerr.CodeOf(err) != pgerr.FeatureNotSupported {
		t.Fatalf("since on a query: %v", err)
	}

	// A checkpoint, then changes sent to subscribers after it; a restart
	// resumes from the checkpoint and replays them.
	mustRun(t, w, "CHECKPOINT")
	mustRun(t, w, "UPDATE t SET g = 3 WHERE id = 2; FLUSH")
	sub, err = subscribe(t, s, fmt.Sprintf("SUBSCRIBE TO per_g WITH (since = '%s')", seen))
	if err != nil {
		t.Fatal(err)
	}
	after := sub.read(3)
	if got := bodies(after); strings.Join(got, ",") != "delete|1|1,update_after|3|3,update_before|3|2" {
		t.Fatalf("after the checkpoint: %v", after)
	}
	seen = lastEpoch(after)
	sub.close()
	e.Close()

	e, err = Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, _ = e.NewSession("tester", "db", nil)
	w, _ = e.NewSession("writer", "db", nil)
	sub, err = subscribe(t, s, fmt.Sprintf("SUBSCRIBE TO per_g WITH (since = '%s')", seen))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.close()
	mustRun(t, w, "INSERT INTO t VALUES (7, 2); FLUSH")
	got := sub.read(2)
	if b := bodies(got); strings.Join(b, ",") != "update_after|2|3,update_before|2|2" {
		t.Fatalf("after the restart: %v (the replayed epoch must not be sent again)", got)
	}
	if got := strings.Join(mustRun(t, s, "SELECT * FROM per_g ORDER BY g"), ","); got != "2|3,3|3" {
		t.Fatalf("view after the restart: %s", got)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if !strings.Contains(strings.Join(logs, "\n"), "holding its changes") {
		t.Fatalf("the view did not resume with changes held back; log:\n%s", strings.Join(logs, "\n"))
	}
}

// A view rebuilt (ALTER TABLE under it) or whose last subscriber left
// longer than the retention ago keeps no history: resuming from before is
// refused (55000), never answered with a gap.
func TestSubscribeSinceRefused(t *testing.T) {
	dir := t.TempDir()
	e, err := Open(Config{DataDir: dir, CheckpointInterval: -1, ChangelogRetention: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, _ := e.NewSession("tester", "db", nil)
	w, _ := e.NewSession("writer", "db", nil)
	mustRun(t, s, "CREATE TABLE t (id int PRIMARY KEY, g int)")
	mustRun(t, s, "CREATE MATERIALIZED VIEW v AS SELECT g, count(*) AS n FROM t GROUP BY g")
	mustRun(t, s, "CREATE MATERIALIZED VIEW u AS SELECT id FROM t")

	seenOf := func(view string) string {
		sub, err := subscribe(t, s, "SUBSCRIBE TO "+view+" WITH (snapshot = false)")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.close()
		mustRun(t, w, fmt.Sprintf("INSERT INTO t VALUES (%d, 1); FLUSH", time.Now().UnixNano()%1000000))
		return lastEpoch(sub.read(1))
	}

	// Rebuilt: ALTER TABLE restarts the views over t.
	seen := seenOf("v")
	if _, err := subscribe(t, s, fmt.Sprintf("SUBSCRIBE TO v WITH (since = '%s')", seen)); err != nil {
		t.Fatalf("resuming before the ALTER: %v", err)
	}
	mustRun(t, w, "ALTER TABLE t ADD COLUMN c int")
	if _, err := subscribe(t, s, fmt.Sprintf("SUBSCRIBE TO v WITH (since = '%s')", seen)); pgerr.CodeOf(err) != pgerr.ObjectNotInPrerequisiteState {
		t.Fatalf("resuming across a rebuild: %v", err)
	}

	// Retention: once nobody subscribed for longer, the log goes.
	seen = seenOf("u")
	deadline := time.Now().Add(20 * time.Second)
	for {
		// The retention is wall-clock time with no client subscribed: let
		// it pass, then an epoch lets the view notice.
		time.Sleep(60 * time.Millisecond)
		mustRun(t, w, "FLUSH")
		sub, err := subscribe(t, s, fmt.Sprintf("SUBSCRIBE TO u WITH (since = '%s')", seen))
		if pgerr.CodeOf(err) == pgerr.ObjectNotInPrerequisiteState {
			break
		}
		if err != nil {
			t.Fatalf("resuming u: %v", err)
		}
		sub.close()
		if time.Now().After(deadline) {
			t.Fatal("the changelog was still kept long after the retention")
		}
	}
	if got := mustRun(t, s, "SELECT viewname, changes_kept_since IS NULL, changes_kept_bytes FROM streamsql_views ORDER BY 1"); strings.Join(got, ",") != "u|t|0,v|t|0" {
		t.Fatalf("streamsql_views of views keeping no changes: %v", got)
	}
}

// A subscriber more than SubscribeBufferBytes behind goes on from the
// view's changelog: it still gets every change, each once.
func TestSubscriberOverflowReadsTheLog(t *testing.T) {
	e, err := Open(Config{DataDir: t.TempDir(), SubscribeBufferBytes: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, _ := e.NewSession("tester", "db", nil)
	w, _ := e.NewSession("writer", "db", nil)
	mustRun(t, s, "CREATE TABLE big (id bigint); INSERT INTO big VALUES (0); CREATE MATERIALIZED VIEW bv AS SELECT id FROM big")
	for _, q := range []string{"SUBSCRIBE TO bv", "SUBSCRIBE TO bv WITH (snapshot = false)"} {
		sub, err := subscribe(t, s, q)
		if err != nil {
			t.Fatal(err)
		}
		const n = 30000
		for b := 0; b < 3; b++ {
			mustRun(t, w, fmt.Sprintf("INSERT INTO big SELECT generate_series(%d, %d); FLUSH", b*n+1, (b+1)*n))
		}
		want := 3 * n
		if q == "SUBSCRIBE TO bv" {
			want++ // the snapshot's row
		}
		seen := map[string]bool{}
		for _, r := range sub.read(want) {
			f := strings.Split(r, "|")
			if f[0] != "insert" || seen[f[2]] {
				t.Fatalf("%s: %s (seen before: %v)", q, r, seen[f[2]])
			}
			seen[f[2]] = true
		}
		sub.close()
		mustRun(t, w, "DELETE FROM big WHERE id > 0; FLUSH")
	}
}
