package slt

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestSubstitute(t *testing.T) {
	r := NewRunner(Options{})
	r.vars = map[string]string{"v": "42"}
	r.dbName = "db"
	defer r.cleanup()
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ in, script, want string }{
		{"SELECT ${v}", "x.slt", "SELECT 42"},
		{"SELECT '$__DATABASE__'", "x.slt", "SELECT 'db'"},
		{"path = '$__SCRIPT_DIR__/data.csv'", "/a/b/c.slt", "path = '/a/b/data.csv'"},
		{"path = '$__SCRIPT_DIR__/data.csv'", "rel/c.slt", "path = '" + filepath.Join(cwd, "rel") + "/data.csv'"},
		{"SELECT '${unknown_var_xyz}'", "x.slt", "SELECT '${unknown_var_xyz}'"},
	}
	for _, c := range cases {
		if got := r.substitute(c.in, c.script); got != c.want {
			t.Errorf("substitute(%q, %q) = %q, want %q", c.in, c.script, got, c.want)
		}
	}
	dir := r.substitute("$__TEST_DIR__", "x.slt")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("$__TEST_DIR__ = %q is not a directory (%v)", dir, err)
	}
}

// A '*' column is not compared: any value (NULL too) renders as "*", and a
// rewrite keeps the letter.
func TestAnyColumn(t *testing.T) {
	rows := Rows{
		{{Text: "insert"}, {Text: "2024-01-01 10:00:00.1+00"}, {Text: "1"}},
		{{Text: "delete"}, {Null: true}, {Text: ""}},
	}
	got := render(RS, "T*I", rows)
	want := [][]string{{"insert", "*", "1"}, {"delete", "*", "(empty)"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("render = %q, want %q", got, want)
	}
	if msg := compare(RS, NoSort, []string{"insert * 1", "delete * (empty)"}, got); msg != "" {
		t.Errorf("compare: %s", msg)
	}
	if msg := compare(RS, NoSort, []string{"insert * 2", "delete * (empty)"}, got); msg == "" {
		t.Error("compare ignored a compared column")
	}
	if h := queryHeader("query T*I rowsort", []uint32{25, 1184, 23}); h != "query T*I rowsort" {
		t.Errorf("queryHeader = %q", h)
	}
	if h := queryHeader("query TTT", []uint32{25, 1184, 23}); h != "query TTI" {
		t.Errorf("queryHeader = %q", h)
	}
}
