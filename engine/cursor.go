package engine

import (
	"context"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// SQL cursors, as in PostgreSQL 15:
//
//	DECLARE name [BINARY] [ASENSITIVE | INSENSITIVE] [[NO] SCROLL] CURSOR
//	    [{WITH | WITHOUT} HOLD] FOR query
//	FETCH [direction] [FROM | IN] name      MOVE likewise
//	CLOSE name | ALL
//
// A cursor belongs to its session. Without HOLD it can only be declared in
// a transaction block and closes when the block ends; WITH HOLD it outlives
// the commit: its remaining rows are read into memory then (or at once when
// declared outside a block), as PostgreSQL materializes them. A cursor over
// SUBSCRIBE is never materialized: it keeps reading the subscription.
//
// Cursors read forward only unless declared SCROLL, which keeps every row
// read so far in memory for backward moves. As in PostgreSQL, a cursor
// declared without SCROLL or NO SCROLL scrolls too when its plan could run
// backward, keeping at most work_mem of rows (cursor_scroll.go).
// Positions and the moves of every FETCH direction follow PostgreSQL's
// portal code (DoPortalRunFetch), so a cursor reports the same rows, counts
// and errors.
//
// FETCH on a cursor whose rows never end (SUBSCRIBE) returns once it has
// the rows asked for, or earlier once it has at least one and no more is
// ready; with none ready it waits for the first (canceled by CancelRequest
// or statement_timeout, leaving the cursor usable).
//
// Everything here runs on the session's goroutine.

// cursor option bits of DeclareCursorStmt.Options (PostgreSQL's CURSOR_OPT_*).
const (
	cursorBinary int32 = 0x01
	cursorScroll int32 = 0x02
	cursorHold   int32 = 0x20
)

// fetchAll is FETCH ALL's count (PostgreSQL's FETCH_ALL, LONG_MAX).
const fetchAll = math.MaxInt64

// cursor is one open cursor: its rows and its position.
type cursor struct {
	name string
	cols []types.Column
	opts int32
	// inTx: declared in the open transaction block, so it closes if the
	// block rolls back (even WITH HOLD).
	inTx bool
	r    *reader
	// store keeps the rows read so far for SCROLL cursors.
	store rowStore
	// pos, atStart and atEnd are PostgreSQL's portalPos, atStart and
	// atEnd: pos counts the rows before the current position (the current
	// row is number pos when on a row); atEnd means past the last row.
	pos     int64
	atStart bool
	atEnd   bool
	failed  bool // an error happened while it ran: it cannot run again
	closed  bool
	// implicitLimit, for a cursor scrolling without SCROLL (cursor_scroll.go),
	// is the bytes it may keep (work_mem), storeBytes what it keeps; 0: no limit.
	implicitLimit, storeBytes int64
}

func (c *cursor) hold() bool       { return c.opts&cursorHold != 0 }
func (c *cursor) scrollable() bool { return c.opts&cursorScroll != 0 }

// exhausted reports that no row is left forward of the read position.
func (c *cursor) exhausted() bool {
	return c.r.done && c.r.batch == nil && (!c.scrollable() || c.pos >= c.store.n)
}

func (c *cursor) close() {
	if !c.closed {
		c.closed = true
		c.r.close()
		c.store = rowStore{}
	}
}

// errBackward is PostgreSQL's error for a backward move of a cursor that is
// not SCROLL.
func errBackward(code pgerr.Code) error {
	return pgerr.New(code, "cursor can only scan forward").
		WithHint("Declare it with SCROLL option to enable backward scan.")
}

func errNoCursor(name string) error {
	return pgerr.New(pgerr.InvalidCursorName, "cursor \"%s\" does not exist", name)
}

// declareCursor opens a cursor named by d over the rows open returns. open
// runs the query under the cursor's own context, which lives until the
// cursor closes.
func (s *Session) declareCursor(ctx context.Context, d *pg.DeclareCursorStmt, cols []types.Column, open func(context.Context) (exec.Iterator, error)) (*Result, error) {
	name := d.Portalname
	if name == "" {
		return nil, pgerr.New(pgerr.InvalidCursorName, "invalid cursor name: must not be empty")
	}
	if d.Options&cursorHold == 0 && s.tx == 'I' {
		return nil, pgerr.New(pgerr.NoActiveSQLTransaction, "DECLARE CURSOR can only be used in transaction blocks")
	}
	if _, dup := s.cursors[name]; dup {
		return nil, pgerr.New(pgerr.DuplicateCursor, "cursor \"%s\" already exists", name)
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	it, err := open(cctx)
	if err != nil {
		cancel()
		return nil, err
	}
	c := &cursor{name: name, cols: cols, opts: d.Options, inTx: s.tx != 'I', r: newReader(it, cancel), atStart: true}
	if c.hold() && !c.inTx && !c.r.live() {
		// Outside a block the implicit commit comes now.
		if err := c.r.materialize(ctx); err != nil {
			c.close()
			return nil, err
		}
	}
	if s.cursors == nil {
		s.cursors = map[string]*cursor{}
	}
	s.cursors[name] = c
	return &Result{Tag: "DECLARE CURSOR"}, nil
}

// declareSelect runs DECLARE ... CURSOR FOR a query planned by Prepare.
func (s *Session) declareSelect(ctx context.Context, pl *plan, params []types.Value, alters uint64) (*Result, error) {
	d, implicit := implicitScroll(pl.declare, pl.query.Root) // cursor_scroll.go
	if len(pl.query.Locks) > 0 {
		if d.Options&cursorHold != 0 {
			return nil, pgerr.Unsupported("DECLARE CURSOR WITH HOLD ... FOR UPDATE is not supported").
				WithDetail("Holdable cursors must be READ ONLY.")
		}
		if s.stx != nil { // (outside a block DECLARE fails below, as without FOR UPDATE)
			if _, err := s.takeRowLocks(ctx, pl.query); err != nil { // rowlock.go: held to the block's end
				return nil, err
			}
		}
	}
	res, err := s.declareCursor(ctx, d, pl.query.Columns, func(cctx context.Context) (exec.Iterator, error) {
		ectx := s.execContext(cctx, params)
		it, err := pl.query.Root.Open(ectx)
		if err != nil {
			closeBudget(ectx)
			return nil, err
		}
		return s.guardRows(&Result{Rows: &cancelIter{it, func() { closeBudget(ectx) }}}, alters).Rows, nil
	})
	if err != nil {
		return nil, err
	}
	if c := s.cursors[d.Portalname]; c != nil && implicit {
		c.implicitLimit = max(s.set.memoryBytes("work_mem"), 1)
	}
	// As a SELECT's: the cursor's rows come from failed or recovering
	// views (failedviews.go).
	res.Notices = append(res.Notices, s.eng.viewNotices(pl.query.Views)...)
	return res, nil
}

// fetchColumns are the columns FETCH reports at Prepare (Describe): the
// cursor's, if it exists by then.
func (s *Session) fetchColumns(f *pg.FetchStmt) []types.Column {
	if c := s.cursors[f.Portalname]; c != nil && !f.Ismove {
		return c.cols
	}
	return nil
}

// CursorColumns describes an open cursor: its columns and whether it is
// BINARY. The wire answers a protocol Describe of a portal by that name
// with it, as PostgreSQL (where cursors are portals) does.
func (s *Session) CursorColumns(name string) (cols []types.Column, binary, ok bool) {
	c := s.cursors[name]
	if c == nil {
		return nil, false, false
	}
	return c.cols, c.opts&cursorBinary != 0, true
}

// execFetch runs FETCH or MOVE. FETCH's rows are read as the caller reads
// Result.Rows (forward) or collected now (backward); MOVE's tag is "MOVE n".
func (s *Session) execFetch(ctx context.Context, p *Prepared, f *pg.FetchStmt) (*Result, error) {
	c := s.cursors[f.Portalname]
	if c == nil {
		return nil, errNoCursor(f.Portalname)
	}
	if c.failed {
		return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "portal \"%s\" cannot be run", c.name)
	}
	if !f.Ismove && p.Columns != nil && !sameColumns(p.Columns, c.cols) {
		return nil, pgerr.New(pgerr.FeatureNotSupported, "cached plan must not change result type")
	}
	rows, n, err := c.run(ctx, f.Direction, f.HowMany, f.Ismove)
	if err != nil {
		c.noteError(err)
		return nil, err
	}
	if f.Ismove {
		return &Result{Tag: "MOVE " + strconv.FormatInt(n, 10)}, nil
	}
	return &Result{Tag: "FETCH", Columns: c.cols, Rows: rows, Binary: c.opts&cursorBinary != 0}, nil
}

// noteError marks the cursor failed after an error, as PostgreSQL marks a
// portal, unless only a wait for a subscription's rows was canceled.
func (c *cursor) noteError(err error) {
	if _, ok := err.(waitCanceled); !ok {
		c.failed = true
	}
}

// run is PostgreSQL's DoPortalRunFetch: it turns a direction and count into
// forward and backward steps. The last step delivers rows (FETCH) or only
// counts them (MOVE, whose count it returns).
func (c *cursor) run(ctx context.Context, dir pg.FetchDirection, count int64, move bool) (exec.Iterator, int64, error) {
	last := func(forward bool, count int64) (exec.Iterator, int64, error) {
		switch {
		case move:
			n, err := c.step(ctx, forward, count)
			return nil, n, err
		case forward:
			return &fetchIter{c: c, ctx: ctx, count: count}, 0, nil
		}
		bs, _, err := c.backward(count, true)
		return exec.NewSliceIter(bs), 0, err
	}
	switch dir {
	case pg.FetchDirection_FETCH_FORWARD:
		if count < 0 {
			dir, count = pg.FetchDirection_FETCH_BACKWARD, -count
		}
	case pg.FetchDirection_FETCH_BACKWARD:
		if count < 0 {
			dir, count = pg.FetchDirection_FETCH_FORWARD, -count
		}
	case pg.FetchDirection_FETCH_ABSOLUTE:
		switch {
		case count > 0:
			// Rewind and skip, or move from where we are when the goal
			// is nearer (and forward).
			if c.pos == fetchAll || count-1 < c.pos/2 {
				if err := c.rewind(); err != nil {
					return nil, 0, err
				}
				if count > 1 {
					if _, err := c.step(ctx, true, count-1); err != nil {
						return nil, 0, err
					}
				}
			} else {
				pos := c.pos
				if c.atEnd {
					pos++ // one extra fetch if off the end
				}
				if count <= pos {
					if _, err := c.step(ctx, false, pos-count+1); err != nil {
						return nil, 0, err
					}
				} else if count > pos+1 {
					if _, err := c.step(ctx, true, count-pos-1); err != nil {
						return nil, 0, err
					}
				}
			}
			return last(true, 1)
		case count < 0:
			// Advance to the end, back up -count-1 rows, return the prior.
			if _, err := c.step(ctx, true, fetchAll); err != nil {
				return nil, 0, err
			}
			if count < -1 {
				if _, err := c.step(ctx, false, -count-1); err != nil {
					return nil, 0, err
				}
			}
			return last(false, 1)
		}
		if err := c.rewind(); err != nil {
			return nil, 0, err
		}
		return last(true, 0)
	case pg.FetchDirection_FETCH_RELATIVE:
		switch {
		case count > 0:
			if count > 1 {
				if _, err := c.step(ctx, true, count-1); err != nil {
					return nil, 0, err
				}
			}
			return last(true, 1)
		case count < 0:
			if count < -1 {
				if _, err := c.step(ctx, false, -count-1); err != nil {
					return nil, 0, err
				}
			}
			return last(false, 1)
		}
		dir = pg.FetchDirection_FETCH_FORWARD
	}
	forward := dir == pg.FetchDirection_FETCH_FORWARD
	if count == 0 {
		// Re-fetch the current row, if on one.
		onRow := !c.atStart && !c.atEnd
		if move {
			if onRow {
				return nil, 1, nil
			}
			return nil, 0, nil
		}
		if onRow {
			if _, err := c.step(ctx, false, 1); err != nil {
				return nil, 0, err
			}
			count, forward = 1, true
		}
	}
	if !forward && count == fetchAll && move {
		// MOVE BACKWARD ALL is a rewind.
		n := c.pos
		if n > 0 && !c.atEnd {
			n--
		}
		return nil, n, c.rewind()
	}
	return last(forward, count)
}

// step moves count rows (fetchAll: all) forward or backward without
// delivering them, and returns how many it passed.
func (c *cursor) step(ctx context.Context, forward bool, count int64) (int64, error) {
	if !forward {
		_, n, err := c.backward(count, false)
		return n, err
	}
	f := &fetchIter{c: c, ctx: ctx, count: count}
	for {
		b, err := f.Next()
		if err != nil || b == nil {
			return f.n, err
		}
	}
}

// backward moves count rows back (PostgreSQL's PortalRunSelect backward),
// returning them in that order when collect is set, and how many it passed.
func (c *cursor) backward(count int64, collect bool) ([]arrow.RecordBatch, int64, error) {
	if !c.scrollable() {
		return nil, 0, errBackward(pgerr.ObjectNotInPrerequisiteState)
	}
	if c.atStart || count <= 0 {
		return nil, 0, nil
	}
	at := c.pos // rows before the position
	if !c.atEnd {
		at-- // on row pos: the rows before it
	}
	n := min(count, at)
	var bs []arrow.RecordBatch
	if collect {
		for i := int64(0); i < n; i++ {
			bs = append(bs, c.store.row(at-1-i))
		}
	}
	if n > 0 && c.atEnd {
		c.atEnd = false
		c.pos++
	}
	if count == fetchAll || n < count {
		c.atStart, c.pos = true, 0
	} else {
		c.pos -= n
	}
	return bs, n, nil
}

// rewind goes back before the first row (DoPortalRewind).
func (c *cursor) rewind() error {
	if c.atStart && !c.atEnd {
		return nil
	}
	if !c.scrollable() {
		return errBackward(pgerr.FeatureNotSupported)
	}
	c.atStart, c.atEnd, c.pos = true, false, 0
	return nil
}

// forward returns up to max rows forward of the position and moves past
// them: from the store of a SCROLL cursor while it has them, else from the
// reader. It returns nil at the end, or when wait is false and a live
// cursor has nothing ready.
func (c *cursor) forward(ctx context.Context, max int64, wait bool) (arrow.RecordBatch, error) {
	var b arrow.RecordBatch
	if c.scrollable() && c.pos < c.store.n {
		b = c.store.slice(c.pos, c.pos+min(max, c.store.n-c.pos))
	} else {
		var err error
		if b, err = c.r.read(ctx, max, wait); err != nil || b == nil {
			return nil, err
		}
		if c.scrollable() && c.keepImplicit(batchBytes(b)) {
			b.Retain() // one reference for the store, one for the caller
			c.store.add(b)
		}
	}
	c.pos += b.NumRows()
	c.atStart = false
	return b, nil
}

// fetchIter delivers the rows of one forward FETCH as they are read
// (PostgreSQL's PortalRunSelect forward): at most count, stopping early
// once it has some and a live cursor has no more ready.
type fetchIter struct {
	c     *cursor
	ctx   context.Context // the FETCH statement's
	count int64
	n     int64 // rows delivered
	done  bool
}

func (f *fetchIter) Next() (arrow.RecordBatch, error) {
	b, _, err := f.next(true)
	return b, err
}

// TryNext implements TryNexter: it reports not ready only while no row has
// been delivered and the cursor's subscription has none ready.
func (f *fetchIter) TryNext() (arrow.RecordBatch, bool, error) { return f.next(false) }

func (f *fetchIter) next(wait bool) (arrow.RecordBatch, bool, error) {
	c := f.c
	if f.done {
		return nil, true, nil
	}
	if c.closed {
		f.done = true
		return nil, false, errNoCursor(c.name)
	}
	if c.atEnd || f.n >= f.count {
		f.finish()
		return nil, true, nil
	}
	b, err := c.forward(f.ctx, f.count-f.n, wait && f.n == 0)
	if err != nil {
		f.done = true
		c.noteError(err)
		return nil, false, err
	}
	if b == nil {
		if f.n == 0 && !c.exhausted() {
			return nil, false, nil // only without wait: nothing ready yet
		}
		f.finish()
		return nil, true, nil
	}
	f.n += b.NumRows()
	return b, true, nil
}

// finish ends the FETCH; one that got fewer rows than asked because the
// rows ended leaves the cursor past the end.
func (f *fetchIter) finish() {
	f.done = true
	if f.n < f.count && f.count > 0 && f.c.exhausted() {
		f.c.atEnd = true
	}
}

func (f *fetchIter) Close() error {
	f.done = true
	return nil
}

// execClose runs CLOSE name | ALL.
func (s *Session) execClose(cp *pg.ClosePortalStmt) (*Result, error) {
	if cp.Portalname == "" {
		s.closeCursors(func(*cursor) bool { return true })
		return &Result{Tag: "CLOSE CURSOR ALL"}, nil
	}
	c := s.cursors[cp.Portalname]
	if c == nil {
		return nil, errNoCursor(cp.Portalname)
	}
	c.close()
	delete(s.cursors, cp.Portalname)
	return &Result{Tag: "CLOSE CURSOR"}, nil
}

// closeCursors closes the cursors which match.
func (s *Session) closeCursors(match func(*cursor) bool) {
	for name, c := range s.cursors {
		if match(c) {
			c.close()
			delete(s.cursors, name)
		}
	}
}

// materializeHeld reads the rest of every WITH HOLD cursor declared in the
// committing transaction block into memory, before the commit, as
// PostgreSQL does: an error fails the COMMIT. Cursors over a subscription
// keep reading it instead.
func (s *Session) materializeHeld(ctx context.Context) error {
	for _, c := range s.cursors {
		if c.inTx && c.hold() && !c.r.live() {
			if err := c.r.materialize(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// cursorsAtTxEnd closes the cursors that end with the transaction block:
// those without HOLD, and on rollback those declared in it.
func (s *Session) cursorsAtTxEnd(committed bool) {
	s.closeCursors(func(c *cursor) bool { return !c.hold() || (c.inTx && !committed) })
	for _, c := range s.cursors {
		c.inTx = false
	}
}
