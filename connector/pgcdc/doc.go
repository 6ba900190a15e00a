// Package pgcdc is the PostgreSQL change-data-capture connector
// (connector = 'postgres-cdc'): it keeps a streamsql table equal to a table
// of an upstream PostgreSQL (10 or later, wal_level = logical) through
// logical replication with the built-in pgoutput plugin, over
// github.com/jackc/pglogrepl and pgx's pgconn.
//
// A reader with no position (or one taken while the initial snapshot was
// being copied) (re)creates the replication slot with an exported snapshot,
// copies the table as of the slot's consistent point in one REPEATABLE
// READ transaction, then streams the slot from that point. Every batch it
// emits holds whole upstream transactions, as rows to upsert or keys to
// delete (the DeleteColumn and UnchangedColumn after the table's columns),
// and its position is the end LSN of the last transaction in it. The
// table's ingest (engine/ingest_cdc.go) writes each batch and its position
// in one durable write; only then does emit return and the reader confirm
// that LSN to PostgreSQL, so the slot keeps every transaction the table
// does not hold yet and a restart after kill -9 (of either side) resumes at
// the table's position with nothing lost or applied twice.
//
// Users' documentation: docs/connectors.md ("postgres-cdc"); how it works:
// docs/contributing/pgcdc.md.
package pgcdc
