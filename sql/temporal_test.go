package sql

import (
	"strings"
	"testing"
)

func TestTemporalRelations(t *testing.T) {
	src := `CREATE MATERIALIZED VIEW v AS SELECT m.host, h.rack FROM m JOIN public."Hosts" FOR SYSTEM_TIME AS OF PROCTIME() AS h ON m.host = h.host LEFT JOIN racks FOR SYSTEM_TIME AS OF proctime() r ON r.id = h.rack`
	stmts, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	q := stmts[0].AST.GetCreateTableAsStmt().Query
	rels := TemporalRelations(q, stmts[0].Ext.TemporalJoins)
	if len(rels) != 2 {
		t.Fatalf("rels = %v", rels)
	}
	text, err := DeparseTemporal(q, rels)
	if err != nil {
		t.Fatal(err)
	}
	want := `public."Hosts" FOR SYSTEM_TIME AS OF PROCTIME() h`
	if !strings.Contains(text, want) || !strings.Contains(text, "racks FOR SYSTEM_TIME AS OF proctime() r") {
		t.Fatalf("deparsed %q", text)
	}
	// The stored text parses back to the same clauses.
	again, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if rels2 := TemporalRelations(again[0].AST, again[0].Ext.TemporalJoins); len(rels2) != 2 {
		t.Fatalf("again: %v", rels2)
	}
	// The tree is left as it was.
	if text2, _ := DeparseTemporal(q, rels); text2 != text {
		t.Fatalf("second deparse %q", text2)
	}
}

func TestTemporalRelationsRefused(t *testing.T) {
	for _, src := range []string{
		`SELECT * FROM m JOIN (SELECT * FROM hosts) FOR SYSTEM_TIME AS OF PROCTIME() h ON true`,
		`SELECT * FROM m JOIN generate_series(1, 2) FOR SYSTEM_TIME AS OF PROCTIME() h ON true`,
	} {
		if _, err := Parse(src); err == nil || !strings.Contains(err.Error(), "must follow") {
			t.Errorf("%s: err = %v", src, err)
		}
	}
}
