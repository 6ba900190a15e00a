package plpgsql

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// sumTo is: DECLARE s int := 0; BEGIN FOR i IN 1..n LOOP s := s + i;
// EXIT WHEN s > cap; END LOOP; RETURN s; END, over slots n, cap, s, i.
func sumTo(t *testing.T) *Program {
	t.Helper()
	vars := []Var{{Name: "n", T: types.TInt4}, {Name: "cap", T: types.TInt4}, {Name: "s", T: types.TInt4}, {Name: "i", T: types.TInt4}}
	fields := make([]arrow.Field, len(vars))
	for i, v := range vars {
		fields[i] = arrow.Field{Name: v.Name, Type: v.T.ArrowType(), Nullable: true}
	}
	col := func(i int) expr.Expr { return &expr.ColRef{Idx: i, T: vars[i].T, Name: vars[i].Name} }
	call := func(op string, args ...expr.Expr) expr.Expr {
		e, err := expr.NewCall(op, args)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	return &Program{Name: "sum_to(integer,integer)", Vars: vars, NParams: 2, Schema: arrow.NewSchema(fields, nil),
		Body: []Stmt{&Block{State: -1, Errm: -1, Init: []Stmt{&Assign{Var: 2, E: &expr.Const{V: int64(0), T: types.TInt4}}}, Body: []Stmt{
			&ForInt{Var: 3, Lower: &expr.Const{V: int64(1), T: types.TInt4}, Upper: col(0), Body: []Stmt{
				&Assign{Var: 2, E: call("+", col(2), col(3))},
				&Exit{Cond: call(">", col(2), col(1))},
			}},
			&Return{E: col(2)},
		}}}}
}

func TestProgramLoops(t *testing.T) {
	p := sumTo(t)
	ctx := &expr.Context{Ctx: context.Background()}
	for _, c := range []struct{ n, cap, want int64 }{{10, 1000, 55}, {10, 20, 21}, {0, 5, 0}} {
		v, err := p.Call(ctx, []types.Value{c.n, c.cap})
		if err != nil {
			t.Fatal(err)
		}
		if v != c.want {
			t.Errorf("sum_to(%d, %d) = %v, want %d", c.n, c.cap, v, c.want)
		}
	}
	// a NULL bound: 22004
	if _, err := p.Call(ctx, []types.Value{nil, int64(1)}); pgerr.As(err) == nil || pgerr.As(err).Code != "22004" {
		t.Errorf("NULL bound: %v", err)
	}
}

func TestProgramCanceled(t *testing.T) {
	p := sumTo(t)
	p.Body = []Stmt{&Loop{Body: nil}} // LOOP END LOOP
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.Call(&expr.Context{Ctx: cctx}, []types.Value{int64(1), int64(1)})
	if pe := pgerr.As(err); pe == nil || pe.Code != pgerr.QueryCanceled {
		t.Fatalf("an endless loop after cancel: %v", err)
	}
}

func TestRaiseNotices(t *testing.T) {
	p := sumTo(t)
	msg := func(s string) expr.Expr { return &expr.Const{V: s, T: types.TText} }
	p.Body = []Stmt{
		&Raise{Level: pgerr.SevNotice, Message: "n is % and %% of %", Params: []expr.Expr{msg("1"), &expr.Const{T: types.TText}}},
		&Raise{Level: pgerr.SevWarning, Message: "w"},
		&Raise{Level: "", Message: "log only"},
		&Block{State: -1, Errm: -1, Body: []Stmt{&Raise{Level: pgerr.SevError, Message: "boom", Hint: msg("h")}},
			Handlers: []Handler{{Codes: []string{"P0000"}, Body: []Stmt{&Return{E: &expr.Const{V: int64(7), T: types.TInt4}}}}}},
	}
	var q pgerr.NoticeQueue
	v, err := p.Call(&expr.Context{Ctx: pgerr.WithNoticeQueue(context.Background(), &q)}, []types.Value{int64(1), int64(1)})
	if err != nil || v != int64(7) {
		t.Fatalf("got %v, %v; want 7 (the P0001 error caught by its class P0000)", v, err)
	}
	ns := q.Take()
	if len(ns) != 2 || ns[0].Message != "n is 1 and % of <NULL>" || ns[0].Code != "00000" || ns[1].Severity != pgerr.SevWarning || ns[1].Code != "01000" {
		t.Fatalf("notices %+v", ns)
	}
}
