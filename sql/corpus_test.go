package sql

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sharedDir finds the team's shared folder (spec and corpora), or skips.
func sharedDir(t *testing.T) string {
	t.Helper()
	for _, d := range []string{"../../shared", "../../../shared"} {
		if st, err := os.Stat(filepath.Join(d, "spec")); err == nil && st.IsDir() {
			return d
		}
	}
	t.Skip("shared spec and corpora not found")
	return ""
}

// TestNexmarkQueriesParse: every published Nexmark query (RisingWave form)
// parses, and its CREATE SINK / CREATE SOURCE is recognized.
func TestNexmarkQueriesParse(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(sharedDir(t), "spec/nexmark/risingwave/*.sql"))
	if len(files) == 0 {
		t.Fatal("no nexmark queries found")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		stmts, err := Parse(substitute(string(b)))
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		for _, s := range stmts {
			head := strings.ToUpper(strings.Join(strings.Fields(stripComments(s.Text())), " "))
			switch {
			case strings.HasPrefix(head, "CREATE SINK"):
				if s.Ext == nil || s.Ext.Kind != KindCreateSink || s.AST != nil || s.Ext.Sink.Stmt.GetSelectStmt() == nil || s.Ext.Sink.Options == nil {
					t.Errorf("%s: sink not lifted: %+v", filepath.Base(f), s.Ext)
				}
			case strings.HasPrefix(head, "CREATE SOURCE"):
				if s.Ext == nil || s.Ext.Kind != KindCreateSource || s.AST != nil || s.Ext.Source.Stmt == nil || len(s.Ext.Structs) != 3 {
					t.Errorf("%s: source not lifted: %+v", filepath.Base(f), s.Ext)
				}
			}
		}
	}
}

// substitute fills the corpora's ${NAME} template variables (the harness
// substitutes them) with an identifier, which parses wherever they are used.
func substitute(s string) string {
	return template.ReplaceAllString(s, "x1")
}

var template = regexp.MustCompile(`\$\{[A-Za-z0-9_]+\}`)

func stripComments(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// TestRisingWaveStreamingStatementsParse: the statements of the streaming
// sqllogictest files (RisingWave's, and Flink's window TVF examples) that
// are expected to succeed parse without error.
func TestRisingWaveStreamingStatementsParse(t *testing.T) {
	dir := sharedDir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "corpora/risingwave/*.slt*"))
	files = append(files, filepath.Join(dir, "corpora/flink/window_tvf_bid_examples.slt"))
	if len(files) == 0 {
		t.Fatal("no corpus files found")
	}
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range sltStatements(string(b)) {
			if reason := rwOnly(rec); reason != "" {
				t.Logf("skipped (%s): %s", reason, rec)
				continue
			}
			n++
			if _, err := Parse(substitute(rec)); err != nil {
				t.Errorf("%s: %v\n%s", filepath.Base(f), err, rec)
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d statements extracted", n)
	}
}

// rwOnly names the RisingWave-only features outside streamsql's dialect
// (spec sections 2-5) that a corpus statement uses, or "".
func rwOnly(sql string) string {
	low := strings.ToLower(sql)
	switch {
	case strings.Contains(low, " as changelog from "):
		return "WITH ... AS CHANGELOG FROM"
	}
	return ""
}

// sltStatements extracts the SQL of "statement ok" and "query" records.
func sltStatements(text string) []string {
	var out []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l != "statement ok" && !strings.HasPrefix(l, "query ") {
			continue
		}
		var sql []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "" && strings.TrimSpace(lines[i]) != "----"; i++ {
			sql = append(sql, lines[i])
		}
		out = append(out, strings.Join(sql, "\n"))
	}
	return out
}
