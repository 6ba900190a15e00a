package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// exec1 prepares and executes one statement.
func exec1(ctx context.Context, s *Session, text string) (*Result, error) {
	stmts, err := sql.Parse(text)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, fmt.Errorf("%d statements in %q", len(stmts), text)
	}
	p, err := s.Prepare(ctx, stmts[0], nil)
	if err != nil {
		return nil, err
	}
	return s.Execute(ctx, p, nil)
}

// drain reads every row of it as "a|b" lines, then closes it.
func drain(it exec.Iterator, cols []types.Column) ([]string, error) {
	defer it.Close()
	var lines []string
	for {
		b, err := it.Next()
		if err != nil || b == nil {
			return lines, err
		}
		lines = append(lines, batchLines(b, cols)...)
		b.Release() // as the wire does: the batch is the caller's
	}
}

func batchLines(b arrow.RecordBatch, cols []types.Column) []string {
	var lines []string
	for r := 0; r < int(b.NumRows()); r++ {
		var f []string
		for c := range cols {
			v := types.ValueAt(b.Column(c), r, cols[c].Type)
			if v == nil {
				f = append(f, "NULL")
			} else {
				f = append(f, types.FormatText(v, cols[c].Type, &types.DefaultFormat))
			}
		}
		lines = append(lines, strings.Join(f, "|"))
	}
	return lines
}

// fetch runs FETCH/MOVE text and returns rows and the tag as the wire
// would complete it.
func fetch(t *testing.T, s *Session, text string) ([]string, string, error) {
	t.Helper()
	res, err := exec1(context.Background(), s, text)
	if err != nil {
		return nil, "", err
	}
	if res.Rows == nil {
		return nil, res.Tag, nil
	}
	lines, err := drain(res.Rows, res.Columns)
	return lines, fmt.Sprintf("%s %d", res.Tag, len(lines)), err
}

