package cluster_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestClusterTableCheckpointScale measures, with a table of
// CLUSTER_TABLE_ROWS rows (unset: skipped) and a view over it on three
// nodes, what the cluster checkpoints upload: the commits after the
// insert, after a one-row update (the table's whole image again) and
// with no write (the image named again, nothing uploaded for it); then
// the time a new coordinator takes to load the table after kill -9 of
// the coordinator.
func TestClusterTableCheckpointScale(t *testing.T) {
	rows, _ := strconv.Atoi(os.Getenv("CLUSTER_TABLE_ROWS"))
	if rows == 0 {
		t.Skip("set CLUSTER_TABLE_ROWS to measure")
	}
	nodes, _, _, _ := tableCluster(t)
	n1, n2 := nodes[0], nodes[1]
	commits := func() int { return len(commitRE.FindAllString(n1.out.String(), -1)) }
	waitCommits := func(what string, k int) {
		t.Helper()
		seen := commits()
		deadline := time.Now().Add(120 * time.Second)
		for commits() < seen+k {
			if time.Now().After(deadline) {
				t.Fatalf("no checkpoint committed %s", what)
			}
			time.Sleep(50 * time.Millisecond) // polling with a deadline
		}
		for _, m := range commitRE.FindAllStringSubmatch(n1.out.String(), -1)[seen:] {
			t.Logf("%s: commit in %s (%s after the barrier): %s objects, coordinator's files and tables %s B, %s B uploaded in %s",
				what, m[1], m[2], m[3], m[8], m[9], m[10])
		}
	}
	t0 := time.Now()
	n1.exec(t, tableDDL[0], "INSERT INTO bids SELECT g, g % 97, (g::int8 * 7919) % 1000, 'ch' || (g % 7) FROM generate_series(1, "+strconv.Itoa(rows)+") g")
	t.Logf("%d rows inserted in %.2f s", rows, time.Since(t0).Seconds())
	n1.exec(t, tableDDL[1:]...)
	waitCommits("after the insert", 2)
	n1.exec(t, "UPDATE bids SET price = price + 1 WHERE id = 1")
	waitCommits("after a one-row update", 2)
	waitCommits("with no write", 1)
	n1.kill()
	killed := time.Now()
	waitLog(t, n2, 120*time.Second, "cluster: tables loaded from checkpoint ")
	for _, line := range strings.Split(n2.out.String(), "\n") {
		if strings.Contains(line, "cluster: tables loaded") {
			t.Logf("%s (%.2f s after the kill, lease TTL 2 s)", line, time.Since(killed).Seconds())
		}
	}
}
