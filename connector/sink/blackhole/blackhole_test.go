package blackhole

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

func TestBlackhole(t *testing.T) {
	cols := []types.Column{{Name: "n", Type: types.TInt8}}
	if _, err := Open(sink.Spec{Cols: cols, Options: map[string]string{"topic": "x"}}); pgerr.CodeOf(err) != pgerr.InvalidParameterValue {
		t.Fatalf("unknown option: %v", err)
	}
	if _, err := Open(sink.Spec{Cols: cols, Format: "JSON"}); pgerr.CodeOf(err) != pgerr.InvalidObjectDefinition {
		t.Fatalf("JSON over a retracting query: %v", err)
	}
	s, err := Open(sink.Spec{Cols: cols, AppendOnly: true, Format: "JSON"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, _ := s.NewWriter(ctx, 0)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues([]int64{1, 2, 3}, nil)
	rec := array.NewRecordBatch(types.ArrowSchema(cols), []arrow.Array{b.NewArray()}, 3)
	w.Write(ctx, rec, nil)
	if st := w.Status(); st.Rows != 0 {
		t.Fatalf("rows before the commit: %+v", st)
	}
	p, _ := w.PreCommit(ctx, 7)
	w.Commit(ctx, 7, p)
	if st := w.Status(); st.Rows != 3 || st.CommittedEpoch != 7 || w.(*Writer).bytes != int64(len(`{"n":1}{"n":2}{"n":3}`)) {
		t.Fatalf("status %+v, %d bytes encoded", st, w.(*Writer).bytes)
	}
}
