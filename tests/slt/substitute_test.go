package slt

import (
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
