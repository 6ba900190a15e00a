package tests

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/tests/harness"
	"github.com/streamsql/streamsql/tests/slt"
)

// sltFiles selects a subset of script files by a regular expression on
// their names (relative to their suite's directory), e.g.
//
//	go test ./tests -run SQLiteCorpus -slt.files 'select1|evidence/'
//	SLT_FILES=random/ go test ./tests -run SQLiteCorpus
var sltFiles = flag.String("slt.files", os.Getenv("SLT_FILES"), "regexp selecting sqllogictest files (default $SLT_FILES)")

// summaries are the suites' "N passed, N failed, N skipped" lines, printed by
// TestMain after the tests so that they show in CI logs.
var (
	summaryMu sync.Mutex
	summaries []string
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	summaryMu.Lock()
	defer summaryMu.Unlock()
	if len(summaries) > 0 {
		text := strings.Join(summaries, "\n") + "\n"
		fmt.Print(text)
		// go test ./... hides the output of passing packages; CI reads it here.
		if path := os.Getenv("SLT_SUMMARY_FILE"); path != "" {
			if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				f.WriteString(text)
				f.Close()
			}
		}
	}
	os.Exit(code)
}

// TestSLT runs our own scripts, tests/slt/*.slt, whose expected results come
// from PostgreSQL 15.
func TestSLT(t *testing.T) {
	runSuite(t, "streamsql slt", "slt", ownSkips(t))
}

