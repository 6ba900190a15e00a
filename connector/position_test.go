package connector

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// split is one reader's run: the rows of each batch with the position
// taken inside emit and the errors reported by then, and the position
// after Run.
type split struct {
	rows [][]string
	pos  [][]byte
	errs []int
	end  []byte
	nerr int
}

func runAt(t *testing.T, src Source, pos []byte) split {
	t.Helper()
	var s split
	r, err := NewReaderAt(src, pos, ReaderOptions{Errors: func(error) { s.nerr++ }})
	if err != nil {
		t.Fatalf("NewReaderAt(%x): %v", pos, err)
	}
	p, ok := r.(Positioner)
	if !ok {
		t.Fatalf("reader %T of a Resumable source is not a Positioner", r)
	}
	err = r.Run(context.Background(), func(rec arrow.RecordBatch) error {
		var rows []string
		for i := range int(rec.NumRows()) {
			var parts []string
			for j, c := range src.Columns() {
				parts = append(parts, types.FormatText(types.ValueAt(rec.Column(j), i, c.Type), c.Type, nil))
			}
			rows = append(rows, strings.Join(parts, "|"))
		}
		s.rows = append(s.rows, rows)
		s.pos = append(s.pos, p.Position())
		s.errs = append(s.errs, s.nerr)
		return nil
	})
	if err != nil {
		t.Fatalf("Run from %x: %v", pos, err)
	}
	s.end = p.Position()
	return s
}

// Every built-in connector resumes: for random split points among the
// positions a reader reported, a reader started there yields exactly the
// rows after it, reports the skipped records after it, and ends at the
// same position.
func TestResumeBuiltins(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))

	var csv strings.Builder
	csv.WriteString("id,v\n")
	for i := range 15000 {
		if rng.IntN(50) == 0 {
			fmt.Fprintf(&csv, "%d,not a number\n", i)
		} else {
			fmt.Fprintf(&csv, "%d,%d\n", i, rng.IntN(1000))
		}
	}
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	idv := []types.Column{{Name: "id", Type: types.TInt8}, {Name: "v", Type: types.TInt4}}
	for _, tc := range []struct {
		conn string
		cols []types.Column
		opts map[string]string
	}{
		{"datagen", idv, map[string]string{"rows": "30000", "seed": "4", "fields.v.null_rate": "0.1"}},
		{"nexmark", nil, map[string]string{"table": "bid", "events": "60000", "seed": "2"}},
		{"nexmark", nil, map[string]string{"table": "auction", "events": "300000"}},
		{"nexmark", nil, map[string]string{"table": "person", "events": "500000"}},
		{"file", idv, map[string]string{"path": path, "header": "true"}},
	} {
		src, err := Open(tc.conn, tc.cols, tc.opts, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := src.(Resumable); !ok {
			t.Fatalf("%s is not Resumable", tc.conn)
		}
		full := runAt(t, src, nil)
		if len(full.rows) < 3 {
			t.Fatalf("%s %v: %d batches, too few to split", tc.conn, tc.opts, len(full.rows))
		}
		var all []string
		done := []int{0}
		for _, b := range full.rows {
			all = append(all, b...)
			done = append(done, len(all))
		}
		for range 3 {
			i := rng.IntN(len(full.pos))
			got := runAt(t, src, full.pos[i])
			var rest []string
			for _, b := range got.rows {
				rest = append(rest, b...)
			}
			if !reflect.DeepEqual(rest, all[done[i+1]:]) && len(rest)+len(all[done[i+1]:]) > 0 {
				t.Fatalf("%s %v after batch %d: %d rows, want the %d after it", tc.conn, tc.opts, i, len(rest), len(all)-done[i+1])
			}
			if full.errs[i]+got.nerr != full.nerr {
				t.Fatalf("%s after batch %d: %d + %d skipped records, want %d", tc.conn, i, full.errs[i], got.nerr, full.nerr)
			}
			if !reflect.DeepEqual(got.end, full.end) {
				t.Fatalf("%s after batch %d: ends at %x, want %x", tc.conn, i, got.end, full.end)
			}
		}
		if tc.conn == "file" && full.nerr == 0 {
			t.Fatal("no bad records in the file")
		}
	}
}

// A source that is not Resumable reads from the start only.
func TestNewReaderAtNotResumable(t *testing.T) {
	if r, err := NewReaderAt(fake{}, nil, ReaderOptions{}); err != nil || r == nil {
		t.Fatalf("from the start: %v", err)
	}
	_, err := NewReaderAt(fake{}, []byte{1}, ReaderOptions{})
	if pgerr.CodeOf(err) != pgerr.ObjectNotInPrerequisiteState {
		t.Fatalf("at a position: %v, want 55000", err)
	}
	// A built-in given another connector's position.
	dg, err := Open("datagen", []types.Column{{Name: "a", Type: types.TInt8}}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	nx, err := Open("nexmark", nil, map[string]string{"table": "bid"}, "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReaderAt(nx, nil, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewReaderAt(dg, r.(Positioner).Position(), ReaderOptions{}); pgerr.CodeOf(err) != pgerr.DataCorrupted {
		t.Fatalf("nexmark position for datagen: %v, want XX001", err)
	}
}
