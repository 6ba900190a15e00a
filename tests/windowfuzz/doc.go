// Package windowfuzz holds a randomized test of event time. Materialized
// views of random windowed aggregations (TUMBLE, HOP, SESSION; EMIT ON
// UPDATE, EMIT ON WINDOW CLOSE with WITH DELAY, ALLOW LATENESS and EARLY
// EVERY, EMIT EVERY), top-Ns per window, aggregations closed by the
// watermark (Nexmark q5's max per window start among them), lag, lead and
// row_number emitted on window close, plain rows emitted on window close,
// windows over a UNION ALL of the two tables, interval joins, window
// joins, and
// temporal filters (`WHERE ts > now() + x`, keys gone silent by `HAVING
// max(ts) < now() + x`) on the manual clock, over watermarked tables that receive rows
// out of order (and, by seed, updates, deletes and idle time on the manual
// clock), must hold after every write what a model of the documented
// semantics says: watermarks, which rows are late, when windows close and
// are freed, session merges and splits, which rows an interval join drops.
//
// The model follows docs/windows.md and docs/watermarks.md. Where they
// leave a detail to the operator, it follows the rule the operator's own
// comment states: which rows a SESSION view holds under EMIT ON WINDOW
// CLOSE while a late row has reopened an emitted session
// (exec/stream/windowagg_session.go), and when an EVERY timer fires again
// (exec/stream/windowagg.go). It holds tests only.
package windowfuzz
