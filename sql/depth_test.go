package sql

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	pgparser "github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/streamsql/streamsql/pgerr"
)

// deepShapes builds, for a size n, the deepest inputs of each shape the
// grammar nests: operator chains, brackets, prefix operators, CASE, ARRAY,
// subqueries, set operations, function calls, casts and combinations.
var deepShapes = []struct {
	name  string
	build func(n int) string
}{
	{"plus", func(n int) string { return "SELECT 1" + strings.Repeat("+1", n) }},
	{"concat", func(n int) string { return "SELECT 'a'" + strings.Repeat("||'a'", n) }},
	{"columns", func(n int) string { return "SELECT a" + strings.Repeat(" + a", n) + " FROM t" }},
	{"params", func(n int) string { return "SELECT $1::int" + strings.Repeat("+$1::int", n) }},
	{"cast", func(n int) string { return "SELECT 1" + strings.Repeat("::int", n) }},
	{"at_time_zone", func(n int) string { return "SELECT now()" + strings.Repeat(" AT TIME ZONE 'UTC'", n) }},
	{"collate", func(n int) string { return "SELECT 'a'" + strings.Repeat(` COLLATE "C"`, n) }},
	{"paren", func(n int) string { return "SELECT " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) }},
	{"not", func(n int) string { return "SELECT " + strings.Repeat("NOT ", n) + "true" }},
	{"neg", func(n int) string { return "SELECT " + strings.Repeat("- ", n) + "1" }},
	{"neg_paren", func(n int) string { return "SELECT " + strings.Repeat("-(", n) + "1" + strings.Repeat(")", n) }},
	{"case", func(n int) string {
		return "SELECT " + strings.Repeat("CASE WHEN true THEN ", n) + "1" + strings.Repeat(" END", n)
	}},
	{"case_else", func(n int) string {
		return "SELECT " + strings.Repeat("CASE WHEN false THEN 0 ELSE ", n) + "1" + strings.Repeat(" END", n)
	}},
	{"array", func(n int) string { return "SELECT " + strings.Repeat("ARRAY[", n) + "1" + strings.Repeat("]", n) }},
	{"subquery", func(n int) string { return strings.Repeat("SELECT (", n) + "SELECT 1" + strings.Repeat(")", n) }},
	{"from_subquery", func(n int) string {
		return strings.Repeat("SELECT * FROM (", n) + "SELECT 1" + strings.Repeat(") s", n)
	}},
	{"union", func(n int) string { return "SELECT 1, 2" + strings.Repeat(" UNION SELECT 1, 2", n) }},
	{"intersect", func(n int) string { return "SELECT 1" + strings.Repeat(" INTERSECT SELECT 1", n) }},
	{"func", func(n int) string { return "SELECT " + strings.Repeat("abs(", n) + "1" + strings.Repeat(")", n) }},
	{"join", func(n int) string { return "SELECT 1 FROM t" + strings.Repeat(" JOIN t USING (a)", n) }},
	// Combinations: a chain after a deep bracket, prefix operators over a
	// BETWEEN whose upper bound is a chain, chains within nested brackets.
	{"paren_then_chain", func(n int) string {
		return "SELECT " + strings.Repeat("(", n/2) + "1" + strings.Repeat(")", n/2) + strings.Repeat("+1", n/2)
	}},
	{"not_between_chain", func(n int) string {
		return "SELECT " + strings.Repeat("NOT ", n/2) + "1 BETWEEN 0 AND 1" + strings.Repeat("+1", n/2)
	}},
	{"nested_chains", func(n int) string {
		k := n / 10
		return "SELECT " + strings.Repeat("(", k) + "1" + strings.Repeat(strings.Repeat("+1", 9)+")", k)
	}},
	{"chain_and_not", func(n int) string {
		return "SELECT " + strings.Repeat("1+", n/2) + "(" + strings.Repeat("NOT ", n/2) + "true)::int"
	}},
}

