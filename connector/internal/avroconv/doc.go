// Package avroconv reads and writes Avro records in the Confluent wire
// format (magic byte 0, the writer schema's 4-byte big-endian registry id,
// then Avro's binary encoding) for the kafka connector's ENCODE AVRO:
//
//   - Registry (registry.go) talks to a Confluent-compatible schema
//     registry through franz-go's pkg/sr, caching schemas by id and ids by
//     subject and schema; it is safe for concurrent use.
//   - Plan (decode.go) is a writer schema compiled against a relation's
//     columns (schema resolution by field name: writer fields without a
//     column are skipped, columns without a field are NULL); it decodes a
//     payload straight into a decode.Row, so rows reach the Arrow
//     builders without a value tree. A Plan is immutable; decoding state
//     lives in the caller's Row.
//   - Writer (encode.go) derives the Avro record schema of a sink's
//     columns and appends rows of Arrow arrays in Avro binary. It is owned
//     by one goroutine.
//
// Schemas are parsed with github.com/hamba/avro/v2; the binary encoding is
// done here, field by field, so that decoding allocates nothing per row
// for numbers, timestamps and text. The type mapping is in
// docs/connectors.md (ENCODE AVRO).
package avroconv
