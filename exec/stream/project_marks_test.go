package stream

import (
	"fmt"
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// TestProjectMapsWatermarks: a watermark follows its column to every
// output that passes it on unchanged, and is dropped otherwise; Filter
// passes watermarks as they are.
func TestProjectMapsWatermarks(t *testing.T) {
	env := newEnv(t)
	a := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}
	twice, err := expr.NewBinary("*", a, &expr.Const{V: int64(2), T: types.TInt8})
	if err != nil {
		t.Fatal(err)
	}
	in := make(chan Message, 8)
	in <- ChunkMsg(chunk(nil, 3))
	in <- WatermarkMsg(Watermark{Col: 0, Value: 10})
	in <- WatermarkMsg(Watermark{Col: 1, Value: 20}) // no output passes column 1 on
	in <- BarrierMsg(Barrier{Epoch: 1})
	close(in)
	i8 := types.Column{Name: "x", Type: types.TInt8}
	p := &Project{Input: &source{in}, Exprs: []expr.Expr{twice, a, twice, a}, Cols: []types.Column{i8, i8, i8, i8}}
	cond, err := expr.NewBinary(">", a, &expr.Const{V: int64(0), T: types.TInt8})
	if err != nil {
		t.Fatal(err)
	}
	f := &Filter{Input: p, Cond: cond}
	got := drain(t, env, f.Start(env, []<-chan Message{p.Start(env, []<-chan Message{in})}))
	var s []string
	for _, m := range got {
		switch m.Kind {
		case KindChunk:
			s = append(s, fmt.Sprint("chunk", m.Chunk.Len()))
		case KindWatermark:
			s = append(s, fmt.Sprintf("wm%d=%d", m.Watermark.Col, m.Watermark.Value))
		case KindBarrier:
			s = append(s, fmt.Sprint("barrier", m.Barrier.Epoch))
		}
	}
	if fmt.Sprint(s) != "[chunk1 wm1=10 wm3=10 barrier1]" {
		t.Fatalf("messages %v", s)
	}
}
