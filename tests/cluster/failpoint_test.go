package cluster_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster/clustertest"
	"github.com/streamsql/streamsql/cluster/failpoint"
)

var failpointRE = regexp.MustCompile(`failpoint (\S+) hit \((?:instance \S+, )?checkpoint (\d+)\): kill -9`)

// TestClusterKillAtFailpoints: three nodes run two views over a paced
// input; one node is started with STREAMSQL_FAILPOINT (package
// failpoint), so that it kills itself (SIGKILL) at a chosen moment of
// the checkpoint protocol, well after the first checkpoints committed:
// a worker before its instance snapshots an epoch, after its upload and
// before its report, after its report (before or after the coordinator
// commits the epoch), and the coordinator after it wrote an epoch's
// manifest and before it moved the pointer, and the coordinator in the
// middle of a restart (after n3's death: the first view restarted, not
// the second), and the worker n2 while it restores after n3's death
// (the views are restarted again, over n1 alone). Each time the views are
// restarted from the last committed checkpoint on the nodes left (a new
// coordinator for the last one); an epoch the dead node's part was
// missing from, or whose manifest the pointer never named, is never
// committed; the node is started again, joins the next restart, and the
// views equal one streamsqld's: exactly once, whatever the moment.
func TestClusterKillAtFailpoints(t *testing.T) {
	want := singleRun(t, unpacedViews)
	for _, c := range []struct {
		point  string
		victim string // n1 is the coordinator, n3 a worker
		// never: the epoch the kill happened in can never be committed
		never bool
		// trigger: a node killed (kill -9) once a checkpoint with the
		// views' state is committed, so that the victim reaches its
		// point ("": none)
		trigger string
		at      int // the pass that kills (0: 20; the coordinator without a trigger: armed by a file)
	}{
		{failpoint.WorkerBeforeSnapshot, "n3", true, "", 0},
		{failpoint.WorkerAfterUpload, "n3", true, "", 0},
		{failpoint.WorkerAfterReport, "n3", false, "", 0},
		{failpoint.CoordinatorAfterManifest, "n1", true, "", 0},
		// The restart after n3's death is cut after its first view.
		{failpoint.CoordinatorMidRestart, "n1", false, "n3", 1},
		// The worker n2 dies while it restores after n3's death: it
		// read its instances' state and started none of them.
		{failpoint.WorkerDuringRestore, "n2", false, "n3", 1},
	} {
		t.Run(c.point, func(t *testing.T) {
			etcd := clustertest.StartEtcd(t)
			s3 := clustertest.StartS3(t, "ckpt")
			env := s3.Env()
			flags := []string{"--cluster", "etcd://" + etcd.Endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--cluster-lease-ttl", "2s",
				"--checkpoint-interval", "300ms"}
			// About 3 s into the input: a worker's two instances hit a
			// worker point twice an epoch.
			at := c.at
			if at == 0 {
				at = 20
			}
			spec := fmt.Sprintf("%s=%s:%d", failpoint.Env, c.point, at)
			arm := "" // the file that arms the coordinator's point, if any
			if c.victim == "n1" && c.trigger == "" {
				// The coordinator passes its point at every checkpoint
				// from its start, views or not: counted, it fired
				// before the other nodes joined when they started slowly
				// (a loaded machine). Armed by a file instead, made once
				// the views' state is committed.
				arm = filepath.Join(t.TempDir(), "armed")
				spec = failpoint.Env + "=" + c.point + "@" + arm
			}
			armed := append(env, spec)
			envOf := func(id string) []string {
				if id == c.victim {
					return armed
				}
				return env
			}
			nodes := map[string]*node{}
			for _, id := range []string{"n1", "n2", "n3"} {
				nodes[id] = start(t, envOf(id), id, flags...)
				if id == "n1" {
					waitNodes(t, nodes[id], "SELECT node_id, role FROM streamsql_nodes", []string{"n1|coordinator"})
				}
			}
			waitNodes(t, nodes["n1"], "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|coordinator", "n2|worker", "n3|worker"})
			nodes["n1"].exec(t, pacedViews...)
			oids, err := nodes["n1"].query(t, "SELECT oid FROM pg_class WHERE relname IN ('per_auction', 'per_channel') ORDER BY relname")
			if err != nil || len(oids) != 2 {
				t.Fatalf("the views' OIDs: %v %v", oids, err)
			}
			if c.trigger != "" {
				committedAfter(t, etcd.Endpoint, env, oids, 0)
				nodes[c.trigger].kill()
			}
			if arm != "" {
				committedAfter(t, etcd.Endpoint, env, oids, 0)
				if err := os.WriteFile(arm, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			victim := nodes[c.victim]
			select {
			case <-victim.exited:
			case <-time.After(90 * time.Second):
				t.Fatalf("%s did not hit failpoint %s within 90 s", c.victim, c.point)
			}
			killed := time.Now()
			m := failpointRE.FindStringSubmatch(victim.out.String())
			if m == nil || m[1] != c.point {
				t.Fatalf("%s exited (%v) without hitting failpoint %s:\n%s", c.victim, victim.cmd.ProcessState, c.point, victim.out.String())
			}
			if ps := victim.cmd.ProcessState; ps.String() != "signal: killed" {
				t.Fatalf("%s exited with %v, want killed", c.victim, ps)
			}
			if n := strings.Count(victim.out.String(), "restarted from checkpoint "); c.point == failpoint.CoordinatorMidRestart && n != 1 {
				t.Fatalf("%s restarted %d views before it died, want 1 of 2:\n%s", c.victim, n, victim.out.String())
			}
			epoch, _ := strconv.ParseUint(m[2], 10, 64)
			coord := nodes["n1"]
			if c.victim == "n1" {
				coord = nodes["n2"]
			}
			mark := 0
			if c.victim == "n1" {
				mark = len(coord.out.String()) // n2's log has no restart yet
			}
			if c.point == failpoint.WorkerDuringRestore {
				if strings.Contains(victim.out.String(), "restarted on this node from") {
					t.Fatalf("%s started instances before it died:\n%s", c.victim, victim.out.String())
				}
				// The restart after n2's death, over n1 alone.
				waitLogAfter(t, coord, 0, 60*time.Second, "(1 nodes)")
				mark = strings.Index(coord.out.String(), "(1 nodes)")
			}
			var from uint64
			for _, oid := range oids {
				from = restartedFrom(t, coord, mark, 60*time.Second, oid)
			}
			restarted := time.Since(killed)
			if c.never && from >= epoch {
				t.Fatalf("restarted from checkpoint %d, not before %d, the epoch of the kill", from, epoch)
			}
			// The node comes back and the views are restarted over the
			// three nodes again.
			mark = len(coord.out.String())
			var back []*node
			for _, id := range []string{c.victim, c.trigger} {
				if id != "" {
					nodes[id] = start(t, env, id, flags...)
					back = append(back, nodes[id])
				}
			}
			waitLogAfter(t, coord, mark, 60*time.Second, "(3 nodes)")
			for _, n := range back {
				for _, oid := range oids {
					waitLogAfter(t, n, 0, 60*time.Second, "cluster: job "+oid+" restarted on this node from checkpoint ")
				}
			}
			waitEqual(t, want, 120*time.Second, nodes["n1"], nodes["n2"], nodes["n3"])
			// A committed checkpoint always restores: no view fell back
			// to its inputs.
			for _, n := range nodes {
				if out := n.out.String(); strings.Contains(out, "restarts from its inputs") {
					t.Fatalf("%s restarted a view from its inputs, not from the committed checkpoint:\n%s", n.id, out)
				}
			}
			// A commit refused for a coordinator's file whose size is not
			// its local manifest's (uploadLocal) is logged: how often.
			refused := 0
			for _, n := range nodes {
				refused += strings.Count(n.out.String(), "its local manifest says")
			}
			if refused > 0 {
				t.Logf("%d commits refused: a coordinator's file differs from its local manifest", refused)
			}
			terms, epochs := fencedHistory(t, etcd.Endpoint)
			if c.never && slices.Contains(epochs, epoch) {
				t.Fatalf("checkpoint %d, of the kill at %s, was committed", epoch, c.point)
			}
			t.Logf("%s killed itself at %s of checkpoint %d; %s restarted the views from checkpoint %d %.2f s later; terms %v; %d checkpoints committed",
				c.victim, c.point, epoch, coord.id, from, restarted.Seconds(), terms, len(epochs))
		})
	}
}
