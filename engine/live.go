package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Results whose rows never end (SUBSCRIBE) and the statements that read
// them: a plain query, DECLARE c CURSOR FOR SUBSCRIBE ... with FETCH, and
// COPY (SUBSCRIBE ...) TO STDOUT.

// TryNexter is implemented by result iterators (Result.Rows,
// CopyOut.Rows) whose next rows may depend on input that has not arrived
// yet, such as a subscription's: their Next blocks until rows arrive (or the
// context they were started with ends, returning its error) and may never
// report the end.
//
// TryNext is Next without waiting: (batch, true, nil) when a batch is ready,
// (nil, true, nil) at the end of the rows, (nil, false, nil) when Next would
// have to wait for input, (nil, false, err) on failure. Producing a batch
// from input already available (computing it) counts as ready. Like Next it
// is called from the iterator's one consumer goroutine.
//
// Consumers use it to hand out what is ready before waiting: the wire
// flushes the rows sent so far to the client before it calls Next, and FETCH
// n returns fewer than n rows rather than wait once it has at least one.
type TryNexter interface {
	TryNext() (arrow.RecordBatch, bool, error)
}

// subscribeFunc plans a SUBSCRIBE statement (Session.Prepare): it returns the
// columns of its rows (the op and the epoch's timestamp, then the query's
// columns) and start, which starts one subscription for Execute. start's
// ctx bounds the subscription's life: once it ends, Rows.Next returns its
// error; Close ends the subscription as well. The rows never end; the
// iterator should implement TryNexter. start is called from the session's
// goroutine and may be called several times.
//
// The streaming runtime provides it (Engine.subscribe); until then SUBSCRIBE
// is refused as unsupported.
type subscribeFunc func(ctx context.Context, s *Session, sub *sql.Subscribe) (cols []types.Column, start func(ctx context.Context) (exec.Iterator, error), err error)

// subscribePlan is a prepared SUBSCRIBE (plan.sub).
type subscribePlan struct {
	sub   *sql.Subscribe
	cols  []types.Column
	start func(ctx context.Context) (exec.Iterator, error)
}

// prepareSubscribe plans SUBSCRIBE and its DECLARE and COPY forms. Only the
// plain form returns rows to the statement itself.
func (s *Session) prepareSubscribe(ctx context.Context, p *Prepared, pl *plan, sub *sql.Subscribe) (*Prepared, error) {
	if s.eng.subscribe == nil {
		return nil, pgerr.Unsupported("SUBSCRIBE is not supported yet").WithPosition(p.Stmt.CharPos(sub.Pos))
	}
	// Planned against the views' jobs: after a restart, once they have
	// recovered (recovery.go).
	if err := s.eng.waitRecovered(ctx); err != nil {
		return nil, err
	}
	cols, start, err := s.eng.subscribe(ctx, s, sub)
	if err != nil {
		return nil, err
	}
	pl.kind, pl.sub = kindSubscribe, &subscribePlan{sub: sub, cols: cols, start: start}
	if sub.Wrapper == "" {
		p.Columns = cols
	}
	return p, nil
}

// executeLive runs the statements whose rows are read after Execute returns
// and may wait for input (FETCH, SUBSCRIBE): they hold no layout lock, and
// their statement_timeout runs until the rows are closed.
func (s *Session) executeLive(ctx context.Context, p *Prepared, pl *plan) (*Result, error) {
	cancel := context.CancelFunc(func() {})
	if d := s.set.statementTimeout(); d > 0 {
		ctx, cancel = context.WithTimeout(ctx, d)
	}
	var res *Result
	var err error
	if pl.kind == kindFetch {
		res, err = s.execFetch(ctx, p, pl.fetch)
	} else {
		res, err = s.execSubscribe(ctx, pl.sub)
	}
	switch {
	case err != nil:
		cancel()
		return nil, err
	case res.Rows != nil:
		res.Rows = withClose(res.Rows, cancel)
	case res.CopyOut != nil:
		res.CopyOut.Rows = withClose(res.CopyOut.Rows, cancel)
	default:
		cancel()
	}
	return res, nil
}

