package expr

import (
	"fmt"
	"time"

	"github.com/streamsql/streamsql/types"
)

// pg_sleep(seconds) waits, as PostgreSQL does, and ends early with 57014
// when the statement is canceled (CancelRequest, statement_timeout).
func init() {
	f := rowFn("pg_sleep", types.TVoid, []types.T{types.TFloat8}, func(ctx *Context, a []types.Value) (types.Value, error) {
		secs := a[0].(float64)
		if !(secs > 0) {
			return nil, nil
		}
		t := time.NewTimer(time.Duration(secs * float64(time.Second)))
		defer t.Stop()
		if ctx == nil || ctx.Ctx == nil {
			<-t.C
			return nil, nil
		}
		select {
		case <-t.C:
			return nil, nil
		case <-ctx.Ctx.Done():
			return nil, fmt.Errorf("pg_sleep: %w", ctx.Ctx.Err()) // the wire reports 57014 with the cause
		}
	})
	f.Volatile = true
	define(f)
}
