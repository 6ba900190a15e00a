package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// logLines collects an engine's log lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *logLines) has(sub string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// execNotices runs one statement, reads and closes its rows (or its COPY
// data) and returns its notices.
func execNotices(t *testing.T, s *Session, q string) ([]*pgerr.Error, error) {
	t.Helper()
	stmts, err := sql.Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Prepare(context.Background(), stmts[0], nil)
	if err != nil {
		return nil, err
	}
	res, err := s.Execute(context.Background(), p, make([]types.Value, len(p.ParamTypes)))
	if err != nil {
		return nil, err
	}
	rows := res.Rows
	if res.CopyOut != nil {
		rows = res.CopyOut.Rows
	}
	if rows != nil {
		for {
			b, err := rows.Next()
			if err != nil {
				rows.Close()
				return nil, err
			}
			if b == nil {
				break
			}
		}
		rows.Close()
	}
	return res.Notices, nil
}

// recoveringNotice checks that notices are one NOTICE saying view is
// recovering from a checkpoint.
func recoveringNotice(t *testing.T, what string, notices []*pgerr.Error, view string) {
	t.Helper()
	if len(notices) != 1 || notices[0].Severity != pgerr.SevNotice ||
		!strings.HasPrefix(notices[0].Message, `materialized view "`+view+`" is recovering from checkpoint `) ||
		!strings.HasSuffix(notices[0].Message, ": replaying its input") {
		t.Fatalf("%s: notices %v, want one NOTICE that %s is recovering", what, notices, view)
	}
}

