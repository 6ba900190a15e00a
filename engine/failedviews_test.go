package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// query runs one SELECT and returns its rows and notices.
func query(t *testing.T, s *Session, q string) ([]string, []*pgerr.Error, error) {
	t.Helper()
	stmts, err := sql.Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Prepare(context.Background(), stmts[0], nil)
	if err != nil {
		return nil, nil, err
	}
	res, err := s.Execute(context.Background(), p, make([]types.Value, len(p.ParamTypes)))
	if err != nil {
		return nil, nil, err
	}
	var rows []string
	for {
		b, err := res.Rows.Next()
		if err != nil {
			return nil, nil, err
		}
		if b == nil {
			break
		}
		for i := 0; i < int(b.NumRows()); i++ {
			var vals []string
			for c, col := range p.Columns {
				v := types.ValueAt(b.Column(c), i, col.Type)
				if v == nil {
					vals = append(vals, "NULL")
				} else {
					vals = append(vals, types.FormatText(v, col.Type, nil))
				}
			}
			rows = append(rows, strings.Join(vals, "|"))
		}
	}
	res.Rows.Close()
	return rows, res.Notices, nil
}

// waitFor runs q until its rows are want (a followed file's rows come as
// the reader finds them; FLUSH does not wait for them). The deadline only
// turns a hang into a failure.
func waitFor(t *testing.T, s *Session, q, want string) {
	t.Helper()
	var got []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mustRun(t, s, "FLUSH")
		if got = mustRun(t, s, q); strings.Join(got, ",") == want {
			return
		}
	}
	t.Fatalf("%s: %v, want %s", q, got, want)
}

