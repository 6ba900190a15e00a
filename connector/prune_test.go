package connector

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// ReaderOptions.Columns: a nexmark or datagen reader (PrunesColumns)
// emits only those columns, from the start and at a position; another
// source refuses them rather than ignore them.
func TestReaderColumns(t *testing.T) {
	for _, name := range []string{"nexmark", "NexMark", "datagen"} {
		if !PrunesColumns(name) {
			t.Errorf("%s does not prune", name)
		}
	}
	for _, name := range []string{"kafka", "file", "postgres-cdc"} {
		if PrunesColumns(name) {
			t.Errorf("%s prunes", name)
		}
	}
	nx, err := Open("nexmark", nil, map[string]string{"table": "bid", "events": "50000"}, "")
	if err != nil {
		t.Fatal(err)
	}
	dg, err := Open("datagen", []types.Column{{Name: "a", Type: types.TInt8}, {Name: "b", Type: types.TText}, {Name: "c", Type: types.TInt4}},
		map[string]string{"rows": "20000"}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []Source{nx, dg} {
		cols := []int{0, 2}
		want := types.ArrowSchema([]types.Column{src.Columns()[0], src.Columns()[2]})
		for _, pos := range [][]byte{nil, positionAfterFirstBatch(t, src)} {
			r, err := NewReaderAt(src, pos, ReaderOptions{Columns: cols, Split: 1, Splits: 2})
			if err != nil {
				t.Fatal(err)
			}
			rows := 0
			if err := r.Run(context.Background(), func(rec arrow.RecordBatch) error {
				if !rec.Schema().Equal(want) {
					t.Fatalf("%T: batch schema %v, want %v", src, rec.Schema(), want)
				}
				rows += int(rec.NumRows())
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if rows == 0 {
				t.Fatalf("%T at %x: no rows", src, pos)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "in.json")
	if err := os.WriteFile(path, []byte("{\"a\": 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open("file", []types.Column{{Name: "a", Type: types.TInt4}}, map[string]string{"path": path}, "JSON")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewReader(f, ReaderOptions{Columns: []int{0}}); pgerr.CodeOf(err) != pgerr.InternalError {
		t.Fatalf("a file reader of some columns: %v, want an internal error", err)
	}
	if _, err := NewReaderAt(nx, nil, ReaderOptions{Columns: []int{7}}); pgerr.CodeOf(err) != pgerr.InvalidParameterValue {
		t.Fatalf("a nexmark reader of column 7 of 7: %v, want 22023", err)
	}
}

// positionAfterFirstBatch is the position of reader 1 of 2 of src after
// its first batch.
func positionAfterFirstBatch(t *testing.T, src Source) []byte {
	t.Helper()
	r, err := NewReaderAt(src, nil, ReaderOptions{Split: 1, Splits: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pos []byte
	_ = r.Run(ctx, func(arrow.RecordBatch) error {
		pos = r.(Positioner).Position()
		cancel()
		return ctx.Err()
	})
	return pos
}
