// Package dataflow runs streaming jobs: it gives the leaves of each job's
// plan their inputs (table feeds, connector readers, other views'
// changelogs), injects barriers, tracks which epochs are complete, and
// serves subscriptions. See docs/contributing/streaming.md, "The runtime".
//
// A materialized view
//
//	CREATE MATERIALIZED VIEW v AS SELECT auction, count(*) FROM bid GROUP BY auction
//
// runs as one job:
//
//	table reader(bid) --> StreamHashAgg --> Materialize(v) --> subscribers, downstream jobs
//	      ^ barriers injected by the Runtime every epoch         \-> changelog (while clients subscribe)
//
// Checkpoints (checkpoint.go, resume.go) snapshot every job's operators at
// a checkpoint barrier and let jobs resume from them after a restart; view
// changelogs (changelog.go) let clients resume a subscription after an
// epoch (SubscribeSince), also across a restart. Design:
// docs/contributing/checkpoints.md.
//
// Ownership and concurrency: a Runtime is safe for concurrent use. Each job
// runs its operators on goroutines of their own (exec/stream); the
// Runtime's mutex serializes job registration and barrier injection, so all
// roots of a new job see the same first barrier.
package dataflow
