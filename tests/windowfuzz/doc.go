// Package windowfuzz holds a randomized test of event time. Materialized
// views over two watermarked tables that receive rows out of order (and,
// by seed, updates, deletes and idle time on the manual clock) must hold,
// after every write, what a model of the documented semantics says:
// watermarks, which rows are late, when windows close and are freed,
// session merges and splits, which rows a join drops, what a restart
// replays.
//
// The views: windowed aggregations (TUMBLE, HOP, CUMULATE, SESSION; EMIT
// ON UPDATE, EMIT ON WINDOW CLOSE with WITH DELAY, ALLOW LATENESS and
// EARLY EVERY, EMIT EVERY), also over a UNION ALL of the two tables;
// top-Ns per window; aggregations closed by the watermark (Nexmark q5's
// max per window start among them, in one query and across two views);
// lag, lead and row_number, and plain rows, emitted on window close;
// interval joins of the two tables, and windows over an inner or LEFT one's
// output; window joins; temporal filters
// (`WHERE ts > now() + x`, keys gone silent by `HAVING max(ts) < now() +
// x`). In some seeds windowed aggregations under EMIT ON WINDOW CLOSE store
// their late rows with LATE ROWS INTO, and each such table must hold
// exactly the rows the model found late, once, across the restart.
//
// TestKafkaWindowsMatchModel runs the windowed aggregations over a Kafka
// source (kfake, one partition) instead of a table, one message a write,
// with a restart from a checkpoint taken just before it.
//
// The model follows docs/windows.md and docs/watermarks.md. Where they
// leave a detail to the operator, it follows the rule the operator's own
// comment states: which rows a SESSION view holds under EMIT ON WINDOW
// CLOSE while a late row has reopened an emitted session
// (exec/stream/windowagg_session.go), and when an EVERY timer fires again
// (exec/stream/windowagg.go). It holds tests only.
package windowfuzz
