// Package windowfuzz holds a randomized test of event time: materialized
// views of random windowed aggregations (TUMBLE, HOP, SESSION; EMIT ON
// UPDATE and EMIT ON WINDOW CLOSE with WITH DELAY and ALLOW LATENESS),
// EMIT EVERY and EARLY EVERY, top-Ns per window, aggregations closed by
// the watermark, and interval joins over
// a watermarked table that receives rows out of order (and, by seed,
// updates, deletes and idle time on the manual clock) must hold, after
// every write, what a model of the documented semantics says: watermarks,
// which rows are late, when windows close and are freed, session merges and
// splits, which rows an interval join drops. The model follows docs/windows.md and docs/watermarks.md; for
// which rows a SESSION view holds under EMIT ON WINDOW CLOSE while a late
// row has reopened an emitted session, it follows the rule the operator
// states (exec/stream/windowagg_session.go). It holds tests only.
package windowfuzz
