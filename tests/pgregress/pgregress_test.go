package pgregress

import (
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	src := "-- a comment\nSELECT 1;\nSELECT 'a;b',\n  $$x;y$$ /* ; */;\n\\pset null '(null)'\nCOPY t FROM stdin;\n1\n2\n\\.\nSELECT 2; -- trailing\nSELECT (1\n;\n)\n;\n\\set filename :abs_srcdir '/data/x'\nCOPY onek FROM :'filename';\n"
	units := Split(src)
	var got []string
	for _, u := range units {
		got = append(got, u.SQL())
	}
	want := []string{"SELECT 1;", "SELECT 'a;b',\n  $$x;y$$ /* ; */;", `\pset null '(null)'`, "COPY t FROM stdin;\n1\n2\n\\.",
		"SELECT 2; -- trailing", "SELECT (1\n;\n)\n;", `\set filename :abs_srcdir '/data/x'`, "COPY onek FROM :'filename';"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("units:\n%q\nwant\n%q", got, want)
	}
	if units[1].Line != 3 || units[3].Line != 6 {
		t.Errorf("lines %d %d, want 3 6", units[1].Line, units[3].Line)
	}
	script := Instrument(units)
	if !strings.Contains(script, "\\copy onek FROM :'filename'\n") || strings.Count(script, "\\echo @@pgregress") != len(units) {
		t.Errorf("instrumented:\n%s", script)
	}
}

func TestChunks(t *testing.T) {
	out := "SELECT 1;\n 1\n\\echo @@pgregress 0@@\n@@pgregress 0@@\nSELECT x;\nERROR:  boom\n\\echo @@pgregress 1@@\n@@pgregress 1@@\n"
	c := Chunks(out, 3)
	if c[0] != "SELECT 1;\n 1" || c[1] != "SELECT x;\nERROR:  boom" || c[2] != "" {
		t.Fatalf("chunks %q", c)
	}
	if !Excluded(Unit{Text: "-- x\nEXPLAIN SELECT 1;"}) || Excluded(Unit{Text: "SELECT 1;"}) {
		t.Error("Excluded")
	}
}
