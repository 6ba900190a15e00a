// Package exprfuzz holds randomized comparison tests: seeded random scalar
// expressions (TestExpressionsMatchPostgres) and queries
// (TestQueriesMatchPostgres) evaluated by streamsql and by PostgreSQL 15
// must give the same answers, and materialized views of random queries
// (TestViewsMatchQueries) must stay equal to the queries as batch queries
// through writes and a restart. It holds tests only.
package exprfuzz
