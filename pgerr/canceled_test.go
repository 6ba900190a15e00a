package pgerr

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestCanceled: a context that ended by its deadline is a statement
// timeout, any other end a cancel; both 57014, the cause kept.
func TestCanceled(t *testing.T) {
	for _, c := range []struct {
		cause error
		msg   string
	}{
		{context.DeadlineExceeded, "canceling statement due to statement timeout"},
		{fmt.Errorf("round 3: %w", context.DeadlineExceeded), "canceling statement due to statement timeout"},
		{context.Canceled, "canceling statement due to user request"},
	} {
		e := Canceled(c.cause)
		if e.Code != QueryCanceled || e.Message != c.msg || !errors.Is(e, c.cause) {
			t.Errorf("Canceled(%v) = %s %q (keeps its cause: %v)", c.cause, e.Code, e.Message, errors.Is(e, c.cause))
		}
	}
}
