package wire

import (
	"context"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/sql"
)

// simpleQuery runs a Query message: every statement of the text in turn,
// stopping at the first error, then one ReadyForQuery.
func (c *conn) simpleQuery(text string) error {
	// A simple Query replaces the unnamed statement and portal, as in PostgreSQL.
	c.dropStatement("")
	c.dropPortal("")
	c.reportActive(text) // activity.go
	stmts, err := c.parseQuery(text)
	switch {
	case err != nil:
		c.sendError(err)
	case len(stmts) == 0:
		c.be.Send(&pgproto3.EmptyQueryResponse{})
	}
	for _, st := range stmts {
		if !c.simpleStatement(st) || c.ioErr != nil {
			break
		}
	}
	if c.ioErr != nil {
		return c.ioErr
	}
	c.endOfTransactionPortals()
	return c.readyForQuery()
}

// simpleStatement prepares and runs one statement of a simple query,
// streaming its result. It reports whether the statement succeeded.
func (c *conn) simpleStatement(st sql.Statement) bool {
	ctx, done := c.startStatement()
	defer done()
	c.fo = c.sess.Format()
	var res *engine.Result
	err := c.call(func() error {
		p, err := c.sess.Prepare(ctx, st, nil)
		if err != nil {
			return err
		}
		res, err = c.sess.Execute(ctx, p, nil)
		return err
	})
	if err == nil && res == nil {
		err = errNoResult
	}
	if err != nil {
		c.sendError(statementError(ctx, err))
		return false
	}
	if err := c.sendResult(ctx, res); err != nil {
		c.sendError(statementError(ctx, err))
		return false
	}
	return true
}

// sendResult sends a fresh result: the rows in text with their
// RowDescription (simple query mode), or the COPY, or CommandComplete.
func (c *conn) sendResult(ctx context.Context, res *engine.Result) error {
	c.sendResultExtras(res)
	switch {
	case res.CopyIn != nil:
		return c.copyIn(ctx, res.CopyIn)
	case res.CopyOut != nil:
		return c.copyOut(ctx, res.CopyOut)
	case res.Rows != nil:
		var formats []int16 // text
		if res.Binary {
			formats = make([]int16, len(res.Columns))
			for i := range formats {
				formats[i] = formatBinary
			}
		}
		rs := newRowSource(res.Rows, res.Columns, formats)
		defer rs.close()
		c.be.Send(rowDescription(res.Columns, rs.formats))
		n, _, err := rs.send(ctx, c, 0)
		if err != nil {
			return err
		}
		c.drainNotices()
		c.be.Send(&pgproto3.CommandComplete{CommandTag: rowsTag(res.Tag, n)})
	default:
		c.drainNotices()
		c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(res.Tag)})
	}
	return nil
}

// stringLiterals is implemented by sessions whose
// standard_conforming_strings can be off (engine.Session).
type stringLiterals interface {
	StringLiterals() (standard, warn bool)
}

// parseQuery parses a query string under the session's
// standard_conforming_strings, sending the WARNINGs of
// escape_string_warning.
func (c *conn) parseQuery(text string) ([]sql.Statement, error) {
	if sl, ok := c.sess.(stringLiterals); ok {
		if standard, warn := sl.StringLiterals(); !standard {
			stmts, warnings, err := sql.ParseNonStandard(text, warn)
			for _, w := range warnings {
				c.be.Send(noticeResponse(w))
			}
			return stmts, err
		}
	}
	return sql.Parse(text)
}
