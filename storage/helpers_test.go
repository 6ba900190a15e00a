package storage

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// Test helpers: tables of (id bigint, s text) built straight from Arrow
// builders, and a dump of a snapshot as "rowid:id,s" lines.

var mem = memory.DefaultAllocator

func kvDef(oid uint32, pk bool) TableDef {
	def := TableDef{
		OID:       oid,
		TableName: "t",
		Columns:   []types.Column{{Name: "id", Type: types.TInt8}, {Name: "s", Type: types.TText}},
	}
	if pk {
		def.PrimaryKey = []int{0}
		def.PKName = "t_pkey"
	}
	return def
}

// kvRows builds a batch of (id, s); a nil s or id pointer means NULL.
type kv struct {
	id *int64
	s  *string
}

func row(id int64, s string) kv { return kv{&id, &s} }

func kvBatch(rows ...kv) arrow.RecordBatch {
	ib := array.NewInt64Builder(mem)
	sb := array.NewStringBuilder(mem)
	for _, r := range rows {
		if r.id == nil {
			ib.AppendNull()
		} else {
			ib.Append(*r.id)
		}
		if r.s == nil {
			sb.AppendNull()
		} else {
			sb.Append(*r.s)
		}
	}
	schema := types.ArrowSchema(kvDef(0, false).Columns)
	return array.NewRecordBatch(schema, []arrow.Array{ib.NewArray(), sb.NewArray()}, int64(len(rows)))
}

// seq builds rows id=from..to-1 with s = "v<id>".
func seq(from, to int64) arrow.RecordBatch {
	rows := make([]kv, 0, to-from)
	for i := from; i < to; i++ {
		rows = append(rows, row(i, fmt.Sprintf("v%d", i)))
	}
	return kvBatch(rows...)
}

// dump renders the live rows of a snapshot, one "rowid:col,col" per row.
func dump(s Snapshot) []string {
	var out []string
	for _, c := range s.Chunks {
		for i := 0; i < int(c.Rec.NumRows()); i++ {
			if c.Deleted != nil && c.Deleted[i/8]&(1<<(i%8)) != 0 {
				continue
			}
			cells := make([]string, c.Rec.NumCols())
			for j, col := range c.Rec.Columns() {
				cells[j] = col.ValueStr(i)
			}
			out = append(out, fmt.Sprintf("%d:%s", c.FirstRowID+int64(i), strings.Join(cells, ",")))
		}
	}
	return out
}

func checkRows(t *testing.T, tb *Table, want []string) {
	t.Helper()
	got := dump(tb.Snapshot())
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if tb.RowCount() != int64(len(want)) {
		t.Fatalf("RowCount = %d, want %d", tb.RowCount(), len(want))
	}
}

func mustOpen(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
