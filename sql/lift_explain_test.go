package sql

import (
	"errors"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

func TestShowCreateAndJobs(t *testing.T) {
	for _, tc := range []struct{ q, show, name string }{
		{"SHOW JOBS", "JOBS", ""},
		{"show create table t", "CREATE TABLE", "t"},
		{"SHOW CREATE SOURCE s.\"Src\"", "CREATE SOURCE", "s.Src"},
		{"SHOW CREATE SINK k", "CREATE SINK", "k"},
		{"show create materialized view mv", "CREATE MATERIALIZED VIEW", "mv"},
	} {
		st := parseOne(t, tc.q)
		if st.AST != nil || st.Ext == nil || st.Ext.Kind != KindShow || st.Ext.Show != tc.show || st.Ext.ShowName != tc.name {
			t.Errorf("%q: ext %+v", tc.q, st.Ext)
		}
	}
	for _, q := range []string{"SHOW CREATE MATERIALIZED v", "SHOW CREATE TABLE", "SHOW CREATE TABLE a b"} {
		if _, err := Parse(q); err == nil {
			t.Errorf("%q parsed", q)
		}
	}
}

func TestExplainStream(t *testing.T) {
	for _, tc := range []struct {
		q        string
		analyze  bool
		duration string
		sink     bool
		name     string
	}{
		{"EXPLAIN MATERIALIZED VIEW v", false, "", false, "v"},
		{"explain analyze materialized view s.v", true, "", false, "s.v"},
		{"EXPLAIN ANALYZE SINK k", true, "", true, "k"},
		{"EXPLAIN (ANALYZE, DURATION '10s') MATERIALIZED VIEW v", true, "'10s'", false, "v"},
		{"EXPLAIN ANALYZE (DURATION INTERVAL '2 seconds') SINK k", true, "INTERVAL '2 seconds'", true, "k"},
		{"EXPLAIN (ANALYZE false) MATERIALIZED VIEW v", false, "", false, "v"},
	} {
		st := parseOne(t, tc.q)
		x := st.Ext
		if st.AST != nil || x == nil || x.Kind != KindExplainStream || x.ExplainStream.Analyze != tc.analyze ||
			x.ExplainStream.Duration.Text != tc.duration || x.ExplainStream.Sink != tc.sink || x.ExplainStream.Name != tc.name {
			t.Errorf("%q: ext %+v %+v", tc.q, x, x.ExplainStream)
		}
	}
	// PostgreSQL's EXPLAIN is left alone.
	for _, q := range []string{"EXPLAIN SELECT 1", "EXPLAIN (ANALYZE) SELECT 1", "EXPLAIN CREATE MATERIALIZED VIEW v AS SELECT 1"} {
		if st := parseOne(t, q); st.AST == nil || (st.Ext != nil && st.Ext.Kind != "") {
			t.Errorf("%q lifted: %+v", q, st.Ext)
		}
	}
	for q, code := range map[string]pgerr.Code{
		"EXPLAIN (DURATION '1s') MATERIALIZED VIEW v":         pgerr.InvalidParameterValue,
		"EXPLAIN (ANALYZE, VERBOSE) MATERIALIZED VIEW v":      pgerr.InvalidParameterValue,
		"EXPLAIN ANALYZE MATERIALIZED VIEW v w":               pgerr.SyntaxError,
		"EXPLAIN (ANALYZE DURATION '1s') MATERIALIZED VIEW v": pgerr.SyntaxError,
	} {
		_, err := Parse(q)
		var pe *pgerr.Error
		if !errors.As(err, &pe) || pe.Code != code {
			t.Errorf("%q: %v, want %s", q, err, code)
		}
	}
}
