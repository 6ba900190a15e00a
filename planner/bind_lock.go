package planner

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
)

// SELECT ... FOR UPDATE / FOR NO KEY UPDATE / FOR SHARE / FOR KEY SHARE
// [OF t, ...] [NOWAIT] (docs/transactions.md, "Row locks"). The engine
// has no row locks: a locking clause takes the write lock of each table
// it covers, the one a transaction's first write to the table takes (it
// is held to the end of the transaction block, or of the statement
// outside one), before the statement reads. So no other writer changes
// the rows read until the block ends, as PostgreSQL's row locks promise,
// and more: the whole table is locked, for every strength, so two FOR
// SHARE readers also wait for each other. NOWAIT fails at once (55P03)
// instead of waiting; SKIP LOCKED is refused by name (0A000), since
// skipping a whole locked table would skip rows no one locked.
//
// Which tables: those a clause's OF list names, else every table of the
// level's FROM, a view's tables included. PostgreSQL's refusals are
// kept: with DISTINCT, GROUP BY, HAVING, aggregates, window functions
// or set-returning functions in the select list (0A000), a materialized
// view or another relation that holds no rows of its own (42809), and a
// name that is not in FROM (42P01). A subquery in FROM locks its tables,
// as a view does; a function in FROM, and a subquery or view that reads
// something other than tables, are refused by name (0A000); a WITH query
// is not locked by a clause without OF (PostgreSQL's rule).

// RowLock is one table a SELECT's locking clause locks (Query.Locks).
type RowLock struct {
	OID    uint32
	Name   string // the table's name, for NOWAIT's error
	NoWait bool
}

// lockItem is one FROM item of a level, recorded for a locking clause.
type lockItem struct {
	alias string
	rel   *catalog.Relation // nil: a subquery, function, WITH query or VALUES
	what  string            // what the item is, when rel is nil
	// scans are the tables whose rows the item reads (a table's own scan,
	// a view's); ok is false when it also reads rows of something else
	scans []*lScan
	ok    bool
}

// noteLockItem records a FROM item of l for its locking clause.
func (b *binder) noteLockItem(l *level, it lockItem) {
	if l.locking {
		l.lockItems = append(l.lockItems, it)
	}
}

// tableScans lists the lScans under plan, and whether every leaf under
// it is one (a view over tables only).
func tableScans(plan lnode) ([]*lScan, bool) {
	if s, ok := plan.(*lScan); ok {
		return []*lScan{s}, true
	}
	kids := nodeChildren(plan)
	if len(kids) == 0 {
		return nil, false
	}
	var out []*lScan
	all := true
	for _, k := range kids {
		s, ok := tableScans(k)
		out, all = append(out, s...), all && ok
	}
	return out, all
}

// lockClauses checks the locking clauses of SELECT s, bound as level l,
// and adds the tables they lock to b.locks.
func (b *binder) lockClauses(s *pg.SelectStmt, l *level) error {
	if !b.lockable {
		return pgerr.Unsupported("SELECT FOR UPDATE/SHARE is supported in queries and cursors only, not in a view, a function or a data-modifying statement")
	}
	for _, n := range s.LockingClause {
		lc := n.GetLockingClause()
		if lc == nil {
			continue
		}
		str := lockStrength(lc.Strength)
		refuse := func(what string) error {
			return b.newErr(pgerr.FeatureNotSupported, -1, "%s is not allowed with %s", str, what)
		}
		switch {
		case len(s.DistinctClause) > 0:
			return refuse("DISTINCT clause")
		case len(s.GroupClause) > 0:
			return refuse("GROUP BY clause")
		case s.HavingClause != nil:
			return refuse("HAVING clause")
		case len(l.aggs) > 0:
			return refuse("aggregate functions")
		case len(l.wins) > 0:
			return refuse("window functions")
		case len(l.srfs) > 0:
			return refuse("set-returning functions in the target list")
		}
		if lc.WaitPolicy == pg.LockWaitPolicy_LockWaitSkip {
			return pgerr.New(pgerr.FeatureNotSupported, "SKIP LOCKED is not supported").
				WithHint("Row locks are table locks here: skipping a locked table would skip rows no one locked. Use NOWAIT, or wait.")
		}
		noWait := lc.WaitPolicy == pg.LockWaitPolicy_LockWaitError
		items := l.lockItems
		if len(lc.LockedRels) > 0 {
			items = nil
			for _, r := range lc.LockedRels {
				rv := r.GetRangeVar()
				if rv == nil {
					continue
				}
				i := slices.IndexFunc(l.lockItems, func(it lockItem) bool { return it.alias == rv.Relname })
				if i < 0 {
					return b.newErr(pgerr.UndefinedTable, rv.Location, "relation \"%s\" in %s clause not found in FROM clause", rv.Relname, str)
				}
				items = append(items, l.lockItems[i])
			}
		}
		for _, it := range items {
			if err := b.lockItem(it, str, noWait, len(lc.LockedRels) > 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// lockItem adds the tables of FROM item it to b.locks (named: the clause
// names it in OF).
func (b *binder) lockItem(it lockItem, str string, noWait, named bool) error {
	switch {
	case it.rel == nil && it.what == "WITH query" && !named:
		return nil // PostgreSQL does not lock a WITH query's rows for a clause without OF
	case it.rel == nil && it.what == "subquery" && it.ok:
		return b.lockScans(it.scans, noWait) // its tables, as PostgreSQL locks them
	case it.rel == nil:
		return pgerr.New(pgerr.FeatureNotSupported, "%s of a %s in FROM is not supported", str, it.what).
			WithHint("Name the tables to lock: %s OF t.", str)
	}
	switch it.rel.Kind {
	case catalog.KindTable, catalog.KindView:
	case catalog.KindMatView:
		return b.newErr(pgerr.WrongObjectType, -1, "cannot lock rows in materialized view \"%s\"", it.rel.Name)
	default:
		return b.newErr(pgerr.WrongObjectType, -1, "cannot lock rows in relation \"%s\"", it.rel.Name)
	}
	if !it.ok && it.rel.Kind == catalog.KindView {
		return b.newErr(pgerr.FeatureNotSupported, -1, "%s of view \"%s\" is not supported: it reads rows that are not a table's", str, it.rel.Name)
	}
	if !it.ok { // a cluster's table whose rows another node stores (remote_table.go)
		return b.newErr(pgerr.FeatureNotSupported, -1, "%s of table \"%s\" is not supported: its rows are not stored on this node", str, it.rel.Name)
	}
	return b.lockScans(it.scans, noWait)
}

// lockScans adds the tables of scans to b.locks.
func (b *binder) lockScans(scans []*lScan, noWait bool) error {
	for _, sc := range scans {
		if sc.table == nil {
			return b.newErr(pgerr.FeatureNotSupported, -1, "cannot lock rows of \"%s\": it stores no rows here", sc.rel.Name)
		}
		if err := b.checkAccess(sc.rel, catalog.PrivUpdate); err != nil {
			return err
		}
		i := slices.IndexFunc(b.locks, func(r RowLock) bool { return r.OID == sc.rel.OID })
		if i < 0 {
			b.locks = append(b.locks, RowLock{OID: sc.rel.OID, Name: sc.rel.Name, NoWait: noWait})
		} else if noWait {
			b.locks[i].NoWait = true
		}
	}
	return nil
}
