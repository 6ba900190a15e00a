package wire

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/pgerr"
)

// toPgErr turns any error from the session into the user-facing error the
// client sees: a *pgerr.Error as is, an expired statement_timeout or a cancel
// as 57014, anything else as XX000 with its message.
func toPgErr(err error) *pgerr.Error {
	if e := pgerr.As(err); e != nil {
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return pgerr.Canceled(err)
	}
	return pgerr.Wrap(err, pgerr.InternalError, "%s", err.Error())
}

// errorResponse builds the ErrorResponse for err (fields S, V, C, M, D, H, P, W).
func errorResponse(err error) *pgproto3.ErrorResponse {
	e := toPgErr(err)
	sev := string(e.Severity)
	if sev == "" {
		sev = string(pgerr.SevError)
	}
	return &pgproto3.ErrorResponse{
		Severity:            sev,
		SeverityUnlocalized: sev,
		Code:                string(e.Code),
		Message:             e.Message,
		Detail:              e.Detail,
		Hint:                e.Hint,
		Position:            int32(e.Position),
		Where:               e.Where,
	}
}

// noticeResponse builds the NoticeResponse for a notice (default NOTICE).
func noticeResponse(e *pgerr.Error) *pgproto3.NoticeResponse {
	sev := string(e.Severity)
	if sev == "" {
		sev = string(pgerr.SevNotice)
	}
	code := string(e.Code)
	if code == "" {
		code = string(pgerr.SuccessfulCompletion)
	}
	return &pgproto3.NoticeResponse{
		Severity:            sev,
		SeverityUnlocalized: sev,
		Code:                code,
		Message:             e.Message,
		Detail:              e.Detail,
		Hint:                e.Hint,
		Position:            int32(e.Position),
		Where:               e.Where,
	}
}

// statementError makes the error a statement sees when its context ended,
// even if the session returned a different (or no) error: a cancel request
// wins over whatever the interrupted code reported.
func statementError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && pgerr.As(err) == nil {
		return ctxErr
	}
	return err
}

// recoverTo turns a panic in statement execution into an XX000 error in
// *err; the connection survives. Use as `defer c.recoverTo(&err)`.
func (c *conn) recoverTo(err *error) {
	if r := recover(); r != nil {
		c.srv.logf("wire: pid %d: panic in statement: %v\n%s", c.pid, r, debug.Stack())
		*err = pgerr.Internal("%s", fmt.Sprint(r))
	}
}
