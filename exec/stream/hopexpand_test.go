package stream

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// tsChunk is a chunk of one timestamp column (nil: NULL).
func tsChunk(ops []Op, vals ...any) *Chunk {
	b := types.NewBuilder(memory.DefaultAllocator, types.TTimestamp).(*array.TimestampBuilder)
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(arrow.Timestamp(v.(int)))
		}
	}
	tc := []types.Column{{Name: "ts", Type: types.TTimestamp}}
	return &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(tc), []arrow.Array{b.NewArray()}, int64(len(vals))), Ops: ops}
}

func TestWindowExpandOps(t *testing.T) {
	tt := types.TTimestamp
	outCols := []types.Column{{Name: "ts", Type: tt}, {Name: "window_start", Type: tt}, {Name: "window_end", Type: tt}}
	for _, c := range []struct {
		name    string
		w       exec.TimeWindows
		in      *Chunk
		rows    [][3]int64
		ops     []Op
		nilOps  bool
		outRows int
		marks   [2]int64 // the window_start and window_end watermarks for 3
	}{
		{name: "tumble keeps update pairs", w: exec.TimeWindows{Size: 10, Slide: 10},
			in:   tsChunk([]Op{Insert, UpdateBefore, UpdateAfter, Delete}, 3, 5, 15, -1),
			rows: [][3]int64{{3, 0, 10}, {5, 0, 10}, {15, 10, 20}, {-1, -10, 0}},
			ops:  []Op{Insert, UpdateBefore, UpdateAfter, Delete}, marks: [2]int64{0, 10}},
		{name: "a NULL time drops its row and splits its pair", w: exec.TimeWindows{Size: 10, Slide: 10},
			in:   tsChunk([]Op{UpdateBefore, UpdateAfter, UpdateBefore, UpdateAfter}, nil, 5, 7, nil),
			rows: [][3]int64{{5, 0, 10}, {7, 0, 10}},
			ops:  []Op{Insert, Delete}, marks: [2]int64{0, 10}},
		{name: "hop splits pairs", w: exec.TimeWindows{Size: 10, Slide: 5},
			in:   tsChunk([]Op{UpdateBefore, UpdateAfter}, 4, 6),
			rows: [][3]int64{{4, -5, 5}, {4, 0, 10}, {6, 0, 10}, {6, 5, 15}},
			ops:  []Op{Delete, Delete, Insert, Insert}, marks: [2]int64{-5, 5}},
		{name: "inserts only", w: exec.TimeWindows{Size: 4, Slide: 2, Cumulate: true},
			in:   tsChunk(nil, 1, 3),
			rows: [][3]int64{{1, 0, 2}, {1, 0, 4}, {3, 0, 4}}, nilOps: true, marks: [2]int64{0, 4}},
	} {
		env := newEnv(t)
		in := make(chan Message, 2)
		in <- ChunkMsg(c.in)
		in <- WatermarkMsg(Watermark{Col: 0, Value: 3})
		close(in)
		w := &WindowExpand{Input: &source{in}, TimeCol: 0, Windows: c.w, Cols: outCols}
		got := drain(t, env, w.Start(env, []<-chan Message{in}))
		if len(got) != 4 || got[0].Kind != KindChunk || got[1].Kind != KindWatermark || got[1].Watermark.Value != 3 {
			t.Fatalf("%s: messages %+v", c.name, got)
		}
		// The earliest window of a row at 3 or later: its start and end.
		if ws, we := got[2].Watermark, got[3].Watermark; ws != (Watermark{Col: 1, Value: c.marks[0]}) || we != (Watermark{Col: 2, Value: c.marks[1]}) {
			t.Fatalf("%s: window watermarks %+v %+v, want %v", c.name, ws, we, c.marks)
		}
		ch := got[0].Chunk
		var rows [][3]int64
		for i := 0; i < ch.Len(); i++ {
			var r [3]int64
			for k := range r {
				r[k] = int64(ch.Rec.Column(k).(*array.Timestamp).Value(i))
			}
			rows = append(rows, r)
		}
		if !slices.Equal(rows, c.rows) {
			t.Fatalf("%s: rows %v, want %v", c.name, rows, c.rows)
		}
		if c.nilOps != (ch.Ops == nil) || (!c.nilOps && !slices.Equal(ch.Ops, c.ops)) {
			t.Fatalf("%s: ops %v, want %v", c.name, ch.Ops, c.ops)
		}
	}
}
