package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// heap returns the live heap and the bytes allocated so far, after a GC.
func heap() (inuse, total uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse, m.TotalAlloc
}

// wantMemErr runs q and checks its SQLSTATE and message, and that it allocated
// less than maxAlloc bytes on the way.
func wantMemErr(t *testing.T, s *Session, q string, code pgerr.Code, msg string, maxAlloc uint64) {
	t.Helper()
	_, before := heap()
	_, _, err := run(t, s, q)
	_, after := heap()
	var pe *pgerr.Error
	if !errors.As(err, &pe) || pe.Code != code || !strings.Contains(pe.Message, msg) {
		t.Fatalf("%s: got %v, want %s %q", q, err, code, msg)
	}
	if d := after - before; d > maxAlloc {
		t.Fatalf("%s: allocated %d MB before failing, want < %d MB", q, d>>20, maxAlloc>>20)
	}
	if rows, _, err := run(t, s, "SELECT 1"); err != nil || len(rows) != 1 {
		t.Fatalf("session after %s: %v %v", q, rows, err)
	}
}

// The attack queries of issue 12: values far past 1 GB asked for by a few
// bytes of SQL fail at once, before anything is allocated.
func TestValueTooLarge(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	const mb = 1 << 20
	for _, c := range []struct {
		q    string
		code pgerr.Code
		msg  string
	}{
		{"SELECT lpad('x', 2000000000)", pgerr.ProgramLimitExceeded, "requested length too large"},
		{"SELECT rpad('x', 2000000000, 'ab')", pgerr.ProgramLimitExceeded, "requested length too large"},
		{"SELECT lpad('x', 268435455)", pgerr.ProgramLimitExceeded, "requested length too large"},
		{"SELECT repeat('x', 1073741820)", pgerr.ProgramLimitExceeded, "requested length too large"},
		{"SELECT repeat('ab', 600000000)", pgerr.ProgramLimitExceeded, "requested length too large"},
		{"SELECT format('%2000000000s', 'x')", pgerr.ProgramLimitExceeded, "out of memory"},
		{"SELECT replace(repeat('x', 100000), 'x', repeat('y', 20000))", pgerr.ProgramLimitExceeded, "out of memory"},
		{"SELECT regexp_replace(repeat('x', 100000), 'x', repeat('y', 20000), 'g')", pgerr.ProgramLimitExceeded, "out of memory"},
	} {
		wantMemErr(t, s, c.q, c.code, c.msg, 400*mb)
	}
	// The largest accepted: PostgreSQL's bounds exactly.
	for _, c := range []struct{ q, want string }{
		{"SELECT length(lpad('x', 26843545))", "26843545"},
		{"SELECT length(format('%10000000s', 'x'))", "10000000"},
	} {
		if rows, _, err := run(t, s, c.q); err != nil || len(rows) != 1 || rows[0] != c.want {
			t.Fatalf("%s: %v %v", c.q, rows, err)
		}
	}
}

// A batch of big values fails with 53200 at the statement's limit instead
// of building them all (PostgreSQL builds one row at a time).
func TestBatchOfBigValues(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	if _, _, err := run(t, s, "SET statement_mem_limit = '64MB'"); err != nil {
		t.Fatal(err)
	}
	wantMemErr(t, s, "SELECT repeat('x', 10000000) FROM generate_series(1, 1000)", pgerr.OutOfMemory, "out of memory", 300<<20)
	// Folded while planning: checked all the same.
	wantMemErr(t, s, "SELECT repeat('x', 100000000)", pgerr.OutOfMemory, "out of memory", 300<<20)
	wantMemErr(t, s, "SELECT g::text || repeat('x', 1000000) FROM generate_series(1, 3000) g", pgerr.OutOfMemory, "out of memory", 300<<20)
	if rows, _, err := run(t, s, "SELECT count(*) FROM (SELECT repeat('x', 1000) FROM generate_series(1, 10000)) s"); err != nil || rows[0] != "10000" {
		t.Fatalf("small values: %v %v", rows, err)
	}
}