func runAll(t *testing.T, s *Session, texts ...string) {
	t.Helper()
	for _, q := range texts {
		if _, _, err := run(t, s, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func wantCode(t *testing.T, err error, code pgerr.Code, what string) {
	t.Helper()
	if pgerr.CodeOf(err) != code {
		t.Fatalf("%s: got %v, want SQLSTATE %s", what, err, code)
	}
}

func TestCursorFetchMoveClose(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	runAll(t, s, "CREATE TABLE ct (a int, b text)")
	var vals []string
	for i := 1; i <= 10; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 'r%d')", i, i))
	}
	runAll(t, s, "INSERT INTO ct VALUES "+strings.Join(vals, ", "))

	_, err := exec1(context.Background(), s, "DECLARE c CURSOR FOR SELECT * FROM ct")
	wantCode(t, err, pgerr.NoActiveSQLTransaction, "DECLARE outside a block")

	runAll(t, s, "BEGIN", "DECLARE c NO SCROLL CURSOR FOR SELECT a, b FROM ct ORDER BY a")
	_, err = exec1(context.Background(), s, "DECLARE c CURSOR FOR SELECT 1")
	wantCode(t, err, pgerr.DuplicateCursor, "duplicate DECLARE")
	runAll(t, s, "ROLLBACK", "BEGIN", "DECLARE c NO SCROLL CURSOR FOR SELECT a, b FROM ct ORDER BY a")

	steps := []struct{ q, rows, tag string }{
		{"FETCH 0 c", "", "FETCH 0"},
		{"FETCH 2 FROM c", "1|r1,2|r2", "FETCH 2"},
		{"FETCH c", "3|r3", "FETCH 1"},
		{"FETCH NEXT IN c", "4|r4", "FETCH 1"},
		{"MOVE 2 c", "", "MOVE 2"},
		{"FETCH RELATIVE 2 c", "8|r8", "FETCH 1"},
		{"FETCH ABSOLUTE 9 c", "9|r9", "FETCH 1"},
		{"MOVE 0 c", "", "MOVE 1"},
		{"FETCH ALL c", "10|r10", "FETCH 1"},
		{"FETCH ALL c", "", "FETCH 0"},
		{"MOVE ALL c", "", "MOVE 0"},
	}
	for _, st := range steps {
		rows, tag, err := fetch(t, s, st.q)
		if err != nil || strings.Join(rows, ",") != st.rows || tag != st.tag {
			t.Fatalf("%s: rows %v tag %q err %v; want %s %q", st.q, rows, tag, err, st.rows, st.tag)
		}
	}
	_, _, err = fetch(t, s, "FETCH PRIOR c")
	wantCode(t, err, pgerr.ObjectNotInPrerequisiteState, "backward on NO SCROLL")
	runAll(t, s, "ROLLBACK")
	_, _, err = fetch(t, s, "FETCH c")
	wantCode(t, err, pgerr.InvalidCursorName, "cursor after rollback")

	// CLOSE, CLOSE ALL, an unknown cursor.
	runAll(t, s, "BEGIN", "DECLARE c1 CURSOR FOR SELECT 1", "DECLARE c2 CURSOR FOR SELECT 2")
	if _, tag, err := run(t, s, "CLOSE c1"); err != nil || tag != "CLOSE CURSOR" {
		t.Fatalf("close: %q %v", tag, err)
	}
	_, _, err = run(t, s, "CLOSE c1")
	wantCode(t, err, pgerr.InvalidCursorName, "close twice")
	runAll(t, s, "ROLLBACK", "BEGIN", "DECLARE c1 CURSOR FOR SELECT 1", "DECLARE c2 CURSOR FOR SELECT 2")
	if _, tag, err := run(t, s, "CLOSE ALL"); err != nil || tag != "CLOSE CURSOR ALL" || len(s.cursors) != 0 {
		t.Fatalf("close all: %q %v %d", tag, err, len(s.cursors))
	}
	runAll(t, s, "COMMIT", "DECLARE h CURSOR WITH HOLD FOR SELECT 1", "DISCARD ALL")
	if len(s.cursors) != 0 {
		t.Fatalf("cursors after DISCARD ALL: %d", len(s.cursors))
	}
}

func TestCursorScroll(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	runAll(t, s, "BEGIN", "DECLARE c SCROLL CURSOR FOR SELECT g FROM generate_series(1, 5) g")
	steps := []struct{ q, rows, tag string }{
		{"FETCH 2 c", "1,2", "FETCH 2"},
		{"FETCH PRIOR c", "1", "FETCH 1"},
		{"FETCH LAST c", "5", "FETCH 1"},
		{"FETCH BACKWARD 2 c", "4,3", "FETCH 2"},
		{"FETCH FIRST c", "1", "FETCH 1"},
		{"FETCH ABSOLUTE -2 c", "4", "FETCH 1"},
		{"FETCH RELATIVE 0 c", "4", "FETCH 1"},
		{"MOVE BACKWARD ALL c", "", "MOVE 3"},
		{"FETCH ALL c", "1,2,3,4,5", "FETCH 5"},
		{"FETCH BACKWARD ALL c", "5,4,3,2,1", "FETCH 5"},
		{"FETCH -1 c", "", "FETCH 0"},
		{"FETCH ABSOLUTE 0 c", "", "FETCH 0"},
	}
	for _, st := range steps {
		rows, tag, err := fetch(t, s, st.q)
		if err != nil || strings.Join(rows, ",") != st.rows || tag != st.tag {
			t.Fatalf("%s: rows %v tag %q err %v; want %s %q", st.q, rows, tag, err, st.rows, st.tag)
		}
	}
}

// TestCursorWithHold: a held cursor reads its rows at COMMIT and survives
// it, unaffected by later writes; one whose query fails fails the COMMIT;
// a rolled-back block takes its held cursors with it.
func TestCursorWithHold(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	runAll(t, s, "CREATE TABLE h (a int)", "INSERT INTO h VALUES (1), (2), (3)")
	runAll(t, s, "BEGIN", "DECLARE c CURSOR WITH HOLD FOR SELECT a FROM h ORDER BY a", "COMMIT")
	runAll(t, s, "INSERT INTO h VALUES (4)", "DELETE FROM h WHERE a = 1")
	if rows, _, err := fetch(t, s, "FETCH ALL c"); err != nil || strings.Join(rows, ",") != "1,2,3" {
		t.Fatalf("held rows %v %v", rows, err)
	}
	// Outside a block it is read at DECLARE.
	runAll(t, s, "DECLARE d CURSOR WITH HOLD FOR SELECT a FROM h ORDER BY a", "INSERT INTO h VALUES (5)")
	if rows, _, err := fetch(t, s, "FETCH ALL d"); err != nil || strings.Join(rows, ",") != "2,3,4" {
		t.Fatalf("held rows %v %v", rows, err)
	}
	runAll(t, s, "BEGIN", "DECLARE z CURSOR WITH HOLD FOR SELECT 10 / (a - 3) FROM h")
	_, _, err := run(t, s, "COMMIT")
	wantCode(t, err, pgerr.DivisionByZero, "commit materializing a failing cursor")
	if s.TxStatus() != 'I' || s.cursors["z"] != nil {
		t.Fatalf("after failed commit: status %c, cursor %v", s.TxStatus(), s.cursors["z"])
	}
	runAll(t, s, "BEGIN", "DECLARE r CURSOR WITH HOLD FOR SELECT 1", "ROLLBACK")
	_, _, err = fetch(t, s, "FETCH r")
	wantCode(t, err, pgerr.InvalidCursorName, "held cursor of a rolled back block")
	// An error while fetching fails the cursor, as a portal in PostgreSQL.
	runAll(t, s, "DECLARE f NO SCROLL CURSOR WITH HOLD FOR SELECT 1")
	_, _, err = fetch(t, s, "FETCH BACKWARD 1 f")
	wantCode(t, err, pgerr.ObjectNotInPrerequisiteState, "backward")
	_, _, err = fetch(t, s, "FETCH f")
	wantCode(t, err, pgerr.ObjectNotInPrerequisiteState, "failed cursor")
	// Session.Close closes every cursor.
	s.Close()
	if len(s.cursors) != 0 {
		t.Fatalf("cursors left after Close: %d", len(s.cursors))
	}
}

// TestDeclareWithParameters: a DECLARE's query takes $n parameters
// (psycopg's server-side cursors bind them).
func TestDeclareWithParameters(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	runAll(t, s, "BEGIN")
	stmts, err := sql.Parse("DECLARE c CURSOR FOR SELECT g FROM generate_series(1, 10) g WHERE g > $1")
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Prepare(context.Background(), stmts[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.ParamTypes) != 1 || p.Columns != nil {
		t.Fatalf("params %v columns %v", p.ParamTypes, p.Columns)
	}
	if _, err := s.Execute(context.Background(), p, []types.Value{int64(7)}); err != nil {
		t.Fatal(err)
	}
	if rows, _, err := fetch(t, s, "FETCH ALL c"); err != nil || strings.Join(rows, ",") != "8,9,10" {
		t.Fatalf("rows %v %v", rows, err)
	}
}

// feedIter is a fake subscription: batches arrive on ch; Next waits for
// one (or for its context); it never ends.
type feedIter struct {
	ctx    context.Context
	ch     chan arrow.RecordBatch
	closed chan struct{}
	once   sync.Once
}

func (f *feedIter) Next() (arrow.RecordBatch, error) {
	select {
	case b := <-f.ch:
		return b, nil
	case <-f.ctx.Done():
		return nil, f.ctx.Err()
	}
}

func (f *feedIter) TryNext() (arrow.RecordBatch, bool, error) {
	select {
	case b := <-f.ch:
		return b, true, nil
	default:
		return nil, false, nil
	}
}

func (f *feedIter) Close() error {
	f.once.Do(func() { close(f.closed) })
	return nil
}

var feedCols = []types.Column{{Name: "op", Type: types.TText}, {Name: "x", Type: types.TInt4}}

// feedBatch makes rows ("+", from..to).
func feedBatch(from, to int) arrow.RecordBatch {
	ops := array.NewStringBuilder(memory.DefaultAllocator)
	xs := array.NewInt32Builder(memory.DefaultAllocator)
	for i := from; i <= to; i++ {
		ops.Append("+")
		xs.Append(int32(i))
	}
	return array.NewRecordBatch(types.ArrowSchema(feedCols), []arrow.Array{ops.NewArray(), xs.NewArray()}, int64(to-from+1))
}

// fakeSubscriptions installs a SUBSCRIBE that serves feedIters; it returns
// a channel of the iterators started.
func fakeSubscriptions(e *Engine) chan *feedIter {
	started := make(chan *feedIter, 8)
	e.subscribe = func(ctx context.Context, s *Session, sub *sql.Subscribe) ([]types.Column, func(context.Context) (exec.Iterator, error), error) {
		return feedCols, func(ctx context.Context) (exec.Iterator, error) {
			f := &feedIter{ctx: ctx, ch: make(chan arrow.RecordBatch, 16), closed: make(chan struct{})}
			started <- f
			return f, nil
		}, nil
	}
	return started
}

func waitClosed(t *testing.T, f *feedIter, what string) {
	t.Helper()
	select {
	case <-f.closed:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: subscription not closed", what)
	}
}

// TestSubscribeQuery: a plain SUBSCRIBE's rows come as they arrive; the
// statement's context ends it.
func TestSubscribeQuery(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	_, err := exec1(context.Background(), s, "SUBSCRIBE TO v")
	wantCode(t, err, pgerr.UndefinedTable, "SUBSCRIBE to a missing view")
	started := fakeSubscriptions(e)
	ctx, cancel := context.WithCancel(context.Background())
	res, err := exec1(ctx, s, "SUBSCRIBE TO v")
	if err != nil {
		t.Fatal(err)
	}
	f := <-started
	try, ok := res.Rows.(TryNexter)
	if !ok || res.Tag != "SUBSCRIBE" || len(res.Columns) != 2 {
		t.Fatalf("result %+v (TryNexter %v)", res, ok)
	}
	if _, ready, err := try.TryNext(); ready || err != nil {
		t.Fatalf("TryNext before rows: %v %v", ready, err)
	}
	f.ch <- feedBatch(1, 2)
	b, err := res.Rows.Next()
	if err != nil || strings.Join(batchLines(b, feedCols), ",") != "+|1,+|2" {
		t.Fatalf("rows %v %v", b, err)
	}
	cancel()
	if _, err := res.Rows.Next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v", err)
	}
	res.Rows.Close()
	waitClosed(t, f, "plain SUBSCRIBE")

	// COPY (SUBSCRIBE ...) TO STDOUT streams the same rows.
	res, err = exec1(context.Background(), s, "COPY (SUBSCRIBE TO v) TO STDOUT WITH (FORMAT csv)")
	if err != nil || res.CopyOut == nil || res.CopyOut.Format != "csv" {
		t.Fatalf("copy: %+v %v", res, err)
	}
	f = <-started
	if _, ok := res.CopyOut.Rows.(TryNexter); !ok {
		t.Fatal("COPY rows lost TryNext")
	}
	f.ch <- feedBatch(3, 3)
	if b, err := res.CopyOut.Rows.Next(); err != nil || b.NumRows() != 1 {
		t.Fatalf("copy rows %v %v", b, err)
	}
	res.CopyOut.Rows.Close()
	waitClosed(t, f, "COPY")
}

// TestSubscribeCursor: FETCH n from a subscription returns what is ready
// (at most n, at least one), waits when nothing is, and a canceled wait
// leaves the cursor usable.
func TestSubscribeCursor(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	started := fakeSubscriptions(e)
	_, err := exec1(context.Background(), s, "DECLARE c CURSOR FOR SUBSCRIBE TO v")
	wantCode(t, err, pgerr.NoActiveSQLTransaction, "DECLARE outside a block")
	runAll(t, s, "BEGIN")
	_, err = exec1(context.Background(), s, "DECLARE c SCROLL CURSOR FOR SUBSCRIBE TO v")
	wantCode(t, err, pgerr.FeatureNotSupported, "SCROLL over SUBSCRIBE")
	runAll(t, s, "ROLLBACK", "BEGIN", "DECLARE c CURSOR FOR SUBSCRIBE TO v")
	f := <-started

	f.ch <- feedBatch(1, 3)
	f.ch <- feedBatch(4, 5)
	if rows, tag, err := fetch(t, s, "FETCH 4 c"); err != nil || tag != "FETCH 4" || strings.Join(rows, ",") != "+|1,+|2,+|3,+|4" {
		t.Fatalf("fetch 4: %v %q %v", rows, tag, err)
	}
	// One row is left over and nothing else is ready: FETCH 10 returns it.
	if rows, tag, err := fetch(t, s, "FETCH 10 c"); err != nil || tag != "FETCH 1" || rows[0] != "+|5" {
		t.Fatalf("fetch 10: %v %q %v", rows, tag, err)
	}
	// Nothing ready: the FETCH waits for the first row.
	res, err := exec1(context.Background(), s, "FETCH ALL c")
	if err != nil {
		t.Fatal(err)
	}
	if _, ready, err := res.Rows.(TryNexter).TryNext(); ready || err != nil {
		t.Fatalf("TryNext of a waiting FETCH: %v %v", ready, err)
	}
	go func() { f.ch <- feedBatch(6, 7) }()
	if rows, err := drain(res.Rows, res.Columns); err != nil || strings.Join(rows, ",") != "+|6,+|7" {
		t.Fatalf("waiting fetch: %v %v", rows, err)
	}
	// A canceled wait: the cursor goes on (in the block, which failed).
	ctx, cancel := context.WithCancel(context.Background())
	res, err = exec1(ctx, s, "FETCH 1 c")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := drain(res.Rows, res.Columns)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled fetch: %v", err)
	}
	if c := s.cursors["c"]; c == nil || c.failed {
		t.Fatalf("cursor after a canceled wait: %+v", c)
	}
	f.ch <- feedBatch(8, 8)
	if rows, _, err := fetch(t, s, "FETCH 1 c"); err != nil || rows[0] != "+|8" {
		t.Fatalf("after cancel: %v %v", rows, err)
	}
	// MOVE skips what is ready.
	f.ch <- feedBatch(9, 11)
	if _, tag, err := fetch(t, s, "MOVE ALL c"); err != nil || tag != "MOVE 3" {
		t.Fatalf("move: %q %v", tag, err)
	}
	// COMMIT closes it (no HOLD).
	runAll(t, s, "COMMIT")
	waitClosed(t, f, "COMMIT")

	// WITH HOLD it outlives the block, still live; Session.Close ends it.
	runAll(t, s, "DECLARE h CURSOR WITH HOLD FOR SUBSCRIBE TO v")
	f = <-started
	f.ch <- feedBatch(1, 1)
	if rows, _, err := fetch(t, s, "FETCH 5 h"); err != nil || len(rows) != 1 {
		t.Fatalf("held subscription: %v %v", rows, err)
	}
	// A statement_timeout ends a waiting FETCH, not the cursor.
	runAll(t, s, "SET statement_timeout = 20")
	_, _, err = fetch(t, s, "FETCH 1 h")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("fetch past statement_timeout: %v", err)
	}
	runAll(t, s, "SET statement_timeout = 0")
	f.ch <- feedBatch(2, 2)
	if rows, _, err := fetch(t, s, "FETCH 5 h"); err != nil || rows[0] != "+|2" {
		t.Fatalf("held subscription after timeout: %v %v", rows, err)
	}
	s.Close()
	waitClosed(t, f, "Session.Close")
}

