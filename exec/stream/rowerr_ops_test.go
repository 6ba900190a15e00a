package stream

import (
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Expressions evaluated inside HashAgg (group keys, arguments, FILTER),
// HashJoin (keys) and TopN (sort keys) treat a failing row as Project does:
// the value is NULL, the error is reported once per failing evaluation, and
// the graph goes on. The input is a = 2, 0, 5, 100; 100 / a fails for 0.
func TestRowErrorsInsideOperators(t *testing.T) {
	a := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}
	div, err := expr.NewBinary("/", &expr.Const{V: int64(100), T: types.TInt8}, a)
	if err != nil {
		t.Fatal(err)
	}
	gt10, err := expr.NewBinary(">", div, &expr.Const{V: int64(10), T: types.TInt8})
	if err != nil {
		t.Fatal(err)
	}
	i8 := func(names ...string) []types.Column {
		out := make([]types.Column, len(names))
		for i, n := range names {
			out[i] = types.Column{Name: n, Type: types.TInt8}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		node  func(l, r Node) Node
		errs  int64
		want  string
		right []int64 // the right input (joins), default 50, 1, 7
	}{
		{"group key", func(l, _ Node) Node {
			return &HashAgg{Input: l, GroupBy: []expr.Expr{div}, Aggs: []AggSpec{{Kind: AggCountStar}}, Cols: i8("q", "n")}
		}, 1, "(null) 1|1 1|20 1|50 1", nil},
		{"argument and filter", func(l, _ Node) Node {
			return &HashAgg{Input: l, Aggs: []AggSpec{{Kind: AggCountStar}, {Kind: AggCount, Arg: div}, {Kind: AggCountStar, Filter: gt10}},
				Cols: i8("n", "n_q", "n_big")}
		}, 2, "4 3 2", nil},
		{"join key", func(l, r Node) Node {
			return &HashJoin{Left: l, Right: r, Kind: exec.InnerJoin, LeftKeys: []expr.Expr{div}, RightKeys: []expr.Expr{a}, Cols: i8("a", "q")}
		}, 1, "100 1|2 50", nil},
		{"join condition", func(l, r Node) Node {
			rightA := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "b"}
			cond, err := expr.NewBinary(">", div, rightA) // 100 / left.a > right.a
			if err != nil {
				t.Fatal(err)
			}
			return &HashJoin{Left: l, Right: r, Kind: exec.InnerJoin, LeftKeys: []expr.Expr{a}, RightKeys: []expr.Expr{a}, Cond: cond, Cols: i8("a", "b")}
		}, 1, "2 2|5 5", []int64{2, 0, 5, 100}},
		{"sort key", func(l, _ Node) Node {
			return &TopN{Input: l, Order: []exec.SortKey{{E: div}}, Limit: 2, Cols: i8("a")}
		}, 1, "100|5", nil},
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
			l, r := &source{ch: make(chan Message, 4)}, &source{ch: make(chan Message, 4)}
			l.ch <- ChunkMsg(chunk(nil, 2, 0, 5, 100))
			right := tc.right
			if right == nil {
				right = []int64{50, 1, 7}
			}
			r.ch <- ChunkMsg(chunk(nil, right...))
			for _, s := range []*source{l, r} {
				s.ch <- BarrierMsg(Barrier{Epoch: 1})
				close(s.ch)
			}
			n := tc.node(l, r)
			ins := []<-chan Message{l.Start(env, nil)}
			if len(n.Inputs()) == 2 {
				ins = append(ins, r.Start(env, nil))
			}
			var rows []string
			for _, m := range drain(t, env, n.Start(env, ins)) {
				if m.Kind != KindChunk {
					continue
				}
				for i := 0; i < int(m.Chunk.Rec.NumRows()); i++ {
					if m.Chunk.Ops != nil && m.Chunk.Ops[i] != Insert {
						t.Fatalf("unexpected op %s", m.Chunk.Ops[i])
					}
					vals := make([]string, m.Chunk.Rec.NumCols())
					for k, c := range m.Chunk.Rec.Columns() {
						vals[k] = c.ValueStr(i)
					}
					rows = append(rows, strings.Join(vals, " "))
				}
			}
			sort.Strings(rows)
			if got := strings.Join(rows, "|"); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
			if errs.Load() != tc.errs {
				t.Errorf("%d row errors reported, want %d", errs.Load(), tc.errs)
			}
		})
	}
}