// ownSkips loads skip/streamsql.txt: records of our suites that wait for a
// missing feature.
func ownSkips(t *testing.T) *slt.SkipList {
	skip, err := slt.LoadSkipList(filepath.Join("skip", "streamsql.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return skip
}

// TestSLTExtended runs the same scripts through the extended query protocol
// (Parse/Bind/Describe/Execute), which clients such as pgx and pgjdbc use.
func TestSLTExtended(t *testing.T) {
	runSuiteOn(t, "streamsql slt (extended protocol)", "slt", suiteOptions{
		backend: &harness.Backend{Dir: t.TempDir()}, engines: ourEngines, extended: true, skip: ownSkips(t)})
}

// TestSQLiteCorpus runs the sqlite sqllogictest corpus as the "postgresql"
// engine, minus the records listed in skip/sqlite.txt.
func TestSQLiteCorpus(t *testing.T) {
	dir := corpusDir(t, "sqlite")
	if dir == "" {
		t.Skip("sqlite corpus not found: it lives beside the repository, in ../shared/corpora/sqlite (or set SLT_CORPORA to the corpora directory)")
	}
	skip, err := slt.LoadSkipList(filepath.Join("skip", "sqlite.txt"))
	if err != nil {
		t.Fatal(err)
	}
	runSuite(t, "sqlite corpus", dir, skip)
}

// TestSQLiteCorpusOnPostgres validates the runner and the skip list against
// a real PostgreSQL 15: with the skip list, PostgreSQL must pass every record.
// It runs only when SLT_POSTGRES is a connection string to PostgreSQL's
// maintenance database, e.g.
//
//	SLT_POSTGRES=postgres://postgres:postgres@127.0.0.1:5432/postgres go test ./tests -run OnPostgres
func TestSQLiteCorpusOnPostgres(t *testing.T) {
	conn := os.Getenv("SLT_POSTGRES")
	if conn == "" {
		t.Skip("set SLT_POSTGRES to a PostgreSQL 15 connection string to validate the runner against it")
	}
	dir := corpusDir(t, "sqlite")
	if dir == "" {
		t.Skip("sqlite corpus not found beside the repository (../shared/corpora/sqlite)")
	}
	skip, err := slt.LoadSkipList(filepath.Join("skip", "sqlite.txt"))
	if err != nil {
		t.Fatal(err)
	}
	runSuiteOn(t, "sqlite corpus on postgresql", dir, suiteOptions{
		backend: &slt.ServerBackend{ConnString: conn, Prefix: "slt_test"}, engines: []string{"postgresql"}, skip: skip})
}

// runSuite runs every script under dir as a subtest, each on a fresh
// in-process server, and records the suite's summary line.
func runSuite(t *testing.T, suite, dir string, skip *slt.SkipList) {
	runSuiteOn(t, suite, dir, suiteOptions{backend: &harness.Backend{Dir: t.TempDir()}, engines: ourEngines, skip: skip})
}

// ourEngines are the names streamsql answers to in skipif/onlyif: its own,
// and postgresql, whose behaviour it shares.
var ourEngines = []string{"streamsql", "postgresql"}

// suiteOptions say where and how a suite runs.
type suiteOptions struct {
	backend  slt.Backend
	engines  []string
	skip     *slt.SkipList
	extended bool
}

// runSuiteOn runs the scripts under dir as subtests and records the suite's
// summary line.
func runSuiteOn(t *testing.T, suite, dir string, o suiteOptions) {
	files, err := slt.FindScripts(dir)
	if err != nil {
		t.Fatal(err)
	}
	var filter *regexp.Regexp
	if *sltFiles != "" {
		if filter, err = regexp.Compile(*sltFiles); err != nil {
			t.Fatalf("bad -slt.files: %v", err)
		}
	}
	if len(files) == 0 {
		t.Fatalf("no scripts under %s", dir)
	}
	// Records still waiting when the suite's budget ($SLT_BUDGET, default
	// 15m, and never past the test binary's -timeout) is spent count as
	// failed ("not run"), so that a slow engine gets a report, not a panic,
	// and CI stays within its time.
	budget := 15 * time.Minute
	if env := os.Getenv("SLT_BUDGET"); env != "" {
		if budget, err = time.ParseDuration(env); err != nil {
			t.Fatalf("bad SLT_BUDGET: %v", err)
		}
	}
	deadline := time.Now().Add(budget)
	if d, ok := t.Deadline(); ok && d.Add(-30*time.Second).Before(deadline) {
		deadline = d.Add(-30 * time.Second)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	var total slt.Totals
	var lines []string
	for _, f := range files {
		name, _ := filepath.Rel(dir, f)
		name = filepath.ToSlash(name)
		if filter != nil && !filter.MatchString(name) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			var out strings.Builder
			r := slt.NewRunner(slt.Options{
				Engines:  o.engines,
				Skip:     o.skip,
				Out:      &out,
				Base:     dir,
				Extended: o.extended,
			})
			res := r.RunFile(ctx, o.backend, f)
			total.Add(res)
			lines = append(lines, fmt.Sprintf("%s: %d passed, %d failed, %d skipped", res.Name, res.Passed, res.Failed, res.Skipped))
			t.Log("\n" + out.String())
			if res.Failed > 0 {
				t.Errorf("%s: %d records failed", res.Name, res.Failed)
			}
		})
	}
	summary := fmt.Sprintf("%s: %d files\n  %s\n%d passed, %d failed", suite, len(lines), strings.Join(lines, "\n  "), total.Passed, total.Failed)
	if total.Skipped > 0 {
		summary += fmt.Sprintf(", %d skipped", total.Skipped)
	}
	t.Log(summary)
	summaryMu.Lock()
	summaries = append(summaries, summary)
	summaryMu.Unlock()
}

// corpusDir finds corpora/<name> in $SLT_CORPORA or in shared/ beside the
// repository or one of its parent directories (a worktree lives deeper than
// the main checkout); "" if absent.
func corpusDir(t testing.TB, name string) string {
	if env := os.Getenv("SLT_CORPORA"); env != "" {
		return filepath.Join(env, name)
	}
	for dir := filepath.Dir(repoRoot(t)); ; dir = filepath.Dir(dir) {
		d := filepath.Join(dir, "shared", "corpora", name)
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

// repoRoot finds the module root (the directory holding go.mod) from the
// test's working directory.
func repoRoot(t testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
}