// TestCopyToUnderStatementTimeout: COPY TO's rows are read after Execute
// returns, so its statement_timeout must not end with Execute.
func TestCopyToUnderStatementTimeout(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	runAll(t, s, "SET statement_timeout = 60000")
	res, err := exec1(context.Background(), s, "COPY (SELECT g FROM generate_series(1, 10) g) TO STDOUT")
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := drain(res.CopyOut.Rows, res.CopyOut.Columns); err != nil || len(rows) != 10 {
		t.Fatalf("copy under statement_timeout: %d rows, %v", len(rows), err)
	}
}

// BenchmarkCursorFetch reads a million rows through FETCH FORWARD 1000
// (psql's FETCH_COUNT pattern) against one plain SELECT of the same rows.
func BenchmarkCursorFetch(b *testing.B) {
	e, err := Open(Config{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	s, err := e.NewSession("bench", "db", nil)
	if err != nil {
		b.Fatal(err)
	}
	const query = "SELECT g, g * 2 FROM generate_series(1, 1000000) g"
	count := func(res *Result) int64 {
		var n int64
		for {
			bt, err := res.Rows.Next()
			if err != nil {
				b.Fatal(err)
			}
			if bt == nil {
				break
			}
			n += bt.NumRows()
		}
		res.Rows.Close()
		return n
	}
	must := func(q string) *Result {
		res, err := exec1(context.Background(), s, q)
		if err != nil {
			b.Fatal(err)
		}
		return res
	}
	b.Run("select", func(b *testing.B) {
		for b.Loop() {
			if n := count(must(query)); n != 1000000 {
				b.Fatal(n)
			}
		}
		b.ReportMetric(float64(b.N)*1e6/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("fetch1000", func(b *testing.B) {
		for b.Loop() {
			must("BEGIN")
			must("DECLARE c NO SCROLL CURSOR FOR " + query)
			var total int64
			for {
				n := count(must("FETCH FORWARD 1000 FROM c"))
				if n == 0 {
					break
				}
				total += n
			}
			must("CLOSE c")
			must("COMMIT")
			if total != 1000000 {
				b.Fatal(total)
			}
		}
		b.ReportMetric(float64(b.N)*1e6/b.Elapsed().Seconds(), "rows/s")
	})
}
