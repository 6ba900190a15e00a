package sql

import (
	"fmt"
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"
)

func bigInsert() string {
	rows := make([]string, 100000)
	for i := range rows {
		rows[i] = fmt.Sprintf("(%d, 'x%d', %d.5 + 1)", i, i, i)
	}
	return "INSERT INTO t VALUES " + strings.Join(rows, ", ")
}

// BenchmarkNestingDepth: the guard's cost on a 100,000-row INSERT, beside
// BenchmarkPgParseInsert (the parse it guards).
func BenchmarkNestingDepth(b *testing.B) {
	q := bigInsert()
	b.SetBytes(int64(len(q)))
	for i := 0; i < b.N; i++ {
		nestingDepth(q)
	}
}

func BenchmarkPgParseInsert(b *testing.B) {
	q := bigInsert()
	b.SetBytes(int64(len(q)))
	for i := 0; i < b.N; i++ {
		if _, err := pg.Parse(q); err != nil {
			b.Fatal(err)
		}
	}
}
