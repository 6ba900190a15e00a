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
// canonical form (used to store column defaults and view queries). Text
// that Parse would refuse as nested too deeply (the canonical form may add
// parentheses) is refused here with the same 54001, so that every stored
// definition parses again; text that would read back as another tree is
// mended (deparse_parens.go).
func Deparse(stmt *pg.Node) (string, error) {
	text, err := deparse(stmt)
	if err != nil {
		return "", err
	}
	if !readsBack(stmt, text) { // deparse_parens.go
		if fixed, ok := withParenthesizedTests(stmt); ok {
			if text, err = deparse(fixed); err != nil {
				return "", err
			}
		}
	}
	if err := checkNesting(text); err != nil {
		return "", err
	}
	return text, nil
}

func deparse(stmt *pg.Node) (string, error) {
	return pg.Deparse(&pg.ParseResult{Version: parserVersion(), Stmts: []*pg.RawStmt{{Stmt: stmt}}})
}
