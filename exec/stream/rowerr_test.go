package stream

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// 100 / a fails for a = 0 only: Project makes that value NULL, Filter drops
// that row, and each failure is reported once; other rows are untouched.
func TestRowErrorsDoNotStopTheGraph(t *testing.T) {
	a := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}
	div, err := expr.NewBinary("/", &expr.Const{V: int64(100), T: types.TInt8}, a)
	if err != nil {
		t.Fatal(err)
	}
	cond, err := expr.NewBinary(">", div, &expr.Const{V: int64(10), T: types.TInt8})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		node func(in Node) Node
		want string
	}{
		{"project", func(in Node) Node {
			return &Project{Input: in, Exprs: []expr.Expr{div}, Cols: []types.Column{{Name: "q", Type: types.TInt8}}}
		}, "[50 <nil> 20 1]"},
		{"filter", func(in Node) Node { return &Filter{Input: in, Cond: cond} }, "[2 5]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			var errs atomic.Int64
			env.OnRowError = func(err error) {
				if pgerr.CodeOf(err) != pgerr.DivisionByZero {
					t.Errorf("row error %v, want division by zero", err)
				}
				errs.Add(1)
			}
			src := &source{ch: make(chan Message, 4)}
			src.ch <- ChunkMsg(chunk(nil, 2, 0, 5, 100))
			src.ch <- BarrierMsg(Barrier{Epoch: 1})
			close(src.ch)
			n := tc.node(src)
			out := n.Start(env, []<-chan Message{src.Start(env, nil)})
			var got []any
			for _, m := range drain(t, env, out) {
				if m.Kind != KindChunk {
					continue
				}
				col := m.Chunk.Rec.Column(0).(*array.Int64)
				for i := 0; i < col.Len(); i++ {
					if col.IsNull(i) {
						got = append(got, nil)
					} else {
						got = append(got, col.Value(i))
					}
				}
			}
			if s := sprint(got); s != tc.want {
				t.Errorf("got %s, want %s", s, tc.want)
			}
			if errs.Load() != 1 {
				t.Errorf("%d row errors reported, want 1", errs.Load())
			}
		})
	}
}

func sprint(v []any) string { return fmt.Sprint(v) }
