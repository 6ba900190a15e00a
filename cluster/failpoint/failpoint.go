// Package failpoint kills the process at a named point of the cluster's
// checkpoint and restart protocol, for the fault tests of tests/cluster
// (docs/contributing/cluster.md, "Tests"). It is armed by the
// environment at start:
//
//	STREAMSQL_FAILPOINT=<point>[:<n>]
//	STREAMSQL_FAILPOINT=<point>@<file>
//
// makes the n-th call (default: the first), or the first call once
// <file> exists (the test creates it when the moment has come), of Hit
// with that point log
// "failpoint <point> hit (<detail>): kill -9" and kill its own process
// (SIGKILL), which then dies as a kill -9 from outside would (no deferred
// function, no flush, no goodbye to etcd). Unarmed, Hit costs one string
// comparison. Safe for concurrent use.
package failpoint

import (
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// Env is the environment variable that arms a failpoint.
const Env = "STREAMSQL_FAILPOINT"

// The points (where they are: docs/contributing/cluster.md).
const (
	// WorkerBeforeSnapshot: a worker's instance has its checkpoint
	// barrier aligned and has not snapshotted its state for it.
	WorkerBeforeSnapshot = "worker-before-snapshot"
	// WorkerAfterUpload: every state object of a worker's instance for
	// an epoch is uploaded, its report is not written.
	WorkerAfterUpload = "worker-after-upload"
	// WorkerAfterReport: a worker's instance reported an epoch; the
	// coordinator may commit it or not.
	WorkerAfterReport = "worker-after-report"
	// CoordinatorAfterManifest: the coordinator wrote an epoch's
	// manifest and has not moved the committed pointer to it.
	CoordinatorAfterManifest = "coordinator-after-manifest"
	// CoordinatorMidRestart: the coordinator logged and carried out the
	// restart of the first view of a restart, not of the others.
	CoordinatorMidRestart = "coordinator-mid-restart"
	// WorkerDuringRestore: a worker following a restart entry read the
	// checkpoint's state of the instances it will run and started none
	// of them.
	WorkerDuringRestore = "worker-during-restore"
	// CoordinatorAfterCommit: the coordinator moved the committed
	// pointer to an epoch; its sinks have not committed the epoch.
	CoordinatorAfterCommit = "coordinator-after-commit"
)

var (
	armed string
	at    int64  = 1
	after string // a file that must exist first ("": none)
	hits  atomic.Int64
)

func init() {
	v := os.Getenv(Env)
	if v == "" {
		return
	}
	if name, file, ok := strings.Cut(v, "@"); ok {
		armed, after = name, file
		return
	}
	name, n, ok := strings.Cut(v, ":")
	armed = name
	if ok {
		if k, err := strconv.ParseInt(n, 10, 64); err == nil && k > 0 {
			at = k
		}
	}
}

// Hit kills the process if point is armed and this is its n-th hit;
// detail (a format and its arguments) says where, in the log line
// written first.
func Hit(point string, detail string, args ...any) {
	if point != armed {
		return
	}
	if after != "" {
		if _, err := os.Stat(after); err != nil {
			return
		}
	}
	if hits.Add(1) != at {
		return
	}
	log.Printf("failpoint %s hit (%s): kill -9", point, fmt.Sprintf(detail, args...))
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill() // SIGKILL where there are signals
	}
	select {} // the kill is delivered before anything else runs here
}
