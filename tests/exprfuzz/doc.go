// Package exprfuzz compares random scalar expressions evaluated by
// streamsql with PostgreSQL 15's answers (TestExpressionsMatchPostgres).
// It holds tests only.
package exprfuzz
