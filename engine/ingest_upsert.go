package engine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/types"
)

// upsertBatch splits a batch of a FORMAT UPSERT reader (the table's
// columns, then kafka.TombstoneColumn) into the rows to upsert and the
// keys to delete (tombstones), in the table's schema: of several messages
// with one key the last wins. Rows with a NULL in a key column cannot be
// placed and are returned as bad, by row index. Either batch is nil when
// it has no rows.
func upsertBatch(b arrow.RecordBatch, rel *catalog.Relation) (ups, dels arrow.RecordBatch, bad []int, err error) {
	n := int(b.NumRows())
	ncols := len(rel.Columns)
	tomb, ok := b.Column(ncols).(*array.Boolean)
	if !ok || int(b.NumCols()) != ncols+1 {
		return nil, nil, nil, fmt.Errorf("upsert batch of %d columns for a table of %d", b.NumCols(), ncols)
	}
	last := make(map[string]int, n)
	var sb strings.Builder
	vals := make([]types.Value, len(rel.PrimaryKey))
rows:
	for i := 0; i < n; i++ {
		for k, c := range rel.PrimaryKey {
			if vals[k] = types.ValueAt(b.Column(c), i, rel.Columns[c].Type); vals[k] == nil {
				bad = append(bad, i)
				continue rows
			}
		}
		sb.Reset()
		fmt.Fprintf(&sb, "%#v", vals)
		last[sb.String()] = i
	}
	var upRows, delRows []int
	for _, i := range last {
		if tomb.Value(i) {
			delRows = append(delRows, i)
		} else {
			upRows = append(upRows, i)
		}
	}
	schema := types.ArrowSchema(rel.ColumnTypes())
	if ups, err = pickRows(b, schema, upRows); err == nil {
		dels, err = pickRows(b, schema, delRows)
	}
	return ups, dels, bad, err
}

// pickRows returns the rows of b's first schema.NumFields() columns at the
// given indexes (sorted here), or nil for none.
func pickRows(b arrow.RecordBatch, schema *arrow.Schema, rows []int) (arrow.RecordBatch, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	sort.Ints(rows)
	type run struct{ from, to int }
	var runs []run
	for _, i := range rows {
		if len(runs) > 0 && runs[len(runs)-1].to == i {
			runs[len(runs)-1].to++
			continue
		}
		runs = append(runs, run{i, i + 1})
	}
	cols := make([]arrow.Array, schema.NumFields())
	for c := range cols {
		parts := make([]arrow.Array, len(runs))
		for k, r := range runs {
			parts[k] = array.NewSlice(b.Column(c), int64(r.from), int64(r.to))
		}
		if len(parts) == 1 {
			cols[c] = parts[0]
			continue
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, err
		}
		cols[c] = a
	}
	return array.NewRecordBatch(schema, cols, int64(len(rows))), nil
}
