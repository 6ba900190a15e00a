package pgcdc

import (
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/types"
)

// batchBuilder accumulates changes as rows of the reader's schema (the
// table's columns, DeleteColumn, UnchangedColumn). Owned by one reader.
type batchBuilder struct {
	cols   []types.Column
	schema *arrow.Schema
	b      []array.Builder
	n      int
}

func newBatchBuilder(out []types.Column) *batchBuilder {
	bb := &batchBuilder{cols: out, schema: types.ArrowSchema(out), b: make([]array.Builder, len(out))}
	for i, c := range out {
		bb.b[i] = types.NewBuilder(memory.DefaultAllocator, c.Type)
	}
	return bb
}

// add appends one change: vals are the table's columns (nil: NULL), del
// marks a key to delete, unchanged lists TOAST-unchanged columns.
func (bb *batchBuilder) add(vals []types.Value, del bool, unchanged []int, fromOld bool) error {
	nt := len(bb.cols) - 2
	for i := 0; i < nt; i++ {
		if err := types.AppendValue(bb.b[i], vals[i], bb.cols[i].Type); err != nil {
			// A value that parsed cannot fail to append; keep the
			// builders aligned all the same.
			for j := i; j < nt; j++ {
				bb.b[j].AppendNull()
			}
			bb.b[nt].(*array.BooleanBuilder).Append(del)
			bb.b[nt+1].(*array.StringBuilder).Append("")
			bb.n++
			return err
		}
	}
	bb.b[nt].(*array.BooleanBuilder).Append(del)
	sb := bb.b[nt+1].(*array.StringBuilder)
	if len(unchanged) == 0 {
		sb.Append("")
	} else {
		s := make([]string, len(unchanged))
		for i, c := range unchanged {
			s[i] = strconv.Itoa(c)
		}
		prefix := ""
		if fromOld {
			prefix = "old:"
		}
		sb.Append(prefix + strings.Join(s, ","))
	}
	bb.n++
	return nil
}

// build returns the rows added since the last build (nil when none).
func (bb *batchBuilder) build() arrow.RecordBatch {
	if bb.n == 0 {
		return nil
	}
	arrs := make([]arrow.Array, len(bb.b))
	for i, b := range bb.b {
		arrs[i] = b.NewArray()
	}
	rec := array.NewRecordBatch(bb.schema, arrs, int64(bb.n))
	bb.n = 0
	return rec
}

// reset drops the rows added since the last build.
func (bb *batchBuilder) reset() {
	for _, b := range bb.b {
		b.NewArray().Release()
	}
	bb.n = 0
}

// ParseUnchanged parses an UnchangedColumn value: the columns, and
// whether they keep the values of the old key (the row before).
func ParseUnchanged(s string) (cols []int, fromOld bool, err error) {
	if s == "" {
		return nil, false, nil
	}
	s, fromOld = strings.CutPrefix(s, "old:")
	parts := strings.Split(s, ",")
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, false, err
		}
		out[i] = n
	}
	return out, fromOld, nil
}
