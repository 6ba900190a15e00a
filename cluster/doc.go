// Package cluster is a streamsql node's membership in a cluster: it
// registers the node in etcd under a lease it keeps alive, campaigns for
// the coordinator role with etcd's election recipe, lists the live nodes,
// and writes what only the coordinator may write (the committed-checkpoint
// pointer, the instance assignment, the statement log) in transactions
// fenced on the coordinator's term, so that a coordinator that lost its
// leadership (paused past its lease, cut off from etcd) cannot commit.
//
// The design, the etcd key layout and the failure cases are in
// docs/contributing/cluster.md. Placing work on the nodes is package
// cluster/dist.
//
// # Concurrency
//
// A Node is safe for concurrent use. It owns one goroutine (started by
// Join, stopped by Close) that keeps the registration and the candidacy
// alive and renews them with a new lease when the old one is lost.
package cluster
