package engine

import "github.com/streamsql/streamsql/catalog"

// ClusterJobIsSink says whether cluster job oid is a sink's (not a
// materialized view's): a sink's output already written cannot be taken
// back, so the coordinator never restarts it from a checkpoint older than
// the one it committed output for (docs/contributing/cluster.md,
// "Failure cases", a damaged checkpoint).
func (e *Engine) ClusterJobIsSink(oid uint32) bool {
	rel := e.cat.Relation(oid)
	return rel != nil && rel.Kind == catalog.KindSink
}

// ClusterHasRelation says whether this node's catalog has relation oid
// (a statement of the cluster's log that it ran before it restarted on
// its old data directory: cmd/streamsqld skips its replay).
func (e *Engine) ClusterHasRelation(oid uint32) bool { return e.cat.Relation(oid) != nil }
