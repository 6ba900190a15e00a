package connector

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// Every built-in connector says whether it ends by itself: FLUSH and
// CREATE MATERIALIZED VIEW wait for the end of the finite ones.
func TestBuiltinFinite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.csv")
	if err := os.WriteFile(path, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cols := []types.Column{{Name: "a", Type: types.TInt8}}
	cases := []struct {
		conn   string
		opts   map[string]string
		finite bool
	}{
		{"file", map[string]string{"path": path}, true},
		{"file", map[string]string{"path": path, "follow": "true"}, false},
		{"datagen", map[string]string{"rows": "10"}, true},
		{"datagen", map[string]string{}, false},
		{"datagen", map[string]string{"rows": "10", "rows_per_second": "5"}, false},
		{"nexmark", map[string]string{"table": "bid", "events": "100"}, true},
		{"nexmark", map[string]string{"table": "bid"}, false},
		{"nexmark", map[string]string{"table": "bid", "events": "100", "events_per_second": "10"}, false},
	}
	for _, c := range cases {
		var declared []types.Column
		if c.conn != "nexmark" {
			declared = cols
		}
		src, err := Open(c.conn, declared, c.opts, "")
		if err != nil {
			t.Fatalf("%s %v: %v", c.conn, c.opts, err)
		}
		if got := IsFinite(src); got != c.finite {
			t.Errorf("%s %v: IsFinite = %v, want %v", c.conn, c.opts, got, c.finite)
		}
	}
}
