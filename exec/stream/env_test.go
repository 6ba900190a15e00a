package stream

import (
	"context"
	"errors"
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
)

// Err before any failure must not keep a later Fail from being recorded
// and from stopping the graph.
func TestEnvFailAfterErr(t *testing.T) {
	env := NewEnv(context.Background(), expr.Context{})
	if env.Err() != nil {
		t.Fatal("a new env has failed")
	}
	boom := errors.New("boom")
	env.Fail(boom)
	env.Fail(errors.New("second"))
	if !errors.Is(env.Err(), boom) {
		t.Fatalf("Err = %v, want the first failure", env.Err())
	}
	select {
	case <-env.Ctx.Done():
	default:
		t.Fatal("Fail did not stop the graph")
	}
}
