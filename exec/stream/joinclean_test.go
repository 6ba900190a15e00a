package stream

import (
	"testing"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// A window join on ts frees a window's rows once both sides' watermarks
// pass it: a later row of that window finds nothing to join, while rows of
// open windows still join.
func TestJoinCleanFreesClosedGroups(t *testing.T) {
	env := newEnv(t)
	ts := &expr.ColRef{Idx: 0, T: types.TTimestamp, Name: "ts"}
	l, r := make(chan Message, 16), make(chan Message, 16)
	j := &HashJoin{Left: &tvSource{l}, Right: &tvSource{r}, Kind: exec.InnerJoin,
		LeftKeys: []expr.Expr{ts}, RightKeys: []expr.Expr{ts},
		Cols:  append(append([]types.Column(nil), tvCols...), tvCols...),
		Clean: &JoinClean{Key: 0}}
	l <- ChunkMsg(tvChunk([]tvRow{{10, 1}, {20, 2}}, nil))
	r <- ChunkMsg(tvChunk([]tvRow{{10, 3}}, nil))
	l <- WatermarkMsg(Watermark{Col: 0, Value: 15})
	r <- WatermarkMsg(Watermark{Col: 0, Value: 15}) // frees ts 10 on both sides
	l <- BarrierMsg(Barrier{Epoch: 1})
	r <- BarrierMsg(Barrier{Epoch: 1})
	r <- ChunkMsg(tvChunk([]tvRow{{10, 4}, {20, 5}}, nil)) // 10: late, joins nothing; 20 joins
	l <- BarrierMsg(Barrier{Epoch: 2})
	r <- BarrierMsg(Barrier{Epoch: 2})
	close(l)
	close(r)
	got := drain(t, env, j.Start(env, []<-chan Message{l, r}))
	var pairs [][2]int64
	for _, m := range got {
		if m.Kind != KindChunk {
			continue
		}
		ls := tvRows(m.Chunk.Rec)
		for i := range ls {
			v := m.Chunk.Rec.Column(3)
			pairs = append(pairs, [2]int64{ls[i].v, types.ValueAt(v, i, types.TInt8).(int64)})
		}
	}
	want := [][2]int64{{1, 3}, {2, 5}}
	if len(pairs) != len(want) || pairs[0] != want[0] || pairs[1] != want[1] {
		t.Fatalf("pairs %v, want %v", pairs, want)
	}
}
