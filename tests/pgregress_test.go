package tests

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/tests/harness"
	"github.com/streamsql/streamsql/tests/pgregress"
	"github.com/streamsql/streamsql/tests/slt"
)

// TestPostgresRegress runs PostgreSQL 15's regression files
// (../shared/corpora/postgres/sql, after test_setup.sql) through psql -X -a
// -q against streamsql and a real PostgreSQL 15, a fresh database each per
// file, and compares the output statement by statement:
//
//	go test ./tests -run TestPostgresRegress -v
//
// PostgreSQL is reached at $PGREGRESS_POSTGRES (default
// postgres://postgres:postgres@127.0.0.1:5432/postgres); without it, or
// without psql, the test skips with a message, but fails when CI=true
// (.ci/run installs and starts PostgreSQL 15).
// -slt.files / $SLT_FILES selects files by name; $PGREGRESS_OUT names a
// directory for each file's differing statements (default: a temp dir,
// printed). A statement without an ORDER BY of its rows (one in a
// function call's or OVER's parentheses does not count) may print its rows
// in another order (pgregress.Same). Statements under EXPLAIN, partitioning and inheritance are
// counted apart (the goal excludes them), by pgregress.Exclusions' rule:
// EXPLAIN; the statements that make a table partitioned, a partition, a
// parent or a child (PARTITION BY RANGE|LIST|HASH, PARTITION OF, INHERITS,
// ATTACH/DETACH PARTITION, [NO] INHERIT); the statements that name such a
// table as a relation (not an alias) from then until it is dropped, views
// made from them, psql variables holding them; and the partitioning
// catalogs. Nothing else: a window's PARTITION BY counts. The differing
// statements are marked "(excluded)" in the .diff files. The test fails
// when a file matches fewer statements than tests/pgregress/baseline.txt
// records.
func TestPostgresRegress(t *testing.T) {
	absent := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	dir := corpusDir(t, "postgres")
	if dir == "" {
		// like the other corpus suites: the corpus lives outside the repository
		t.Skip("postgres corpus not found beside the repository (../shared/corpora/postgres, or set SLT_CORPORA)")
	}
	psql, err := exec.LookPath("psql")
	if err != nil {
		absent("psql not found: install postgresql-client (and a PostgreSQL 15 server) to compare with PostgreSQL")
	}
	pgURL := os.Getenv("PGREGRESS_POSTGRES")
	if pgURL == "" {
		pgURL = "postgres://postgres:postgres@127.0.0.1:5432/postgres"
	}
	ctx := context.Background()
	if c, err := pgconn.Connect(ctx, pgURL); err != nil {
		absent("PostgreSQL not reachable at %s (set PGREGRESS_POSTGRES): %v", pgURL, err)
	} else {
		c.Close(ctx)
	}
	outDir := os.Getenv("PGREGRESS_OUT")
	if outDir == "" {
		outDir = t.TempDir()
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	setup, err := os.ReadFile(filepath.Join(dir, "sql", "test_setup.sql"))
	if err != nil {
		t.Fatal(err)
	}
	baseline := loadBaseline(t, filepath.Join("pgregress", "baseline.txt"))
	var filter *regexp.Regexp
	if *sltFiles != "" {
		filter = regexp.MustCompile(*sltFiles)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "sql", "*.sql"))
	pgBackend := &slt.ServerBackend{ConnString: pgURL, Prefix: "pgregress"}
	ssBackend := &harness.Backend{Dir: t.TempDir()}
	var lines []string
	var total, goal regressCount
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		if name == "test_setup" || filter != nil && !filter.MatchString(name) {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		prelude := pgregress.Split("SET statement_timeout = '30s';\n" + string(setup))
		units := pgregress.Split(string(src))
		all := append(append([]pgregress.Unit{}, prelude...), units...)
		script := pgregress.Instrument(all)
		run := func(b slt.Backend) []string {
			db, err := b.NewDB(ctx, name)
			if err != nil {
				t.Fatalf("%s: new database: %v", name, err)
			}
			defer db.Close()
			out := runPsql(t, psql, db.ConnString(), dir, script)
			return pgregress.Chunks(out, len(all))
		}
		want, got := run(pgBackend), run(ssBackend)
		var fc, fg regressCount
		var diffs strings.Builder
		excluded := pgregress.Exclusions(prelude, units)
		for i, u := range units {
			k := len(prelude) + i
			same := pgregress.Same(u, want[k], got[k])
			if same && want[k] != got[k] {
				fc.unordered++
			}
			fc.add(same)
			if !excluded[i] {
				fg.add(same)
			}
			if !same {
				mark := ""
				if excluded[i] {
					mark = " (excluded)"
				}
				fmt.Fprintf(&diffs, "=== %s.sql:%d%s\n--- postgres\n%s\n--- streamsql\n%s\n\n", name, u.Line, mark, want[k], got[k])
			}
		}
		_ = os.WriteFile(filepath.Join(outDir, name+".diff"), []byte(diffs.String()), 0o644)
		total.merge(fc)
		goal.merge(fg)
		lines = append(lines, fmt.Sprintf("%s: %d passed, %d failed (goal set %d/%d)", name, fc.passed, fc.failed, fg.passed, fg.passed+fg.failed))
		if min, ok := baseline[name]; ok && fc.passed < min {
			t.Errorf("%s: %d statements match PostgreSQL, fewer than the baseline's %d (see %s)", name, fc.passed, min, filepath.Join(outDir, name+".diff"))
		}
	}
	summary := fmt.Sprintf("postgres regression: %d files\n  %s\n%d passed (%d in another row order, unordered by SQL), %d failed; outside EXPLAIN/partitioning/inheritance %d of %d (%.1f%%); differences in %s",
		len(lines), strings.Join(lines, "\n  "), total.passed, total.unordered, total.failed, goal.passed, goal.passed+goal.failed,
		100*float64(goal.passed)/float64(max(goal.passed+goal.failed, 1)), outDir)
	t.Log(summary)
	summaryMu.Lock()
	summaries = append(summaries, summary)
	summaryMu.Unlock()
}

type regressCount struct{ passed, failed, unordered int }

func (c *regressCount) add(ok bool) {
	if ok {
		c.passed++
	} else {
		c.failed++
	}
}

func (c *regressCount) merge(o regressCount) {
	c.passed += o.passed
	c.failed += o.failed
	c.unordered += o.unordered
}

// runPsql feeds script to psql -X -a -q on conn, stdout and stderr into one
// file (so errors stay in order), with PG_ABS_SRCDIR set for test_setup's
// \getenv. A file gets at most 5 minutes.
func runPsql(t *testing.T, psql, conn, corpus, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := os.CreateTemp(t.TempDir(), "psql-*.out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.CommandContext(ctx, psql, "-X", "-a", "-q", "-v", "ON_ERROR_STOP=0", conn)
	cmd.Stdin = strings.NewReader(script)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "PG_ABS_SRCDIR="+corpus, "PG_LIBDIR=/nonexistent", "PG_DLSUFFIX=.so", "PGTZ=PST8PDT", "PGDATESTYLE=Postgres, MDY")
	_ = cmd.Run() // psql exits non-zero after an error; the output is what counts
	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// loadBaseline reads "file passed" lines: the fewest matching statements
// each file may have.
func loadBaseline(t *testing.T, path string) map[string]int {
	m := map[string]int{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return m
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 2 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		n, err := strconv.Atoi(fs[1])
		if err != nil {
			t.Fatalf("%s: %q: %v", path, sc.Text(), err)
		}
		m[fs[0]] = n
	}
	return m
}
