package sql

import (
	"strings"
	"testing"
)

// FuzzParseDepth feeds Parse the deep shapes of depth_test.go near and over
// the limit, and mutations of them. Parse runs pg_query's C parser in this
// process: an input whose nesting the bound misses would overflow its stack
// and kill the fuzzer with SIGSEGV instead of failing softly. Whatever it
// accepts, Deparse of it must not fail on depth either way round.
//
//	go test ./sql -run '^$' -fuzz FuzzParseDepth -fuzztime 5m
func FuzzParseDepth(f *testing.F) {
	limit := MaxNestingDepth()
	for _, s := range deepShapes {
		for _, n := range []int{limit / 4, limit / 2, limit - 1, limit + 1, 3 * limit} {
			f.Add(s.build(n))
		}
	}
	f.Add("SELECT " + strings.Repeat("(", 3000) + "1" + strings.Repeat(strings.Repeat("+1", 9)+")", 3000))
	f.Add("SELECT 1" + strings.Repeat("+1", 30000))
	f.Add("SELECT $1::int" + strings.Repeat("+$1::int", 30000))
	f.Add("CREATE MATERIALIZED VIEW v AS SELECT a + " + strings.Repeat("-(", 2000) + "1" + strings.Repeat(")", 2000) + " FROM t EMIT ON UPDATE")
	f.Add("SELECT 'unterminated" + strings.Repeat("+1", 30000))
	f.Add("SELECT /* unterminated" + strings.Repeat("+1", 30000))
	f.Fuzz(func(t *testing.T, q string) {
		if len(q) > 1<<20 {
			return
		}
		stmts, err := Parse(q)
		if err != nil {
			return
		}
		for _, st := range stmts {
			if st.AST != nil {
				_, _ = Deparse(st.AST)
			}
		}
	})
}
