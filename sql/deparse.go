package sql

import (
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"
)

var (
	versionOnce sync.Once
	version     int32
)

// parserVersion is the parse tree version pg_query stamps on its results;
// Deparse refuses trees without it.
func parserVersion() int32 {
	versionOnce.Do(func() {
		if r, err := pg.Parse("SELECT 1"); err == nil {
			version = r.Version
		}
	})
	return version
}

// Deparse renders a statement node back to SQL text in PostgreSQL's
// canonical form (used to store column defaults and view queries).
func Deparse(stmt *pg.Node) (string, error) {
	return pg.Deparse(&pg.ParseResult{Version: parserVersion(), Stmts: []*pg.RawStmt{{Stmt: stmt}}})
}
