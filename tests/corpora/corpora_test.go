package corpora

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/tests/harness"
	"github.com/streamsql/streamsql/tests/slt"
)

func TestTranslate(t *testing.T) {
	for in, want := range map[string]string{
		"SET RW_IMPLICIT_FLUSH TO true;":       "SELECT 1",
		"set streaming_parallelism = 1":        "SELECT 1",
		"SET implicit_flush TO true;":          "SELECT 1",
		"SET upsert_dml TO true;":              "SELECT 1",
		"insert into t values (1);":            "insert into t values (1);\nFLUSH",
		"  UPDATE t SET a = 1":                 "UPDATE t SET a = 1;\nFLUSH",
		"select * from t":                      "select * from t",
		"set timezone = 'UTC'":                 "set timezone = 'UTC'",
		"create materialized view v as select": "create materialized view v as select",
	} {
		if got := Translate(in); got != want {
			t.Errorf("Translate(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExpect(t *testing.T) {
	for in, want := range map[string]string{
		"1 2022-01-01 10:00:00+00:00 2022-01-01 10:30:00.5+00:00": "1 2022-01-01 10:00:00+00 2022-01-01 10:30:00.5+00",
		"2022-01-01 10:00:00+05:30":                               "2022-01-01 10:00:00+05:30",
		"2020-04-15 08:00 2020-04-15 08:10 11.00":                 "2020-04-15 08:00:00 2020-04-15 08:10:00 11.00",
		"2020-04-15 08:09:59.999":                                 "2020-04-15 08:09:59.999",
		"x 2020-04-15 08:05":                                      "x 2020-04-15 08:05:00",
	} {
		if got := Expect(in); got != want {
			t.Errorf("Expect(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPeerSuites runs ../shared/corpora's risingwave/ and flink/ files on
// in-process servers and reports per-file pass counts (go test -v). The
// records skip.txt lists are skipped with their reasons. It fails only if a
// file passes fewer records than minPassed records for it (a ratchet: raise
// it as features land).
func TestPeerSuites(t *testing.T) {
	root := os.Getenv("STREAMSQL_CORPORA") // default: ../shared/corpora from the repository's root
	if root == "" {
		root = filepath.Join("..", "..", "..", "shared", "corpora")
	}
	if _, err := os.Stat(root); err != nil {
		t.Skipf("corpora not found at %s", root)
	}
	skip, err := slt.LoadSkipList("skip.txt")
	if err != nil {
		t.Fatal(err)
	}
	files, err := slt.FindScripts(filepath.Join(root, "risingwave"), filepath.Join(root, "flink"))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	r := slt.NewRunner(slt.Options{Engines: []string{"streamsql", "risingwave"}, Skip: skip,
		Out: &out, Base: root, MaxFailures: -1, Translate: Translate, Expect: Expect})
	var total slt.Totals
	for _, f := range files {
		res := r.RunFile(context.Background(), &harness.Backend{Dir: t.TempDir()}, f)
		total.Add(res)
		t.Logf("%s: %d passed, %d failed, %d skipped", res.Name, res.Passed, res.Failed, res.Skipped)
	}
	t.Logf("total: %s", total)
	if os.Getenv("STREAMSQL_CORPORA_FAILURES") != "" {
		t.Log(out.String())
	}
	if total.Passed < minPassed {
		t.Errorf("%d records passed, fewer than the %d of tests/corpora/README.md", total.Passed, minPassed)
	}
}

// minPassed is the pass count last recorded in README.md.
const minPassed = 259
