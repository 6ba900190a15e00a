package stream

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// TestReplicate: inserts, deletes and update pairs of rows with counts
// become that many inserts and deletes, in chunks of at most
// replicateRows; counts of 0 and NULL send nothing.
func TestReplicate(t *testing.T) {
	cols := []types.Column{{Name: "k", Type: types.TText}, {Name: "copies", Type: types.TInt8}}
	kb := array.NewStringBuilder(memory.DefaultAllocator)
	cb := array.NewInt64Builder(memory.DefaultAllocator)
	kb.AppendValues([]string{"a", "b", "c", "d", "d", "e"}, nil)
	cb.AppendValues([]int64{2, 0, 1, 3, 5, replicateRows + 1}, []bool{true, true, true, true, true, true})
	kb.Append("f")
	cb.AppendNull()
	rec := array.NewRecordBatch(types.ArrowSchema(cols), []arrow.Array{kb.NewArray(), cb.NewArray()}, 7)
	in := &Chunk{Rec: rec, Ops: []Op{Insert, Insert, Delete, UpdateBefore, UpdateAfter, Insert, Insert}}
	r := &Replicate{Input: &Scan{Cols: cols}}
	if got := r.Columns(); len(got) != 1 || got[0].Name != "k" {
		t.Fatalf("columns %v", got)
	}
	env := newEnv(t)
	src := make(chan Message, 1)
	src <- ChunkMsg(in)
	close(src)
	net := map[string]int{}
	chunks := 0
	for m := range r.Start(env, []<-chan Message{src}) {
		if m.Kind != KindChunk {
			continue
		}
		chunks++
		c := m.Chunk
		if c.Len() > replicateRows {
			t.Fatalf("a chunk of %d rows", c.Len())
		}
		ks := c.Rec.Column(0).(*array.String)
		for i := range c.Len() {
			switch c.Op(i) {
			case Insert:
				net[ks.Value(i)]++
			case Delete:
				net[ks.Value(i)]--
			default:
				t.Fatalf("op %v", c.Op(i))
			}
		}
	}
	want := map[string]int{"a": 2, "c": -1, "d": 2, "e": replicateRows + 1}
	for k, v := range want {
		if net[k] != v {
			t.Errorf("%s: %d, want %d", k, net[k], v)
		}
	}
	if len(net) != len(want) || chunks < 2 {
		t.Errorf("rows %v in %d chunks", net, chunks)
	}
}
