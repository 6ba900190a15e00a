package connector

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/connector/nexmark"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// readAll runs a reader of src to its end; it returns the row count and
// the first rows as text.
func readAll(t *testing.T, src Source, o ReaderOptions, keep int) (int, []string) {
	t.Helper()
	r, err := NewReader(src, o)
	if err != nil {
		t.Fatal(err)
	}
	schema := types.ArrowSchema(src.Columns())
	n := 0
	var rows []string
	err = r.Run(context.Background(), func(rec arrow.RecordBatch) error {
		if !rec.Schema().Equal(schema) {
			t.Fatalf("batch schema %v, want %v", rec.Schema(), schema)
		}
		if rec.NumRows() == 0 {
			t.Fatal("empty batch")
		}
		for i := range int(rec.NumRows()) {
			if len(rows) < keep {
				var parts []string
				for j, c := range src.Columns() {
					parts = append(parts, types.FormatText(types.ValueAt(rec.Column(j), i, c.Type), c.Type, nil))
				}
				rows = append(rows, strings.Join(parts, "|"))
			}
		}
		n += int(rec.NumRows())
		return nil
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return n, rows
}

func TestOpenErrors(t *testing.T) {
	id := []types.Column{{Name: "id", Type: types.TInt8}}
	for _, tc := range []struct {
		name string
		cols []types.Column
		opts map[string]string
		code pgerr.Code
		msg  string
	}{
		{"kafkaesque", id, nil, pgerr.InvalidParameterValue, "kafkaesque"},
		{"datagen", nil, nil, pgerr.InvalidTableDefinition, "columns"},
		{"datagen", id, map[string]string{"rows_per_second": "-1"}, pgerr.InvalidParameterValue, "rows_per_second"},
		{"datagen", id, map[string]string{"fields.nope.min": "1"}, pgerr.InvalidParameterValue, "fields.nope.min"},
		{"nexmark", nil, map[string]string{"events": "10"}, pgerr.InvalidParameterValue, `"table"`},
		{"nexmark", nil, map[string]string{"table": "bids"}, pgerr.InvalidParameterValue, "bids"},
		{"nexmark", nil, map[string]string{"table": "bid", "events": "many"}, pgerr.InvalidParameterValue, `"events"`},
		{"nexmark", id, map[string]string{"table": "bid"}, pgerr.InvalidTableDefinition, "7 columns, 1 declared"},
		{"file", id, map[string]string{"path": filepath.Join(t.TempDir(), "no.csv")}, pgerr.UndefinedFile, "no.csv"},
		{"file", id, map[string]string{"path": "x.csv", "sep": ","}, pgerr.InvalidParameterValue, `"sep"`},
	} {
		_, err := Open(tc.name, tc.cols, tc.opts, "")
		if pgerr.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Open(%s, %v) = %v (%s), want %s mentioning %s", tc.name, tc.opts, err, pgerr.CodeOf(err), tc.code, tc.msg)
		}
	}
	// A generator's FORMAT: PLAIN (or none) is taken, another refused.
	for _, c := range []struct {
		name string
		cols []types.Column
		opts map[string]string
	}{{"datagen", id, nil}, {"nexmark", nil, map[string]string{"table": "bid"}}} {
		if _, err := Open(c.name, c.cols, c.opts, "JSON"); pgerr.CodeOf(err) != pgerr.InvalidParameterValue || !strings.Contains(err.Error(), "cannot read FORMAT JSON") {
			t.Errorf("%s FORMAT JSON: %v", c.name, err)
		}
		if _, err := Open(c.name, c.cols, c.opts, "PLAIN"); err != nil {
			t.Errorf("%s FORMAT PLAIN: %v", c.name, err)
		}
	}
	// Declared nexmark columns must be the table's.
	bad := append([]types.Column(nil), nexmark.PersonColumns...)
	bad[6] = types.Column{Name: "date_time", Type: types.TTimestampTZ}
	_, err := Open("nexmark", bad, map[string]string{"table": "person"}, "")
	if pgerr.CodeOf(err) != pgerr.InvalidTableDefinition || !strings.Contains(err.Error(), "column 7") {
		t.Errorf("mismatched column: %v", err)
	}
	if e := pgerr.As(err); e == nil || !strings.Contains(e.Detail, "date_time timestamp without time zone") {
		t.Errorf("detail: %+v", e)
	}
}

func TestDatagen(t *testing.T) {
	cols := []types.Column{{Name: "id", Type: types.TInt8}, {Name: "c", Type: types.TText}}
	src, err := Open("DataGen", cols, map[string]string{"rows": "10000", "fields.id.kind": "sequence", "fields.c.values": "x,y"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(src.Columns(), cols) {
		t.Fatalf("columns %v", src.Columns())
	}
	n, rows := readAll(t, src, ReaderOptions{}, 3)
	if n != 10000 || len(rows) != 3 || !strings.HasPrefix(rows[0], "1|") || !strings.HasPrefix(rows[2], "3|") {
		t.Fatalf("%d rows, first %q", n, rows)
	}
	// Each reader starts from the beginning.
	if n2, rows2 := readAll(t, src, ReaderOptions{}, 3); n2 != n || !reflect.DeepEqual(rows, rows2) {
		t.Fatalf("second reader: %d rows, first %q", n2, rows2)
	}
}

func TestNexmark(t *testing.T) {
	src, err := Open("nexmark", nil, map[string]string{"table": "bid", "events": "50000", "seed": "1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(src.Columns(), nexmark.BidColumns) {
		t.Fatalf("columns %v", src.Columns())
	}
	n, first := readAll(t, src, ReaderOptions{}, 1)
	if n != 46000 {
		t.Fatalf("%d bids, want 46000", n)
	}
	// The same source declared with its columns (text for varchar is fine).
	decl := append([]types.Column(nil), nexmark.BidColumns...)
	decl[3].Type = types.TText
	src, err = Open("nexmark", decl, map[string]string{"table": "bid", "events": "50000", "seed": "1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if n2, first2 := readAll(t, src, ReaderOptions{}, 1); n2 != n || !reflect.DeepEqual(first, first2) {
		t.Fatalf("declared columns: %d rows, first %q vs %q", n2, first2, first)
	}
	for table, want := range map[string]int{"auction": 3000, "person": 1000} {
		src, err := Open("nexmark", nil, map[string]string{"nexmark.table.type": table, "events": "50000"}, "")
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := readAll(t, src, ReaderOptions{}, 0); n != want {
			t.Errorf("%s: %d rows, want %d", table, n, want)
		}
	}
}

func TestFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.data")
	if err := os.WriteFile(path, []byte("{\"a\": 1}\n{\"a\": \"x\"}\n{\"a\": 3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cols := []types.Column{{Name: "a", Type: types.TInt4}}
	src, err := Open("file", cols, map[string]string{"path": path}, "JSON")
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	n, rows := readAll(t, src, ReaderOptions{Errors: func(err error) { errs = append(errs, err) }}, 10)
	if n != 2 || !reflect.DeepEqual(rows, []string{"1", "3"}) || len(errs) != 1 || !strings.Contains(errs[0].Error(), "line 2, column a") {
		t.Fatalf("rows %q errors %v", rows, errs)
	}
	// Without options (Source.NewReader) bad lines are only skipped.
	r, err := src.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background(), func(arrow.RecordBatch) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// fake is a registered connector of no rows.
type fake struct{}

func (fake) Columns() []types.Column    { return nil }
func (fake) NewReader() (Reader, error) { return fake{}, nil }
func (fake) Run(ctx context.Context, emit func(arrow.RecordBatch) error) error {
	return errors.New("fake")
}

func TestRegister(t *testing.T) {
	Register("Fake", func([]types.Column, map[string]string, string) (Source, error) { return fake{}, nil })
	src, err := Open("FAKE", nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := NewReader(src, ReaderOptions{Errors: func(error) {}}); err != nil || r.Run(context.Background(), nil).Error() != "fake" {
		t.Fatalf("fake reader: %v", err)
	}
	if names := Names(); !reflect.DeepEqual(names, []string{"datagen", "fake", "file", "kafka", "nexmark", "postgres-cdc"}) {
		t.Fatalf("names %v", names)
	}
}
