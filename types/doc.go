// Package types defines streamsql's SQL types: their PostgreSQL identity (OID,
// name, modifiers), their Arrow storage (arrow.go is the one mapping), the Go
// form of single values, and text and binary input/output byte-identical to
// PostgreSQL 15.
//
// Everything here is pure: no package state is mutated after init, so all of
// it is safe for concurrent use.
//
// A value's journey, for a column declared numeric(10,2):
//
//	wire text "12.5" --Parse(TNumeric.WithTypmod(...))--> *apd.Decimal 12.50
//	  --AppendValue--> arrow String "12.50"
//	  --ValueAt--> *apd.Decimal --FormatText--> "12.50" on the wire
package types