// TestNestingDepthShapes finds, per shape, the largest size Parse accepts
// and checks that the next is refused with 54001 and that PostgreSQL (3,000
// terms of 1+1+... accepted) and real statements keep working.
func TestNestingDepthShapes(t *testing.T) {
	if MaxNestingDepth() < maxNestingUnits {
		t.Skipf("stack rlimit lowers the limit to %d", MaxNestingDepth())
	}
	refused := func(q string) bool {
		_, err := Parse(q)
		var pe *pgerr.Error
		return errors.As(err, &pe) && pe.Code == pgerr.StatementTooComplex
	}
	for _, s := range deepShapes {
		n := largestAccepted(t, s.build)
		t.Logf("%-18s largest accepted %5d (%6d bytes), refused from %5d", s.name, n, len(s.build(n)), n+1)
		if _, err := Parse(s.build(n)); err != nil {
			t.Errorf("%s: %d: %v", s.name, n, err)
		}
		if !refused(s.build(n + 1)) {
			t.Errorf("%s: %d not refused with 54001", s.name, n+1)
		}
	}
	for n, want := range map[int]bool{3000: false, 5000: true} {
		if got := refused(deepShapes[0].build(n)); got != want {
			t.Errorf("1+1+... with %d terms: refused %v, want %v", n, got, want)
		}
	}
}

// largestAccepted is the largest size of a shape whose nesting bound is
// within the limit.
func largestAccepted(t *testing.T, build func(int) string) int {
	over := func(n int) bool { return nestingDepth(build(n)) > MaxNestingDepth() }
	lo, hi := 1, 2
	for !over(hi) {
		lo, hi = hi, hi*2
		if hi > 1<<20 {
			t.Fatalf("never refused: %.60s", build(hi))
		}
	}
	for hi-lo > 1 {
		if m := (lo + hi) / 2; over(m) {
			hi = m
		} else {
			lo = m
		}
	}
	return lo
}

// TestNestingDepthLongLists: lists do not nest, so statements of any length
// made of them stay accepted.
func TestNestingDepthLongLists(t *testing.T) {
	rows := make([]string, 100000)
	for i := range rows {
		rows[i] = fmt.Sprintf("(%d, 'x%d', %d.5 + 1)", i, i, i)
	}
	items := make([]string, 50000)
	for i := range items {
		items[i] = strconv.Itoa(i)
	}
	cols := make([]string, 5000)
	for i := range cols {
		cols[i] = fmt.Sprintf("a + %d AS c%d", i, i)
	}
	arms := strings.Repeat(" WHEN a = 1 THEN 'one'", 5000)
	for name, q := range map[string]string{
		"insert 100000 rows": "INSERT INTO t VALUES " + strings.Join(rows, ", "),
		"IN 50000 items":     "SELECT * FROM t WHERE a IN (" + strings.Join(items, ",") + ")",
		"5000 select items":  "SELECT " + strings.Join(cols, ", ") + " FROM t",
		"OR 20000 terms":     "SELECT * FROM t WHERE a = 1" + strings.Repeat(" OR a = 1 AND b BETWEEN 1 AND 2", 20000),
		"CASE 5000 arms":     "SELECT CASE" + arms + " END FROM t",
		"ARRAY 50000 items":  "SELECT ARRAY[" + strings.Join(items, ",") + "]",
		"many statements":    strings.Repeat("SELECT 1+1+1+1+1+1+1+1+1+1;", 3000),
	} {
		if _, err := Parse(q); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestNestingDepthCParserSafe runs pg_query's C parser directly (no guard)
// in a child process on a stack a third of 8 MB: every shape's largest
// accepted input must parse there, while the input that used to kill the
// server (1+1+... with 30,000 terms) crashes even a full 8 MB stack, which
// shows the child would report a crash.
func TestNestingDepthCParserSafe(t *testing.T) {
	if q := os.Getenv("STREAMSQL_DEPTH_CHILD"); q != "" {
		_, err := pgparser.ParseToProtobuf(q)
		fmt.Println("parsed:", err)
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("runs the C parser in child processes")
	}
	if MaxNestingDepth() < maxNestingUnits {
		t.Skipf("stack rlimit lowers the limit to %d", MaxNestingDepth())
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := func(stackKB int, q string) (string, error) {
		cmd := exec.Command("sh", "-c", fmt.Sprintf("ulimit -s %d && exec \"$0\" -test.run '^TestNestingDepthCParserSafe$'", stackKB), exe)
		cmd.Env = append(os.Environ(), "STREAMSQL_DEPTH_CHILD="+q)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := child(8192, deepShapes[0].build(30000)); err == nil {
		t.Fatalf("30,000 terms did not crash the unguarded parser:\n%.300s", out)
	}
	for _, s := range deepShapes {
		n := largestAccepted(t, s.build)
		out, err := child(8192/3, s.build(n))
		if err != nil || !strings.Contains(out, "parsed:") {
			t.Errorf("%s: %d accepted by Parse, but the C parser failed on a third of 8 MB: %v\n%.300s", s.name, n, err, out)
		}
	}
}
