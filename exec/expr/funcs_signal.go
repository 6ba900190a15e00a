package expr

import (
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// BackendSignaler is implemented by sessions that can signal other
// sessions (the engine's): pg_cancel_backend and pg_terminate_backend.
type BackendSignaler interface {
	// SignalBackend cancels the running statement of the session with
	// process id pid, or with terminate ends its connection; false when
	// no session has that pid. Permission errors are *pgerr.Error.
	SignalBackend(pid int32, terminate bool) (bool, error)
}

func signalFn(name string, terminate bool, args []types.T) *Func {
	f := rowFn(name, types.TBool, args, func(ctx *Context, a []types.Value) (types.Value, error) {
		sig, ok := ctx.Session.(BackendSignaler)
		if ctx.Session == nil || !ok {
			return nil, pgerr.Unsupported("%s needs a client session", name)
		}
		return sig.SignalBackend(int32(a[0].(int64)), terminate)
	})
	f.Volatile = true
	return f
}

func init() {
	define(
		signalFn("pg_cancel_backend", false, []types.T{types.TInt4}),
		signalFn("pg_terminate_backend", true, []types.T{types.TInt4}),
		// pg_terminate_backend(pid, timeout): the timeout (ms) to wait for
		// the end is accepted; the connection is closed at once.
		signalFn("pg_terminate_backend", true, []types.T{types.TInt4, types.TInt8}),
	)
}