// TestRecoveryInBackground: with RecoverViewsInBackground, Open returns
// with the views still recovering (held here at RecoveryGate, before the
// replay of the writes after the checkpoint): tables are read and written,
// a view's rows are the checkpoint's, and every read of it (SELECT, a
// cursor, COPY TO) carries a NOTICE that it is recovering; streamsql_views
// says so; FLUSH and CREATE MATERIALIZED VIEW wait. Once the gate opens,
// FLUSH returns with the writes after the checkpoint in the views, and the
// recovery was logged step by step.
func TestRecoveryInBackground(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	mustRun(t, s, "CREATE TABLE t (id int PRIMARY KEY, g int)")
	mustRun(t, s, "INSERT INTO t SELECT i, i % 3 FROM generate_series(1, 30) i")
	mustRun(t, s, "CREATE MATERIALIZED VIEW per_g AS SELECT g, count(*) AS n FROM t GROUP BY g")
	mustRun(t, s, "CREATE MATERIALIZED VIEW big AS SELECT g, n FROM per_g WHERE n > 10")
	mustRun(t, s, "FLUSH")
	mustRun(t, s, "CHECKPOINT")
	mustRun(t, s, "INSERT INTO t VALUES (31, 0), (32, 0)") // replayed after the restart
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	gate := make(chan struct{})
	var logs logLines
	e, err := Open(Config{DataDir: dir, RecoverViewsInBackground: true, RecoveryGate: func(closing <-chan struct{}) {
		select {
		case <-gate:
		case <-closing:
		}
	}, Logf: logs.logf})
	if err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			close(gate)
		}
	}
	defer func() { release(); e.Close() }()
	s, err = e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRun(t, s, "SELECT count(*) FROM t"); strings.Join(got, ",") != "32" {
		t.Fatalf("table while views recover: %v", got)
	}
	mustRun(t, s, "INSERT INTO t VALUES (33, 1)")

	rows, notices, err := query(t, s, "SELECT g, n FROM per_g ORDER BY g")
	if err != nil || strings.Join(rows, ",") != "0|10,1|10,2|10" {
		t.Fatalf("per_g while recovering: %v %v (want the checkpoint's rows)", rows, err)
	}
	recoveringNotice(t, "SELECT", notices, "per_g")
	_, notices, err = query(t, s, "SELECT p.g FROM per_g p JOIN big b ON p.g = b.g")
	if err != nil || len(notices) != 2 {
		t.Fatalf("two recovering views: %v %v", notices, err)
	}
	mustRun(t, s, "BEGIN")
	notices, err = execNotices(t, s, "DECLARE c CURSOR FOR SELECT * FROM per_g")
	if err != nil {
		t.Fatal(err)
	}
	recoveringNotice(t, "DECLARE", notices, "per_g")
	mustRun(t, s, "COMMIT")
	notices, err = execNotices(t, s, "COPY per_g TO STDOUT")
	if err != nil {
		t.Fatal(err)
	}
	recoveringNotice(t, "COPY", notices, "per_g")
	got := mustRun(t, s, "SELECT viewname, status, recovery FROM streamsql_views ORDER BY viewname")
	if len(got) != 2 || !strings.HasPrefix(got[0], "big|recovering|recovering from checkpoint ") ||
		!strings.HasPrefix(got[1], "per_g|recovering|recovering from checkpoint ") {
		t.Fatalf("streamsql_views while recovering: %v", got)
	}

	// FLUSH and DDL over views wait for the recovery.
	waited := make(chan string, 2)
	for _, q := range []string{"FLUSH", "CREATE MATERIALIZED VIEW later AS SELECT count(*) AS n FROM t"} {
		s2, err := e.NewSession("tester", "db", nil)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			_, _, err := run(t, s2, q)
			waited <- fmt.Sprintf("%s: %v", q, err)
		}()
	}
	// (Neither can return before the gate opens: the recovery cannot
	// end before it.)
	mustRun(t, s, "SELECT count(*) FROM per_g")
	select {
	case r := <-waited:
		t.Fatalf("returned while the views recover: %s", r)
	default:
	}
	release()
	for range 2 {
		if r := <-waited; !strings.HasSuffix(r, ": <nil>") {
			t.Fatal(r)
		}
	}
	rows, notices, err = query(t, s, "SELECT g, n FROM per_g ORDER BY g")
	if err != nil || strings.Join(rows, ",") != "0|12,1|11,2|10" || len(notices) != 0 {
		t.Fatalf("per_g after the recovery: %v %v %v", rows, notices, err)
	}
	if got := mustRun(t, s, "SELECT viewname, status, recovery FROM streamsql_views ORDER BY viewname"); strings.Join(got, ",") != "big|running|NULL,later|running|NULL,per_g|running|NULL" {
		t.Fatalf("streamsql_views after the recovery: %v", got)
	}
	for _, want := range []string{"recovery: tables and catalog opened in", "recovery: read checkpoint ",
		"recovery: materialized view per_g: restored from checkpoint ", "recovery: materialized view big: ready in ",
		"recovery: all 2 materialized views ready in "} {
		if !logs.has(want) {
			t.Errorf("no log line %q in:\n%s", want, logs.String())
		}
	}
}

