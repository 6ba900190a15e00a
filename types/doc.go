// Package types defines streamsql's SQL types: their PostgreSQL identity (OID,
// name, modifiers), their Arrow storage (arrow.go is the one mapping), the Go
// form of single values, and text and binary input/output byte-identical to
// PostgreSQL 15.
//
// Everything here is pure: no package state is mutated after init, so all of
// it is safe for concurrent use. Values passed in are never modified.
//
// A value's journey, for a column declared numeric(10,2):
//
//	wire text "12.5" --ParseText(TNumeric.WithTypmod(...))--> *apd.Decimal 12.50
//	  --AppendValue--> arrow String "12.50"
//	  --ValueAt--> *apd.Decimal --AppendText--> "12.50" on the wire
//
// Files: types.go (T, kinds, OIDs, format_type names), arrow.go (Arrow
// mapping, Go forms, FormatOptions), values.go (Arrow access), format.go and
// parse.go (text I/O dispatch; per type: float.go, numeric.go, datetime.go,
// datetime_parse.go, dtparse.go, interval.go, interval_parse.go, jsonb.go,
// array.go), binary.go (send/receive), compare.go, names.go (FromName,
// TypmodIn).
//
// Conventions worth knowing:
//   - Infinite dates and timestamps are DateInfinity/DateMinusInfinity and
//     TimestampInfinity/TimestampMinusInfinity (the extreme int values).
//   - Timestamps are microseconds since 1970 in an int64, so the latest
//     timestamp is in 294247 AD (PostgreSQL: 294276 AD).
//   - char(n) values are stored blank-padded; Compare ignores trailing
//     blanks for Bpchar, as PostgreSQL's bpchar operators do.
//   - jsonb values are stored as their normalized text (NormalizeJSONB).
//   - uuid values are stored as their canonical text (ParseUUID), which
//     orders as the 16 bytes; the binary wire format is the bytes.
//   - Arrays are []Value; multidimensional arrays nest []Value in text and
//     binary I/O but cannot be stored in Arrow. Lower bounds are always 1.
//   - Every user-caused error is a *pgerr.Error with PostgreSQL's SQLSTATE,
//     message and detail; the oracle tests (testdata/pg15_*.tsv, regenerated
//     by TestGenerateOracle against a real PostgreSQL 15) pin them down.
package types
