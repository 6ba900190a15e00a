package catalog

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// A catalog is written as version 2. A version 1 data directory (interval
// values stored in another unit) opens when none of its relations has an
// interval column, and is refused, naming the column, when one has.
func TestCatalogVersion(t *testing.T) {
	for _, withInterval := range []bool{false, true} {
		dir := t.TempDir()
		st := newStore(t)
		c := openTest(t, dir, st)
		cols := []Column{{Name: "a", Type: types.TInt8}}
		if withInterval {
			cols = append(cols, Column{Name: "gap", Type: types.TInterval})
		}
		mustCreate(t, c, &Relation{Name: "t", Kind: KindTable, Columns: cols})
		path := filepath.Join(dir, catalogFile)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		v2 := regexp.MustCompile(`"version":\s*2`)
		if !v2.Match(data) {
			t.Fatalf("catalog not written as version 2: %.80s", data)
		}
		if err := os.WriteFile(path, v2.ReplaceAll(data, []byte(`"version": 1`)), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = open(dir, st)
		switch {
		case withInterval && (err == nil || !strings.Contains(err.Error(), "interval column gap")):
			t.Fatalf("version 1 with an interval column: %v", err)
		case !withInterval && err != nil:
			t.Fatalf("version 1 without intervals: %v", err)
		}
	}
}
