// Package decode turns text records (JSON objects, CSV records) straight
// into Arrow record batches, column by column, without reflection or a
// per-record value tree: the decoders of the file and kafka connectors.
//
// A Schema (immutable, shared) says how each column's text converts; a
// Row (owned by one goroutine) holds one record's converted fields until
// Batch.Add appends them, so a record failing in a later column leaves no
// trace; a Batch (owned by one goroutine) accumulates rows in builders.
//
// Conversions follow PostgreSQL's text input (types.ParseText), with fast
// paths for integers, floats and unbounded text. In JSON, keys name
// columns, other keys are ignored, and a missing key or null is NULL; a
// json or jsonb column takes the value's JSON text as is.
package decode