// TestViewThatDidNotStartServesItsCheckpoint: a view whose recovery fails
// at start (its source file became a FIFO, which the file connector
// refuses) serves the rows of the checkpoint with a WARNING, for SELECT,
// cursors and COPY alike, and RESUME restarts it from the checkpoint once
// the file is back; its next checkpoint holds all of its state.
func TestViewThatDidNotStartServesItsCheckpoint(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, s := open(t, dir)
	mustRun(t, s, "CREATE SOURCE f (line text) WITH (connector = 'file', path = '"+path+"', delimiter = '|') FORMAT CSV")
	mustRun(t, s, "CREATE MATERIALIZED VIEW fv AS SELECT line, count(*) AS n FROM f GROUP BY line")
	mustRun(t, s, "FLUSH")
	mustRun(t, s, "CHECKPOINT")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".old"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}

	e, s = open(t, dir)
	defer e.Close()
	warned := func(what string, notices []*pgerr.Error) {
		t.Helper()
		if len(notices) != 1 || notices[0].Severity != pgerr.SevWarning ||
			!strings.HasPrefix(notices[0].Message, `materialized view "fv" did not start: `) ||
			!strings.Contains(notices[0].Detail, "checkpoint") {
			t.Fatalf("%s: notices %v, want the WARNING that fv did not start", what, notices)
		}
	}
	rows, notices, err := query(t, s, "SELECT line, n FROM fv ORDER BY line")
	if err != nil || strings.Join(rows, ",") != "a|1,b|1" {
		t.Fatalf("fv that did not start: %v %v (want its checkpointed rows)", rows, err)
	}
	warned("SELECT", notices)
	mustRun(t, s, "BEGIN")
	notices, err = execNotices(t, s, "DECLARE c CURSOR FOR SELECT * FROM fv")
	if err != nil {
		t.Fatal(err)
	}
	warned("DECLARE", notices)
	if got := mustRun(t, s, "FETCH ALL FROM c"); len(got) != 2 {
		t.Fatalf("FETCH from fv: %v", got)
	}
	mustRun(t, s, "COMMIT")
	notices, err = execNotices(t, s, "COPY (SELECT * FROM fv) TO STDOUT")
	if err != nil {
		t.Fatal(err)
	}
	warned("COPY", notices)
	if got := mustRun(t, s, "SELECT status, view_rows, epoch_time IS NOT NULL FROM streamsql_views WHERE viewname = 'fv'"); strings.Join(got, ",") != "failed|2|t" {
		t.Fatalf("status: %v", got)
	}

	// The file is back, rewritten and longer: RESUME restarts the view
	// from the checkpoint, at its byte offset (a rebuild would count x
	// and y instead of a and b).
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("x\ny\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "ALTER MATERIALIZED VIEW fv RESUME")
	mustRun(t, s, "FLUSH")
	rows, notices, err = query(t, s, "SELECT line, n FROM fv ORDER BY line")
	if err != nil || strings.Join(rows, ",") != "a|1,b|1,c|1" || len(notices) != 0 {
		t.Fatalf("fv after RESUME: %v %v %v (want it resumed from the checkpoint)", rows, notices, err)
	}
	if got := mustRun(t, s, "SELECT status, rows_in FROM streamsql_views WHERE viewname = 'fv'"); strings.Join(got, ",") != "running|1" {
		t.Fatalf("status after RESUME: %v", got)
	}
	// Its next checkpoint holds its whole state (the checkpoints since
	// the restart did not have it): a restart resumes it with every row.
	mustRun(t, s, "CHECKPOINT")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, s = open(t, dir)
	defer e.Close()
	rows, notices, err = query(t, s, "SELECT line, n FROM fv ORDER BY line")
	if err != nil || strings.Join(rows, ",") != "a|1,b|1,c|1" || len(notices) != 0 {
		t.Fatalf("fv after a restart: %v %v %v", rows, notices, err)
	}
	if got := mustRun(t, s, "SELECT status, rows_in FROM streamsql_views WHERE viewname = 'fv'"); strings.Join(got, ",") != "running|0" {
		t.Fatalf("status after a restart: %v (want resumed, not rebuilt)", got)
	}
}

// TestCloseDuringRecovery: Close while the views recover (held at the
// gate) returns, logs no failure, and the next start recovers them.
func TestCloseDuringRecovery(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	mustRun(t, s, "CREATE TABLE t (id int PRIMARY KEY)")
	mustRun(t, s, "INSERT INTO t SELECT i FROM generate_series(1, 10) i")
	mustRun(t, s, "CREATE MATERIALIZED VIEW c AS SELECT count(*) AS n FROM t")
	mustRun(t, s, "CHECKPOINT")
	mustRun(t, s, "INSERT INTO t VALUES (11)")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	var logs logLines
	e, err := Open(Config{DataDir: dir, RecoverViewsInBackground: true, Logf: logs.logf,
		RecoveryGate: func(closing <-chan struct{}) { <-closing }})
	if err != nil {
		t.Fatal(err)
	}
	s, err = e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRun(t, s, "SELECT n FROM c"); strings.Join(got, ",") != "10" {
		t.Fatalf("c while recovering: %v", got)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if logs.has("fail") {
		t.Fatalf("a stop during the recovery logged a failure:\n%s", logs.String())
	}
	e, s = open(t, dir)
	defer e.Close()
	if got := mustRun(t, s, "SELECT n FROM c"); strings.Join(got, ",") != "11" {
		t.Fatalf("c after the next start: %v", got)
	}
}
