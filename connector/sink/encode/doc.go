// Package encode turns a sink's output changes (Arrow record batches with
// their stream ops) into the records sink connectors write: the one place
// where FORMAT ... ENCODE ... is validated and implemented, shared by every
// sink (file, kafka, ...).
//
// Formats (docs/sinks.md):
//
//   - PLAIN (FORMAT JSON = FORMAT PLAIN ENCODE JSON; FORMAT CSV): one record
//     per inserted row, no key. Only for queries that never retract, unless
//     force_append_only = 'true', which drops deletes and update_before rows
//     and writes update_after rows as inserts.
//   - UPSERT ENCODE JSON: key = the primary key columns (primary_key option
//     or the query's stream key) as a JSON object, value = the row; a delete
//     is a tombstone (the key with a nil value), and so is the old key of
//     an update that changed the key.
//   - DEBEZIUM ENCODE JSON: {"before":..., "after":..., "op":"c|u|d",
//     "ts_ms":...}; an update_before/update_after pair is one "u" record.
//
// Values are written so that the file and Kafka sources read them back to
// the same values: numbers as JSON numbers (NaN and infinities as the
// strings PostgreSQL prints), json/jsonb as embedded JSON, everything else
// as its PostgreSQL text output (timestamps, intervals, bytea as \x..., arrays
// as {...} literals). Encoding reads the Arrow columns directly.
//
// An Encoder is owned by one goroutine (a sink writer's).
package encode
