package datagen

import (
	"errors"
	"io"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// col is a column of type name (as types.ParseTypeString reads it).
func col(t *testing.T, name, typ string) types.Column {
	t.Helper()
	ty, err := types.ParseTypeString(typ)
	if err != nil {
		t.Fatalf("type %q: %v", typ, err)
	}
	return types.Column{Name: name, Type: ty}
}

func mustConfig(t *testing.T, cols []types.Column, opts map[string]string) Config {
	t.Helper()
	cfg, err := ConfigFromOptions(cols, opts)
	if err != nil {
		t.Fatalf("ConfigFromOptions(%v): %v", opts, err)
	}
	return cfg
}

// drain returns all rows of cfg (at most limit) read in batches of the
// given sizes (cycled), as values of the columns' Go forms.
func drain(t *testing.T, cfg Config, limit int, sizes ...int) [][]types.Value {
	t.Helper()
	g := New(cfg)
	var rows [][]types.Value
	for k := 0; len(rows) < limit; k++ {
		rec, err := g.Next(sizes[k%len(sizes)])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if got, want := int(rec.NumCols()), len(cfg.Columns); got != want {
			t.Fatalf("batch has %d columns, want %d", got, want)
		}
		for r := range int(rec.NumRows()) {
			row := make([]types.Value, rec.NumCols())
			for c := range row {
				row[c] = types.ValueAt(rec.Column(c), r, cfg.Columns[c].Type)
			}
			rows = append(rows, row)
		}
		rec.Release()
	}
	return rows
}

// column returns column c of rows.
func column(rows [][]types.Value, c int) []types.Value {
	out := make([]types.Value, len(rows))
	for i, r := range rows {
		out[i] = r[c]
	}
	return out
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
