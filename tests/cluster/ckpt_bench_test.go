package cluster_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster/clustertest"
)

// commitAnyRE matches the coordinator's log line of a committed
// checkpoint with or without the workers' uploaded bytes (a binary from
// before incremental uploads, STREAMSQLD_BINARY, uploads the whole
// state): epoch, commit time, barrier to commit, objects, workers' state
// named, uploaded, objects uploaded, coordinator's files, uploaded.
var commitAnyRE = regexp.MustCompile(`checkpoint (\d+) committed in (\S+), (\S+) after its barrier \(\S+\): (\d+) objects, workers' state (\d+) bytes(?:, (\d+) uploaded in (\d+) objects)? \(reports waited \S+\), coordinator's files (\d+) bytes, (\d+) uploaded in \S+`)

// commitSummary sums up the commits n logged after its first from bytes
// of output: medians of the commit time (from the coordinator's local
// commit), of the time from the epoch's barrier, of the workers' state
// named and uploaded per commit and of the coordinator's files uploaded,
// the totals uploaded and the most the workers uploaded for one commit.
func commitSummary(t *testing.T, n *node, from int) string {
	t.Helper()
	all := commitAnyRE.FindAllStringSubmatch(n.out.String()[from:], -1)
	if len(all) == 0 {
		return "no commit"
	}
	var took, after, named, up, objs, coord []float64
	var upTotal, coordTotal float64
	for _, m := range all {
		d, err := time.ParseDuration(m[2])
		if err != nil {
			t.Fatalf("commit time %q: %v", m[2], err)
		}
		took = append(took, d.Seconds()*1000)
		a, err := time.ParseDuration(m[3])
		if err != nil {
			t.Fatalf("barrier to commit %q: %v", m[3], err)
		}
		after = append(after, a.Seconds()*1000)
		num := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
		named = append(named, num(m[5]))
		u, o := num(m[6]), num(m[7])
		if m[6] == "" { // every object uploaded at its epoch
			u, o = num(m[5]), -1
		}
		up = append(up, u)
		objs = append(objs, o)
		coord = append(coord, num(m[9]))
		upTotal += u
		coordTotal += num(m[9])
	}
	med := func(v []float64) float64 { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
	return fmt.Sprintf("%d commits: commit %.0f ms, barrier to commit %.0f ms (medians), workers' state named %.0f B, uploaded %.0f B in %.0f objects (medians; %.0f B in all, at most %.0f B in one), coordinator's files uploaded %.0f B (median; %.0f B in all)",
		len(all), med(took), med(after), med(named), med(up), med(objs), upTotal, slices.Max(up), med(coord), coordTotal)
}

// TestClusterCheckpointTrickle measures the cluster checkpoints of a view
// with a large state of which few keys change per epoch: a GROUP BY over
// CLUSTER_TRICKLE_KEYS keys (unset: skipped) read at once from a datagen
// source, and from a second one 20 rows a second over random keys, at
// parallelism 6 over three nodes (4 instances on the workers) with a
// checkpoint a second. Once every key is counted it logs the commits of
// the next CLUSTER_TRICKLE_SECONDS (default 15): what the workers' state
// the manifests name and what they uploaded (bytes, objects), the
// coordinator's files uploaded, the commit times; and the CPU seconds of
// each node over that time. With STREAMSQLD_BINARY an older streamsqld
// is measured the same way.
func TestClusterCheckpointTrickle(t *testing.T) {
	keys, _ := strconv.Atoi(os.Getenv("CLUSTER_TRICKLE_KEYS"))
	if keys == 0 {
		t.Skip("set CLUSTER_TRICKLE_KEYS to measure")
	}
	secs := envInt("CLUSTER_TRICKLE_SECONDS", 15)
	n := strconv.Itoa(keys)
	ddl := []string{
		"CREATE SOURCE bulk (k bigint, v bigint) WITH (connector = 'datagen', rows = '" + n + "', fields.k.kind = 'sequence', fields.k.start = '1', fields.v.min = '1', fields.v.max = '1000')",
		"CREATE SOURCE drip (k bigint, v bigint) WITH (connector = 'datagen', rows_per_second = '20', fields.k.min = '1', fields.k.max = '" + n + "', fields.v.min = '1', fields.v.max = '1000', seed = '7')",
		"SET streaming_parallelism = 6",
		"CREATE MATERIALIZED VIEW per_key AS SELECT k, count(*) AS n, sum(v) AS s FROM (SELECT k, v FROM bulk UNION ALL SELECT k, v FROM drip) AS u GROUP BY k",
	}
	etcd := clustertest.StartEtcd(t)
	s3 := clustertest.StartS3(t, "ckpt")
	flags := []string{"--cluster", "etcd://" + etcd.Endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--checkpoint-interval", "1s"}
	n1 := start(t, s3.Env(), "n1", flags...)
	waitNodes(t, n1, "SELECT role FROM streamsql_nodes", []string{"coordinator"})
	n2 := start(t, s3.Env(), "n2", flags...)
	n3 := start(t, s3.Env(), "n3", flags...)
	waitNodes(t, n1, "SELECT node_id FROM streamsql_nodes ORDER BY 1", []string{"n1", "n2", "n3"})
	n1.exec(t, ddl...)
	deadline := time.Now().Add(300 * time.Second)
	for {
		rows, err := n1.query(t, "SELECT count(*) FROM per_key")
		if err == nil && len(rows) == 1 && rows[0] == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("per_key has %v groups 300 s after its creation, want %d (%v)", rows, keys, err)
		}
		time.Sleep(200 * time.Millisecond) // polling with a deadline
	}
	// Two commits after the bulk: the chains' first bases are behind.
	for from := len(n1.out.String()); len(commitAnyRE.FindAllString(n1.out.String()[from:], -1)) < 2; {
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint committed after the bulk")
		}
		time.Sleep(100 * time.Millisecond) // polling with a deadline
	}
	all := []*node{n1, n2, n3}
	cpu0 := make([]float64, len(all))
	for i, x := range all {
		cpu0[i] = cpuSeconds(t, x)
	}
	mark := len(n1.out.String())
	time.Sleep(time.Duration(secs) * time.Second) // the span measured
	var cpu []string
	for i, x := range all {
		cpu = append(cpu, fmt.Sprintf("%s %.2f", x.id, cpuSeconds(t, x)-cpu0[i]))
	}
	t.Logf("%d keys, 20 rows/s, %d s: %s; CPU s %s (load %s)", keys, secs, commitSummary(t, n1, mark), strings.Join(cpu, ", "), loadAvg())
}
