// Package pgsink is the PostgreSQL sink (CREATE SINK ... WITH (connector =
// 'postgres', ...)): it keeps a table of a PostgreSQL database equal to
// the sink's query, exactly once.
//
// A writer keeps the changes of each epoch in memory. PreCommit returns
// them (every epoch pre-committed and not yet committed) as the pending
// bytes the checkpoint stores; Commit applies each epoch in one
// PostgreSQL transaction that also moves the sink's progress row
// (progress.table: sink name, epoch) to that epoch, and skips an epoch at
// or below the recorded one. Recover applies the pending epochs the same
// way, so an epoch whose transaction committed before a crash is not
// applied again, and one that did not is applied once.
//
// Writers are owned by the sink job's goroutine; Status is safe from any.
// Users' documentation: docs/sinks.md ("postgres").
package pgsink