// execSubscribe starts a subscription: as the statement's rows, as a
// cursor, or as COPY TO STDOUT data.
func (s *Session) execSubscribe(ctx context.Context, sp *subscribePlan) (*Result, error) {
	switch sp.sub.Wrapper {
	case "DECLARE":
		d := sp.sub.Outer.GetDeclareCursorStmt()
		if d == nil {
			return nil, pgerr.Internal("SUBSCRIBE cursor without DECLARE")
		}
		if d.Options&cursorScroll != 0 {
			return nil, pgerr.Unsupported("DECLARE SCROLL CURSOR ... FOR SUBSCRIBE is not supported").
				WithDetail("Subscriptions can only be read forward.")
		}
		return s.declareCursor(ctx, d, sp.cols, func(cctx context.Context) (exec.Iterator, error) {
			return sp.start(cctx)
		})
	case "COPY":
		c := sp.sub.Outer.GetCopyStmt()
		if c == nil {
			return nil, pgerr.Internal("SUBSCRIBE copy without COPY")
		}
		if c.IsFrom || c.Filename != "" || c.IsProgram {
			return nil, pgerr.Unsupported("COPY (SUBSCRIBE ...) is supported only TO STDOUT")
		}
		o, err := parseCopyOptions(c.Options, false)
		if err != nil {
			return nil, err
		}
		forceQuote, err := s.copyForceQuote(c, o, sp.cols)
		if err != nil {
			return nil, err
		}
		it, err := sp.start(ctx)
		if err != nil {
			return nil, err
		}
		return &Result{Tag: "COPY", Columns: sp.cols, CopyOut: &CopyOut{
			Columns: sp.cols, Rows: it, Format: o.format, Delimiter: o.delimiter,
			Null: o.null, Header: o.header, Quote: o.quote, Escape: o.escape,
			ForceQuote: forceQuote,
		}}, nil
	}
	it, err := sp.start(ctx)
	if err != nil {
		return nil, err
	}
	return &Result{Tag: "SUBSCRIBE", Columns: sp.cols, Rows: it}, nil
}

// withClose wraps it so that closing it also calls done (once), keeping
// its TryNext if it has one.
func withClose(it exec.Iterator, done func()) exec.Iterator {
	c := &closeIter{Iterator: it, done: done}
	if t, ok := it.(TryNexter); ok {
		return &closeTryIter{closeIter: c, t: t}
	}
	return c
}

type closeIter struct {
	exec.Iterator
	done func()
}

func (c *closeIter) Close() error {
	err := c.Iterator.Close()
	if c.done != nil {
		c.done()
		c.done = nil
	}
	return err
}

type closeTryIter struct {
	*closeIter
	t TryNexter
}

func (c *closeTryIter) TryNext() (arrow.RecordBatch, bool, error) { return c.t.TryNext() }

// isSubscribeStmt reports a SUBSCRIBE in any of its forms.
func isSubscribeStmt(stmt sql.Statement) bool {
	return stmt.AST == nil && stmt.Ext != nil && stmt.Ext.Kind == sql.KindSubscribe && stmt.Ext.Subscribe != nil
}

// cancelCopyIn ends a COPY FROM STDIN's statement context (its
// statement_timeout) once the wire finishes or aborts the copy: the data
// arrives after Execute returns. Used by one connection's goroutine.
type cancelCopyIn struct {
	CopyIn
	cancel context.CancelFunc
}

func (c *cancelCopyIn) Finish() (string, error) {
	defer c.cancel()
	return c.CopyIn.Finish()
}

func (c *cancelCopyIn) Abort(reason string) {
	defer c.cancel()
	c.CopyIn.Abort(reason)
}
