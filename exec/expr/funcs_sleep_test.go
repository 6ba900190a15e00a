package expr

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/streamsql/streamsql/types"
)

// pg_sleep waits, is volatile (never folded), and a canceled statement ends
// it with the context's error (which the wire reports as 57014).
func TestPgSleep(t *testing.T) {
	c, err := NewCall("pg_sleep", []Expr{&Const{V: 0.01, T: types.TFloat8}})
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := Fold(testCtx(), c); f != c {
		t.Fatal("folded pg_sleep")
	}
	b := batch(t, col{types.TInt4, []types.Value{int32(1)}})
	if _, err := evalValues(t, c, b); err != nil {
		t.Fatal(err)
	}
	long, err := NewCall("pg_sleep", []Expr{&Const{V: 60.0, T: types.TFloat8}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	ec := testCtx()
	ec.Ctx = ctx
	if _, err := long.Eval(ec, b); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("canceled pg_sleep: %v", err)
	}
}
