package engine

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/membudget"
)

// Implicit SCROLL. PostgreSQL lets a cursor declared with neither SCROLL
// nor NO SCROLL move backward when its plan can run backward
// (ExecSupportsBackwardScan: scans, VALUES, functions in FROM and sorts,
// under filters, projections, LIMIT and UNION ALL; not joins, aggregates,
// DISTINCT, set operations or window functions). Such a cursor here keeps
// the rows it reads, as a SCROLL one does, but only up to work_mem: past
// that it drops them and reads forward only (a backward move then fails
// with 55000 `cursor can only scan forward`), so a cursor a client reads
// forward through a large table holds no more than work_mem.

// cursorNoScroll is CURSOR_OPT_NO_SCROLL.
const cursorNoScroll int32 = 0x04

// implicitScroll returns d with SCROLL added when PostgreSQL would scroll
// a cursor over root without being asked; ok reports that it did.
func implicitScroll(d *pg.DeclareCursorStmt, root exec.Node) (*pg.DeclareCursorStmt, bool) {
	if d.Options&(cursorScroll|cursorNoScroll) != 0 || !backwardScan(root) {
		return d, false
	}
	return &pg.DeclareCursorStmt{Portalname: d.Portalname, Options: d.Options | cursorScroll, Query: d.Query}, true
}

// backwardScan is ExecSupportsBackwardScan over our operators.
func backwardScan(n exec.Node) bool {
	switch x := n.(type) {
	case *exec.Scan, *exec.Values, *exec.FuncScan, *exec.Sort:
		return true
	case *exec.Filter:
		return backwardScan(x.Input)
	case *exec.Project:
		return backwardScan(x.Input)
	case *exec.Limit:
		return backwardScan(x.Input)
	case *exec.Append:
		for _, in := range x.Inputs {
			if !backwardScan(in) {
				return false
			}
		}
		return true
	}
	return false
}

// keepImplicit accounts for a batch an implicitly scrollable cursor is
// about to keep: past its limit it stops scrolling and forgets its rows
// (reported false: do not keep the batch).
func (c *cursor) keepImplicit(bytes int64) bool {
	if c.implicitLimit <= 0 {
		return true
	}
	c.storeBytes += bytes
	if c.storeBytes <= c.implicitLimit {
		return true
	}
	c.opts &^= cursorScroll
	for _, kept := range c.store.batches {
		kept.Release()
	}
	c.store, c.implicitLimit = rowStore{}, 0
	return false
}

// batchBytes is the memory a kept batch holds.
var batchBytes = membudget.BatchBytes
