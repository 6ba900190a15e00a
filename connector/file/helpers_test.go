package file

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// cols parses "name type, name type, ..." (types without commas).
func cols(t testing.TB, spec string) []types.Column {
	t.Helper()
	var out []types.Column
	var parts []string
	depth, start := 0, 0
	for i, c := range spec {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts, start = append(parts, spec[start:i]), i+1
			}
		}
	}
	for _, part := range append(parts, spec[start:]) {
		name, typ, _ := strings.Cut(strings.TrimSpace(part), " ")
		ty, err := types.ParseTypeString(typ)
		if err != nil {
			t.Fatalf("type %q: %v", typ, err)
		}
		out = append(out, types.Column{Name: name, Type: ty})
	}
	return out
}

// writeFile writes data to a new file named name in a temporary directory.
func writeFile(t testing.TB, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func appendFile(t testing.TB, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

func mustOpen(t testing.TB, c []types.Column, opts map[string]string, format string) *Source {
	t.Helper()
	s, err := Open(c, opts, format)
	if err != nil {
		t.Fatalf("Open(%v, %q): %v", opts, format, err)
	}
	return s
}

// rowText renders row i of rec as "v1|v2|..." with NULL for nulls.
func rowText(rec arrow.RecordBatch, c []types.Column, i int) string {
	parts := make([]string, len(c))
	for j := range c {
		v := types.ValueAt(rec.Column(j), i, c[j].Type)
		if v == nil {
			parts[j] = "NULL"
		} else {
			parts[j] = types.FormatText(v, c[j].Type, nil)
		}
	}
	return strings.Join(parts, "|")
}

// readAll runs a reader of s to its end and returns its rows, batch sizes
// and the errors it reported.
func readAll(t testing.TB, s *Source) (rows []string, sizes []int, errs []error) {
	t.Helper()
	r := s.NewReader(ReaderOptions{Errors: func(err error) { errs = append(errs, err) }})
	err := r.Run(context.Background(), func(rec arrow.RecordBatch) error {
		if !rec.Schema().Equal(s.dec.Arrow()) {
			t.Fatalf("batch schema %v", rec.Schema())
		}
		sizes = append(sizes, int(rec.NumRows()))
		for i := range int(rec.NumRows()) {
			rows = append(rows, rowText(rec, s.cols, i))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if r.Skipped() != int64(len(errs)) {
		t.Fatalf("Skipped() = %d, %d errors reported", r.Skipped(), len(errs))
	}
	return rows, sizes, errs
}

func wantCode(t *testing.T, err error, code pgerr.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", code)
	}
	if got := pgerr.CodeOf(err); got != code {
		t.Fatalf("error %q has code %s, want %s", err, got, code)
	}
}
