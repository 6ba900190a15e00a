// Package sql turns statement text into parsed statements: PostgreSQL's own
// grammar (pg_query_go, cgo) plus streamsql's streaming extensions.
//
// The extension layer runs first. A small scanner (tokenize.go) splits the
// text into tokens the way PostgreSQL would (strings with doubled quotes,
// E'..' strings, dollar quotes, quoted identifiers, -- and nested /* */
// comments), so keywords inside quotes or comments are never touched, and
// splits statements at semicolons. For each statement the lifter (lift*.go)
// removes what PostgreSQL's grammar lacks, blanking it with spaces of the same
// byte length so that every location in the PostgreSQL parse tree, and every
// later syntax error, still points into the user's original text:
//
//	CREATE TABLE t (a int, ts timestamp, WATERMARK FOR ts AS ts) APPEND ONLY
//	CREATE TABLE t (a int, ts timestamp                        )
//	  -> CreateStmt + Ext{Watermark{Column: "ts", Expr: "ts"}, AppendOnly}
//
// What is lifted, and what PostgreSQL is left to parse (Statement.AST):
//
//   - WATERMARK FOR col AS expr [WITH (...)], APPEND ONLY and STRUCT<...>
//     column types of CREATE TABLE / CREATE SOURCE (the type becomes "struct").
//   - CREATE SOURCE ... WITH (...) [FORMAT f [ENCODE e]]: rewritten to
//     CREATE TABLE over the column list ("()" when there is none).
//   - CREATE SINK name FROM view | FROM (query) | AS query WITH (...): the AST
//     is the query ("TABLE view" for the FROM view form).
//   - EMIT ... ending a query (materialized view, sink, subscription, SELECT).
//   - SUBSCRIBE [TO] name | (query) [WITH (...)], also inside DECLARE CURSOR
//     FOR and COPY (...) TO STDOUT: the AST is the query ("TABLE name"), or
//     the DECLARE / COPY statement around it.
//   - FLUSH, SHOW SOURCES|SINKS|TABLES|MATERIALIZED VIEWS, DROP SOURCE|SINK:
//     no AST at all, only Ext.
//   - Flink's TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size)) (and HOP, SESSION,
//     CUMULATE): blanked down to TUMBLE(t, ts, size), which PostgreSQL parses
//     as a RangeFunction whose first argument is a ColumnRef naming the
//     relation; the binder resolves it (as it does for the native form).
//   - FOR SYSTEM_TIME AS OF expr (temporal lookup join) and RisingWave's
//     SESSION WITH GAP window frame.
//
// A malformed streaming clause is a 42601 syntax error pointing at the
// offending token. SET RW_IMPLICIT_FLUSH / streaming_parallelism are ordinary
// PostgreSQL SET statements and need no lifting.
//
// Parse is pure and safe for concurrent use; its results are read-only.
package sql
