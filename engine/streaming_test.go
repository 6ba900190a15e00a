package engine

import (
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// TestCreateTableStreamingClauses: APPEND ONLY and WATERMARK FOR are kept in
// the catalog (across a restart) and the watermark's column must exist;
// other streaming clauses are still refused.
func TestCreateTableStreamingClauses(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	if _, _, err := run(t, s, `CREATE TABLE bids (auction bigint, ts timestamp,
		WATERMARK FOR ts AS ts - INTERVAL '5' SECOND WITH (idle_timeout = '10s')) APPEND ONLY`); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, s, "CREATE TABLE w (a int, WATERMARK FOR b AS b)")
	if pe, ok := err.(*pgerr.Error); !ok || pe.Code != pgerr.UndefinedColumn || pe.Position != 38 {
		t.Fatalf("watermark on a missing column: %#v", err)
	}
	if _, _, err := run(t, s, "CREATE TABLE s (a STRUCT<x int>)"); pgerr.CodeOf(err) != pgerr.FeatureNotSupported {
		t.Fatalf("STRUCT: %v", err)
	}
	e.Close()
	e, _ = open(t, dir)
	defer e.Close()
	rel, err := e.cat.Resolve("", "bids", []string{"public"})
	if err != nil {
		t.Fatal(err)
	}
	w := rel.Watermark
	if !rel.AppendOnly || w == nil || w.Column != "ts" || w.Expr != "ts - INTERVAL '5' SECOND" || w.Options["idle_timeout"] != "10s" {
		t.Fatalf("append only %v, watermark %+v", rel.AppendOnly, w)
	}
}