// An endless recursive CTE streams: LIMIT stops it, and a reader that keeps
// reading holds two rounds, not every row so far.
func TestRecursiveCTEStreams(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	rows, _, err := run(t, s, "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM t) SELECT * FROM t LIMIT 10")
	if err != nil || len(rows) != 10 || rows[9] != "10" {
		t.Fatalf("LIMIT 10: %v %v", rows, err)
	}
	stmts, err := sql.Parse("WITH RECURSIVE t(n, pad) AS (SELECT 1, repeat('x', 100) UNION ALL SELECT n+1, pad FROM t) SELECT * FROM t")
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Prepare(context.Background(), stmts[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Execute(context.Background(), p, []types.Value{})
	if err != nil {
		t.Fatal(err)
	}
	start, _ := heap()
	var peak uint64
	for n := 0; n < 200_000; {
		b, err := res.Rows.Next()
		if err != nil || b == nil {
			t.Fatalf("row %d: %v", n, err)
		}
		n += int(b.NumRows())
		if n%50_000 == 0 {
			if h, _ := heap(); h > peak {
				peak = h
			}
		}
	}
	res.Rows.Close()
	// 200,000 rows of ~110 bytes kept would be > 20 MB (and far more as
	// one-row batches).
	if peak > start+16<<20 {
		t.Fatalf("heap grew from %d MB to %d MB while streaming", start>>20, peak>>20)
	}
	if rows, _, err := run(t, s, "SELECT 1"); err != nil || len(rows) != 1 {
		t.Fatalf("after: %v %v", rows, err)
	}
}

func TestMemorySettings(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	for _, c := range []struct{ set, want string }{
		{"64kB", "64kB"}, {"1024kB", "1MB"}, {"100", "100kB"}, {"1.5MB", "1536kB"}, {"'10 MB'", "10MB"},
	} {
		v := c.set
		if !strings.HasPrefix(v, "'") {
			v = "'" + v + "'"
		}
		rows, _, err := run(t, s, "SET work_mem = "+v+"; SHOW work_mem")
		if err != nil || rows[0] != c.want {
			t.Fatalf("SET work_mem = %s: %v %v", v, rows, err)
		}
	}
	for _, c := range []struct{ v, msg string }{
		{"'63kB'", `63 kB is outside the valid range for parameter "work_mem" (64 .. 2147483647)`},
		{"'abc'", `invalid value for parameter "work_mem": "abc"`},
		{"'10mb'", `invalid value for parameter "work_mem": "10mb"`},
	} {
		_, _, err := run(t, s, "SET work_mem = "+c.v)
		if err == nil || err.Error() != c.msg {
			t.Fatalf("SET work_mem = %s: %v, want %s", c.v, err, c.msg)
		}
	}
}

// Sort, hash aggregation and the hash join's build side are charged to the
// statement's budget: past statement_mem_limit the statement fails with
// 53200 and the session goes on; everything reserved goes back to the
// server's pool.
func TestOperatorsOverBudget(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	// work_mem past the limit: the sort does not spill.
	if _, _, err := run(t, s, "SET statement_mem_limit = '8MB'; SET work_mem = '1GB'"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"SELECT g, md5(g::text) FROM generate_series(1, 400000) g ORDER BY 2",
		"SELECT md5(g::text), count(*) FROM generate_series(1, 400000) g GROUP BY 1",
		"SELECT string_agg(md5(g::text), ',') FROM generate_series(1, 400000) g",
		"SELECT DISTINCT md5(g::text) FROM generate_series(1, 400000) g",
		"SELECT g, m, row_number() OVER (PARTITION BY g % 10 ORDER BY m) FROM (SELECT g, md5(g::text) m FROM generate_series(1, 400000) g) s",
		"SELECT count(*) FROM (SELECT g, md5(g::text) m FROM generate_series(1, 400000) g) a JOIN (SELECT g, md5(g::text) m FROM generate_series(1, 400000) g) b ON a.m = b.m",
		"WITH RECURSIVE t(n, m) AS (SELECT 1, md5('1') UNION SELECT n+1, md5(m) FROM t) SELECT count(*) FROM t",
		"SELECT length(string_agg(m, ',' ORDER BY m)) FROM (SELECT md5(g::text) m FROM generate_series(1, 400000) g) s",
		"SELECT count(*) FROM (SELECT md5(g::text) FROM generate_series(1, 400000) g INTERSECT SELECT md5(g::text) FROM generate_series(1, 400000) g) s",
		"SELECT count(*) FROM (SELECT md5(g::text) FROM generate_series(1, 400000) g EXCEPT ALL SELECT md5(g::text) FROM generate_series(1, 10) g) s",
	} {
		wantMemErr(t, s, q, pgerr.OutOfMemory, "out of memory", 1<<30)
		if u := e.pool.Used(); u != 0 {
			t.Fatalf("after %s: %d bytes still reserved", q, u)
		}
	}
	// With the default work_mem the same sort spills and fits in 8MB.
	if _, _, err := run(t, s, "RESET work_mem"); err != nil {
		t.Fatal(err)
	}
	rows, _, err := run(t, s, "SELECT count(*) FROM (SELECT g, md5(g::text) FROM generate_series(1, 400000) g ORDER BY 2) s")
	if err != nil || rows[0] != "400000" {
		t.Fatalf("spilling sort: %v %v", rows, err)
	}
	if u := e.pool.Used(); u != 0 {
		t.Fatalf("%d bytes still reserved", u)
	}
}

// The server's pool bounds all statements together, whatever each may use.
func TestServerMemoryLimit(t *testing.T) {
	e, err := Open(Config{DataDir: t.TempDir(), MemoryLimit: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, s, "SET work_mem = '1GB'"); err != nil {
		t.Fatal(err)
	}
	wantMemErr(t, s, "SELECT g, md5(g::text) FROM generate_series(1, 400000) g ORDER BY 2", pgerr.OutOfMemory, "out of memory", 1<<30)
	if rows, _, err := run(t, s, "SELECT count(*) FROM (SELECT g FROM generate_series(1, 1000) g ORDER BY 1) s"); err != nil || rows[0] != "1000" {
		t.Fatalf("small sort: %v %v", rows, err)
	}
}

// A sort past work_mem spills sorted runs to <data-dir>/tmp and merges
// them: the result is the in-memory sort's, ties and NULLs included, and
// the statement stays under a statement_mem_limit the in-memory sort
// passes.
func TestSortSpills(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	defer e.Close()
	setup := `CREATE TABLE r (id int PRIMARY KEY, a int, b text, c float8);
INSERT INTO r SELECT g, CASE WHEN g % 17 = 0 THEN NULL ELSE (g * 7919) % 1000 END, md5((g % 5000)::text), (g % 13) / 3.0 FROM generate_series(1, 60000) g`
	if _, _, err := run(t, s, setup); err != nil {
		t.Fatal(err)
	}
	queries := []string{
		"SELECT id, a, b FROM r ORDER BY a, b",
		"SELECT id, a FROM r ORDER BY a DESC NULLS LAST, id",
		"SELECT id, b, c FROM r ORDER BY c DESC, b",
		"SELECT id FROM r ORDER BY b NULLS FIRST, a DESC", // ties keep input order
	}
	want := map[string][]string{}
	for _, q := range queries {
		rows, _, err := run(t, s, q)
		if err != nil || len(rows) != 60000 {
			t.Fatalf("%s in memory: %d rows, %v", q, len(rows), err)
		}
		want[q] = rows
	}
	if _, _, err := run(t, s, "SET work_mem = '64kB'; SET statement_mem_limit = '2MB'"); err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		rows, _, err := run(t, s, q)
		if err != nil {
			t.Fatalf("%s spilling: %v", q, err)
		}
		if strings.Join(rows, "\n") != strings.Join(want[q], "\n") {
			t.Fatalf("%s: spilled result differs (%d rows)", q, len(rows))
		}
	}
	if _, _, err := run(t, s, "SET work_mem = '4MB'"); err != nil {
		t.Fatal(err)
	}
	// Without spilling the same sort does not fit the statement's limit.
	wantMemErr(t, s, queries[0], pgerr.OutOfMemory, "out of memory", 1<<30)
	if ents, err := os.ReadDir(filepath.Join(dir, "tmp")); err != nil || len(ents) != 0 {
		t.Fatalf("temporary directory: %v %v", ents, err)
	}
}

// A hash aggregation past work_mem keeps the groups it has in memory and
// spills the rows of new groups to partitions under <data-dir>/tmp
// (hybrid hash aggregation): the result is the in-memory one (rows
// compared as sets; every aggregate kind, NULL and skewed keys), and the
// statement stays under a statement_mem_limit the in-memory aggregation
// passes (53200 there, as it was before spilling). The same for hash
// joins, whose build side passes work_mem (grace hash join).
func TestHashAggSpills(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	defer e.Close()
	setup := `CREATE TABLE r (id int PRIMARY KEY, a int, b text, c float8);
INSERT INTO r SELECT g, CASE WHEN g % 17 = 0 THEN NULL ELSE (g * 7919) % 20000 END, md5((g % 40000)::text), (g % 13) / 3.0 FROM generate_series(1, 60000) g`
	if _, _, err := run(t, s, setup); err != nil {
		t.Fatal(err)
	}
	queries := []string{
		"SELECT b, count(*), sum(a), avg(c), min(id), max(a) FROM r GROUP BY b",
		"SELECT a, count(DISTINCT c), string_agg(b, ',' ORDER BY id DESC), array_agg(id ORDER BY id) FILTER (WHERE c > 1) FROM r GROUP BY a",
		"SELECT a % 3, b, count(*), bool_and(c > 1), array_agg(DISTINCT id % 5) FROM r GROUP BY 1, 2 HAVING count(*) > 1",
		"SELECT CASE WHEN id % 4 = 0 THEN b ELSE 'hot' END k, count(*), sum(id) FROM r GROUP BY 1", // skewed
		"SELECT a, b, count(*) FROM r GROUP BY GROUPING SETS ((a), (b), ())",
		// hash joins whose build side passes work_mem (grace hash join)
		"SELECT x.id, y.id FROM r x JOIN r y ON x.b = y.b",
		"SELECT x.id, y.id, y.b FROM r x LEFT JOIN r y ON x.a = y.id",
		"SELECT x.id, y.id FROM (SELECT id, a FROM r WHERE id % 2 = 0) x FULL JOIN (SELECT id, a, b FROM r WHERE id % 3 = 0) y ON x.a = y.id",
	}
	sorted := func(rows []string) string {
		rows = append([]string(nil), rows...)
		sort.Strings(rows)
		return strings.Join(rows, "\n")
	}
	want := map[string]string{}
	for _, q := range queries {
		rows, _, err := run(t, s, q)
		if err != nil || len(rows) < 1000 {
			t.Fatalf("%s in memory: %d rows, %v", q, len(rows), err)
		}
		want[q] = sorted(rows)
	}
	if _, _, err := run(t, s, "SET work_mem = '64kB'; SET statement_mem_limit = '2MB'"); err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		rows, _, err := run(t, s, q)
		if err != nil {
			t.Fatalf("%s spilling: %v", q, err)
		}
		if sorted(rows) != want[q] {
			t.Fatalf("%s: spilled result differs (%d rows)", q, len(rows))
		}
		if u := e.pool.Used(); u != 0 {
			t.Fatalf("after %s: %d bytes still reserved", q, u)
		}
	}
	if _, _, err := run(t, s, "SET work_mem = '4MB'"); err != nil {
		t.Fatal(err)
	}
	// Without spilling the same aggregation and joins do not fit the
	// statement's limit.
	for _, q := range []string{queries[0], queries[5], queries[6]} {
		wantMemErr(t, s, q, pgerr.OutOfMemory, "out of memory", 1<<30)
	}
	if ents, err := os.ReadDir(filepath.Join(dir, "tmp")); err != nil || len(ents) != 0 {
		t.Fatalf("temporary directory: %v %v", ents, err)
	}
}
