package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// A checkpoint directory that cannot be written (here: replaced by a
// file) makes CHECKPOINT fail with a clear error while views keep running
// and serving reads; once it is writable again the next checkpoint holds
// everything since the last good one and a restart resumes from it.
func TestCheckpointFailureAndRecovery(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	mustRun(t, s, "CREATE TABLE t (id int PRIMARY KEY, g int)")
	mustRun(t, s, "INSERT INTO t SELECT i, i % 3 FROM generate_series(1, 30) i")
	mustRun(t, s, "CREATE MATERIALIZED VIEW per_g AS SELECT g, count(*) AS n FROM t GROUP BY g")
	mustRun(t, s, "FLUSH")
	mustRun(t, s, "CHECKPOINT")

	ck := filepath.Join(dir, "checkpoints")
	if err := os.Rename(ck, ck+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ck, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, s, "CHECKPOINT"); pgerr.CodeOf(err) != pgerr.IOError || !strings.Contains(err.Error(), "checkpoint failed") {
		t.Fatalf("CHECKPOINT into a file: %v (%s)", err, pgerr.CodeOf(err))
	}
	mustRun(t, s, "INSERT INTO t VALUES (31, 0), (32, 5)")
	mustRun(t, s, "FLUSH")
	want := "0|11,1|10,2|10,5|1"
	if got := strings.Join(mustRun(t, s, "SELECT * FROM per_g ORDER BY g"), ","); got != want {
		t.Fatalf("view while checkpoints fail: %s, want %s", got, want)
	}
	if got := mustRun(t, s, "SELECT failures > 0, last_error IS NOT NULL FROM streamsql_checkpoints"); strings.Join(got, ",") != "t|t" {
		t.Fatalf("streamsql_checkpoints after a failure: %v", got)
	}

	if err := os.Remove(ck); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(ck+".away", ck); err != nil {
		t.Fatal(err)
	}
	// (The failed checkpoints never began, so no operator counted its
	// changes as written: the next one may be incremental.)
	mustRun(t, s, "CHECKPOINT")
	e.Close()

	e, s = open(t, dir)
	defer e.Close()
	if got := mustRun(t, s, "SELECT recovered_from IS NOT NULL FROM streamsql_checkpoints"); strings.Join(got, ",") != "t" {
		t.Fatalf("did not recover from a checkpoint: %v", got)
	}
	if got := strings.Join(mustRun(t, s, "SELECT * FROM per_g ORDER BY g"), ","); got != want {
		t.Fatalf("view after the restart: %s, want %s", got, want)
	}
	if got := mustRun(t, s, "SELECT rows_in FROM streamsql_views WHERE viewname = 'per_g'"); strings.Join(got, ",") != "0" {
		t.Errorf("the view read its table again after the restart: rows_in %v", got)
	}
}
