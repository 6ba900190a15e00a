package engine

import (
	"context"

	"github.com/streamsql/streamsql/pgerr"
)

// Notices sent while a statement runs (before its result): the wire puts
// a sender in the statement's context (WithNotices); a long statement
// (CREATE MATERIALIZED VIEW's backfill under streaming_progress_notices)
// calls it. The sender runs on the goroutine that called Execute, the
// connection's, so it may write to the client directly.

type noticesKey struct{}

// WithNotices returns ctx carrying send, which sends a NOTICE to the client
// at once. send is called only on the goroutine that calls Execute.
func WithNotices(ctx context.Context, send func(*pgerr.Error)) context.Context {
	return context.WithValue(ctx, noticesKey{}, send)
}

// noticeSender returns the sender of ctx, or nil.
func noticeSender(ctx context.Context) func(*pgerr.Error) {
	f, _ := ctx.Value(noticesKey{}).(func(*pgerr.Error))
	return f
}
