// Package engine runs statements: it owns the sessions (settings, transaction
// status) and dispatches each parsed statement to the planner and executor
// (SELECT, INSERT, UPDATE, DELETE, EXPLAIN), to the catalog (CREATE, DROP),
// or handles it itself (SET, SHOW, BEGIN/COMMIT/ROLLBACK, COPY).
//
// A SELECT travels:
//
//	Session.Prepare: sql.Statement --planner.PlanSelect--> exec.Node tree (+ result columns)
//	Session.Execute: Node.Open(exec.Context{TimeZone, params, now, catalog}) --> Result.Rows
//	wire: Rows.Next() batches --types.AppendText--> DataRow messages
//
// SQL cursors (DECLARE / FETCH / MOVE / CLOSE) live in the session
// (cursor.go); SUBSCRIBE's never-ending rows are served as a query, a
// cursor or COPY data (live.go), and rows that may wait for input implement
// TryNexter so that readers hand out what is ready before waiting.
//
// Tables created WITH (connector = 'kafka') have a background ingest each
// (ingest.go, ingest_ddl.go, ingest_upsert.go) that writes what the
// connector reads, committing the reader's position with every write.
//
// An Engine is safe for concurrent use; a Session is used by one connection
// goroutine at a time. Writes are durable when Execute returns (storage
// fsyncs, grouped across sessions); see docs/transactions.md for what a
// transaction block means.
package engine
