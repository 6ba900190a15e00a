// Package storage holds table data: immutable Arrow chunks with row ids,
// one durable log per table with group commit, recovery and compaction.
//
// # In memory
//
// A table's rows are a list of immutable chunks (Arrow record batches whose
// rows have consecutive row ids) plus a deleted bitmap per chunk. Every write
// builds a new version of that list copy-on-write, sharing untouched chunks,
// and publishes it with an atomic pointer store: Snapshot is O(1), never waits
// for a writer, and a snapshot never changes afterwards. Deleting rows copies
// the touched chunks' bitmaps; a chunk whose rows are all deleted is dropped.
//
// Small writes coalesce like a binary counter: each insert appends its batch
// as a chunk, then while the last two chunks are adjacent, the older is no
// larger than the newer and together they hold at most 65536 rows, they are
// concatenated into one. Thousands of single-row INSERTs thus leave only a
// few chunks (sizes 2^k, O(log n) small ones at the tail) and each row is
// copied about log2(65536) = 16 times at most; a 64k-row COPY batch is kept as
// given, zero-copy, so scanning a bulk-loaded table reads the caller's arrays.
//
// Row ids are assigned in insert order from a per-table counter and never
// reused (not after deletes, nor TRUNCATE). An UPDATE deletes the old row id
// and appends the new row under a new id.
//
// # Constraints
//
// NOT NULL, PRIMARY KEY and UNIQUE are checked before anything is written,
// row by row in PostgreSQL's order, with its SQLSTATEs, messages and details
// (23502 "Failing row contains (...)", 23505 "Key (id)=(1) already exists.").
// A hash index per key maps each live row's encoded key to its row id
// (key.go describes the encoding, which follows PostgreSQL's equality:
// 1.50 = 1.5, -0 = 0, NaN = NaN, '1 mon' = '30 days', trailing blanks of
// character(n)); LookupKey, LookupUnique and FindConflicts (ON CONFLICT)
// read them.
//
// # On disk
//
// Each table has its own append-only log, <oid>.log in Open's directory
// (<datadir>/tables), of framed records (length, CRC-32C, payload;
// record.go): a header with the TableDef (so the log decodes without the
// catalog), then INSERT, DELETE, UPDATE, TRUNCATE records, and compaction's
// CHUNK records. Columns are encoded by a compact codec of the Arrow buffers
// (codec.go), laid out so recovery decodes them zero-copy: against Arrow IPC,
// a one-row record is 80 bytes instead of 416 and encodes ~30x faster, and a
// 64k-row batch decodes ~15x faster.
//
// A write that spans several batches (InsertBatches, e.g. a whole COPY) is
// a chain of frames flagged "more follows" except the last; recovery applies
// a chain only when it is complete, so such a write is all or nothing too.
// The same chaining carries write metadata (meta.go): InsertBatchesMeta and
// UpsertMeta end their chain with a small META frame (a Kafka table's reader
// position), so the rows and the metadata survive a crash together;
// compaction keeps the last metadata in the log's header.
//
// Writers queue their record with the Store's committer goroutine, which
// writes everything pending, fsyncs each touched log once, publishes the new
// table states and wakes all waiters (commit.go): concurrent writers on any
// tables share fsyncs, and a write returns only once durable. Readers never
// see rows that are not yet durable.
//
// Open replays each log; a torn tail (a bad last frame with nothing valid
// after it: a crash mid-write) is cut off. A bad frame followed by valid
// ones, or a log ending before a checkpoint's mark, is damage: Open fails
// with a *DamagedError, or with Options.RecoverDamaged moves the rest of
// the file aside and keeps the valid prefix (damage.go). Compaction (compact.go) rewrites a log
// that holds much more than its live rows as a snapshot, atomically by rename;
// Table.Alter (ALTER TABLE) uses the same rewrite with the new definition.
// One write must encode to less than 2 GiB (54000 otherwise).
//
// Format 1 (the header's JSON has "format": 1) adds log sequence numbers
// and retention (lsn.go, retain.go): the header also carries the LSN of the
// log's snapshot part, the first LSN of the table's LSN space (creation or
// last ALTER) and where its history starts; a 64-byte mark block follows
// the header frame (two CRC'd slots with the last two Retain marks, written
// in place alternately); the kind byte's recJoin bit groups the frames of
// one statement's delta; and compaction of a retained table appends recHist
// records: the retained writes with their deltas' rows (old rows included),
// one chained write each. A complete write counts one LSN, so nothing is
// added to a write's record. Logs of format 0 (no "format") open as before,
// count LSNs from their end (nothing retained) and are rewritten in
// format 1 by Open.
//
// # Change feeds
//
// Table.Subscribe returns a snapshot and a Feed of every durable change
// after it (feed.go): each submitted state links to the next through a step
// holding the write's deltas, so a feed is a pointer into that chain, reads
// cost O(changes), and nothing is kept when nobody subscribes. ALTER TABLE,
// DropTable and Close end feeds with an error wrapping ErrFeedEnded. Writers
// wait after their durable write while a feed lags by more than 1M rows or
// 64 MiB of deltas.
//
// # Positions that survive a restart
//
// Every durable write (one feed step) gets the next log sequence number
// (LSN): Position.LSN, Table.LSN, Feed.LSN. The checkpoint coordinator calls
// Table.Retain(lsn) (or Store.RetainTables for many) after a checkpoint
// that cut the table at lsn commits;
// the table then keeps the writes after the older of its last two marks
// replayable, in memory and across compaction and restarts, and
// Table.FeedFrom(lsn) returns a feed of the writes after lsn (the same
// Deltas a live feed gave, then live writes), or an error wrapping
// ErrPositionGone. ReleaseRetained ends a table's retention. Design, costs
// and limits: lsn.go; docs/contributing/checkpoints.md, "Tables".
//
// # Limits
//
// Each Table write is atomic and durable on its own. Store.Begin gives a
// transaction (tx.go): its writes are staged against a private state under a
// per-table write lock, seen through Tx.Snapshot, and committed as one
// chained write per table (atomic per table after a crash, not across tables).
// The space of a deleted row is reclaimed only when every row of its chunk is
// deleted (row ids must stay put while any snapshot may name them), so a
// table under random updates keeps dead rows in its older chunks. Compaction
// holds the table's writers for as long as it takes to write the snapshot.
//
// # Concurrency
//
// Store and Table are safe for concurrent use. Writers of one table are
// serialized only while they validate and queue (not while they wait for the
// fsync); readers take snapshots without locks.
package storage
