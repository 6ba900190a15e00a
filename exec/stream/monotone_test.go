package stream

import (
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

func TestMonotoneInput(t *testing.T) {
	ts := &expr.ColRef{Idx: 2, T: types.TTimestamp, Name: "ts"}
	n := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "n"}
	text := func(s string) expr.Expr { return &expr.Const{V: s, T: types.TText} }
	iv := func(months, days int32, micros int64) expr.Expr {
		return &expr.Const{V: types.IntervalValue{Months: months, Days: days, Micros: micros}, T: types.TInterval}
	}
	const sec = int64(time.Second / time.Microsecond)
	call := func(name string, args ...expr.Expr) expr.Expr {
		e, err := expr.NewCall(name, args)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return e
	}
	bin := func(op string, l, r expr.Expr) expr.Expr {
		e, err := expr.NewBinary(op, l, r)
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		return e
	}
	at := func(s string) int64 {
		v, err := time.Parse("2006-01-02 15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UnixMicro()
	}
	origin := &expr.Const{V: types.TimestampValue(at("2000-01-01 00:00:00")), T: types.TTimestamp}
	ctx := &expr.Context{}
	w := at("2024-01-01 10:17:43")
	for _, c := range []struct {
		e    expr.Expr
		mono bool
		want string // the watermark through e, when mono
	}{
		{ts, true, "2024-01-01 10:17:43"},
		{call("date_trunc", text("minute"), ts), true, "2024-01-01 10:17:00"},
		{call("date_trunc", text("hour"), bin("+", ts, iv(0, 0, 50*60*sec))), true, "2024-01-01 11:00:00"},
		{call("date_bin", iv(0, 0, 20*sec), ts, origin), true, "2024-01-01 10:17:40"},
		{bin("-", ts, iv(0, 1, 0)), true, "2023-12-31 10:17:43"},
		{bin("+", iv(1, 0, 0), ts), true, "2024-02-01 10:17:43"},
		{n, false, ""}, // not a timestamp
		{bin("-", iv(0, 0, 0), iv(0, 1, 0)), false, ""}, // no column
		{call("date_trunc", text("minute"), call("date_trunc", text("hour"), ts)), true, "2024-01-01 10:00:00"},
	} {
		col, ok := MonotoneInput(c.e)
		if ok != c.mono || ok && col != 2 {
			t.Errorf("%s: MonotoneInput = %d, %v; want 2, %v", c.e, col, ok, c.mono)
			continue
		}
		if !ok {
			continue
		}
		v, ok := markAt(ctx, c.e, col, w)
		if got := time.UnixMicro(v).UTC().Format("2006-01-02 15:04:05"); !ok || got != c.want {
			t.Errorf("%s at %d: %s, %v; want %s", c.e, w, got, ok, c.want)
		}
	}
	// Only constants beside the column: an unfolded interval expression
	// is not taken (the planner folds constant ones first).
	if _, ok := MonotoneInput(bin("-", ts, bin("*", iv(0, 0, sec), &expr.Const{V: int64(2), T: types.TInt8}))); ok {
		t.Error("ts - (interval * 2) taken as growing with ts")
	}
}