// TestFailedViewKeepsRowsAndResumes: a view whose source fails (its file
// replaced by a FIFO, which the file connector refuses) keeps its last
// rows, readable with a WARNING naming the failure, alone or joined with a
// running view; ALTER MATERIALIZED VIEW ... RESUME starts it again once the
// file is fixed, and so does the retry loop by itself. Reading a failed view
// used to be an error (55000).
func TestFailedViewKeepsRowsAndResumes(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	path := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "CREATE TABLE t (a int)")
	mustRun(t, s, "INSERT INTO t VALUES (1)")
	mustRun(t, s, "CREATE MATERIALIZED VIEW tv AS SELECT count(*) AS n FROM t")
	mustRun(t, s, "CREATE SOURCE f (line text) WITH (connector = 'file', path = '"+path+"', follow = 'true', delimiter = '|') FORMAT CSV")
	mustRun(t, s, "CREATE MATERIALIZED VIEW fv AS SELECT count(*) AS n FROM f")
	waitFor(t, s, "SELECT n FROM fv", "2") // a follower reads at its own pace

	// The file is replaced by a FIFO: the follower reopens it and fails.
	if err := os.Rename(path, path+".old"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	rel, err := e.cat.Resolve("", "fv", s.set.searchPath())
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if j := e.flow.Job(rel.OID); j != nil && j.Err() != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("fv did not fail")
		}
	}
	if got := mustRun(t, s, "SELECT status FROM streamsql_views WHERE viewname = 'fv'"); strings.Join(got, ",") != "failed" {
		t.Fatalf("status: %v", got)
	}
	rows, notices, err := query(t, s, "SELECT n FROM fv")
	if err != nil || strings.Join(rows, ",") != "2" || len(notices) != 1 ||
		notices[0].Severity != pgerr.SevWarning || !strings.HasPrefix(notices[0].Message, `materialized view "fv" failed: `) ||
		!strings.Contains(notices[0].Hint, "ALTER MATERIALIZED VIEW fv RESUME") {
		t.Fatalf("reading failed fv: %v %v %v", rows, notices, err)
	}
	rows, notices, err = query(t, s, "SELECT fv.n, tv.n FROM fv, tv")
	if err != nil || strings.Join(rows, ",") != "2|1" || len(notices) != 1 {
		t.Fatalf("joining failed fv: %v %v %v", rows, notices, err)
	}
	mustRun(t, s, "INSERT INTO t VALUES (2)")
	mustRun(t, s, "FLUSH")
	if rows, _, err = query(t, s, "SELECT fv.n, tv.n FROM fv, tv"); err != nil || strings.Join(rows, ",") != "2|2" {
		t.Fatalf("tv goes on: %v %v", rows, err)
	}

	// Still broken: RESUME says so, the rows stay readable.
	_, _, err = run(t, s, "ALTER MATERIALIZED VIEW fv RESUME")
	wantErr(t, err, pgerr.ObjectNotInPrerequisiteState, "")
	if !strings.Contains(err.Error(), `materialized view "fv"`) {
		t.Fatalf("resume while broken: %v", err)
	}
	if !strings.Contains(err.Error(), "cannot resume") {
		t.Fatalf("resume while broken: %v", err)
	}
	if rows, notices, err = query(t, s, "SELECT n FROM fv"); err != nil || strings.Join(rows, ",") != "2" || len(notices) != 1 {
		t.Fatalf("failed fv after a failed RESUME: %v %v %v", rows, notices, err)
	}
	// Fixed: RESUME rebuilds it from the file as it is now.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, tag, err := run(t, s, "ALTER MATERIALIZED VIEW fv RESUME"); err != nil || tag != "ALTER MATERIALIZED VIEW" {
		t.Fatalf("resume: %q %v", tag, err)
	}
	waitFor(t, s, "SELECT n FROM fv", "3")
	rows, notices, err = query(t, s, "SELECT n FROM fv")
	if err != nil || strings.Join(rows, ",") != "3" || len(notices) != 0 {
		t.Fatalf("fv after RESUME: %v %v %v", rows, notices, err)
	}
	if got := mustRun(t, s, "SELECT status FROM streamsql_views WHERE viewname = 'fv'"); strings.Join(got, ",") != "running" {
		t.Fatalf("status after RESUME: %v", got)
	}

	// It fails again; once its file is fixed the retry loop (called here
	// directly, as its ticker does) restarts it by itself.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if j := e.flow.Job(rel.OID); j != nil && j.Err() != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("fv did not fail again")
		}
	}
	if got := e.retryFailedViews(); len(got) != 0 {
		t.Fatalf("restarted while its file is a FIFO: %v", got)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := e.retryFailedViews(); strings.Join(got, ",") != "fv" {
		t.Fatalf("retry restarted %v", got)
	}
	waitFor(t, s, "SELECT status, n FROM streamsql_views, fv WHERE viewname = 'fv'", "running|1")

	_, _, err = run(t, s, "ALTER MATERIALIZED VIEW t RESUME")
	wantErr(t, err, pgerr.WrongObjectType, `"t" is not a materialized view`)
	_, _, err = run(t, s, "ALTER MATERIALIZED VIEW nope RESUME")
	wantErr(t, err, pgerr.UndefinedTable, `relation "nope" does not exist`)
	if _, _, err := run(t, s, "ALTER MATERIALIZED VIEW IF EXISTS nope RESUME"); err != nil {
		t.Fatal(err)
	}
}

// TestFollowedFileTruncated: a followed file truncated in place (logrotate's
// copytruncate) no longer fails its view: the source reads it again from
// its start, the event is counted in streamsql_views.row_errors and named
// in last_error, and the view keeps running with its rows.
func TestFollowedFileTruncated(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	path := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "CREATE SOURCE f (line text) WITH (connector = 'file', path = '"+path+"', follow = 'true', delimiter = '|') FORMAT CSV")
	mustRun(t, s, "CREATE MATERIALIZED VIEW fv AS SELECT count(*) AS n FROM f")
	waitFor(t, s, "SELECT n FROM fv", "2")
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "SELECT status, row_errors, last_error LIKE '%was truncated from 4 to 0 bytes while followed: reading it again from its start' FROM streamsql_views WHERE viewname = 'fv'", "running|1|t")
	if err := os.WriteFile(path, []byte("c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "SELECT n FROM fv", "3")
	rows, notices, err := query(t, s, "SELECT n FROM fv")
	if err != nil || strings.Join(rows, ",") != "3" || len(notices) != 0 {
		t.Fatalf("fv: %v %v %v", rows, notices, err)
	}
}
