// Package sql turns statement text into parsed statements: PostgreSQL's own
// grammar (pg_query_go, cgo) plus streamsql's streaming extensions.
//
// The extension layer (extensions.go) scans the text first, quote- and
// comment-aware, and lifts out the clauses PostgreSQL lacks (EMIT ..., WATERMARK
// FOR, APPEND ONLY, CREATE SOURCE/SINK, SUBSCRIBE, FLUSH). It blanks them with
// spaces of the same byte length, so every location in the PostgreSQL parse tree
// still points into the user's original text, and attaches what it lifted to
// the Statement:
//
//	"CREATE TABLE t (a int) APPEND ONLY; SELECT 1"
//	  lift  -> "CREATE TABLE t (a int)            ; SELECT 1" + {AppendOnly}
//	  parse -> [Statement{CreateStmt, Ext{AppendOnly}}, Statement{SelectStmt}]
//
// Parse is pure and safe for concurrent use.
package sql
