package decode

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/types"
)

func text(rec arrow.RecordBatch, cols []types.Column) string {
	var rows []string
	for i := range int(rec.NumRows()) {
		var parts []string
		for j, c := range cols {
			v := types.ValueAt(rec.Column(j), i, c.Type)
			if v == nil {
				parts = append(parts, "NULL")
			} else {
				parts = append(parts, types.FormatText(v, c.Type, nil))
			}
		}
		rows = append(rows, strings.Join(parts, "|"))
	}
	return strings.Join(rows, "\n")
}

// TestJSONKeyOrder: objects whose keys come in changing orders, with
// unknown and case-folded keys, decode the same (the key order cache
// never picks a wrong column); timestamps take the fast path and its
// errors are PostgreSQL's; columns past the decoded ones are the caller's.
func TestJSONKeyOrder(t *testing.T) {
	cols := []types.Column{{Name: "a", Type: types.TInt8}, {Name: "ts", Type: types.TTimestampTZ},
		{Name: "b", Type: types.TText}, {Name: "m", Type: types.TInt4}}
	s := NewSchema(cols, 3)
	r, b := s.NewRow(), s.NewBatch()
	for i, line := range []string{
		`{"a": 1, "ts": "2024-01-01T00:00:01Z", "b": "x"}`,
		`{"b": "y", "a": 2, "ts": "2024-01-01 01:00:00+01"}`,
		`{"zz": 0, "A": 3, "TS": null}`,
		`{"a": 4, "ts": "2024-01-01 00:00:04.5", "b": "w"}`,
	} {
		if col, err := r.JSON([]byte(line)); err != nil {
			t.Fatalf("%s: column %d: %v", line, col, err)
		}
		r.SetInt(3, int64(i))
		if err := b.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	want := "1|2024-01-01 00:00:01+00|x|0\n2|2024-01-01 00:00:00+00|y|1\n3|NULL|NULL|2\n4|2024-01-01 00:00:04.5+00|w|3"
	if got := text(b.Take(), cols); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if col, err := r.JSON([]byte(`{"ts": "yesterday-ish"}`)); col != 1 || err == nil || !strings.Contains(err.Error(), `"yesterday-ish"`) {
		t.Fatalf("bad timestamp: column %d, %v", col, err)
	}
}
