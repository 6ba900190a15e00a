package main

import (
	"os"
	"syscall"
)

// Failpoints for the cluster tests (tests/cluster): a process started
// with STREAMSQLD_FAILPOINT_AFTER_CLUSTER_COMMIT=<file> kills itself
// (SIGKILL, as kill -9) at the first cluster checkpoint it commits once
// <file> exists: after the pointer in etcd moved, before its sinks
// commit the checkpoint's epoch (docs/contributing/cluster.md, "Sinks on
// a cluster"). Unset (always, outside tests), nothing happens.

// failAfterClusterCommit is the failpoint's check, called between the
// pointer's move and the sinks' commit of epoch.
func failAfterClusterCommit(epoch uint64, logf func(string, ...any)) {
	path := os.Getenv("STREAMSQLD_FAILPOINT_AFTER_CLUSTER_COMMIT")
	if path == "" {
		return
	}
	if _, err := os.Stat(path); err != nil {
		return
	}
	logf("failpoint: killed after the cluster committed checkpoint %d, before its sinks commit it", epoch)
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}
