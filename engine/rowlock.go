package engine

import (
	"context"
	"errors"
	"slices"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/storage"
)

// takeRowLocks takes the write locks of the tables q's FOR UPDATE/SHARE
// clauses lock (planner/bind_lock.go, docs/transactions.md "Row locks"),
// in the order of their OIDs: for the session's transaction block, which
// holds them to its end, or, outside a block, for a transaction of the
// statement's own, returned (nil: none) for the caller to roll back once
// the statement's rows are read. The statement reads after this, so it
// sees every write committed before the locks were taken.
func (s *Session) takeRowLocks(ctx context.Context, q *planner.Query) (*storage.Tx, error) {
	if len(q.Locks) == 0 {
		return nil, nil
	}
	tx, own := s.stx, (*storage.Tx)(nil)
	if tx == nil {
		own = s.eng.store.Begin()
		tx = own
	}
	locks := slices.Clone(q.Locks)
	slices.SortFunc(locks, func(a, b planner.RowLock) int { return int(a.OID) - int(b.OID) })
	for _, l := range locks {
		t := s.eng.cat.Table(l.OID)
		var err error = pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", l.Name)
		if t != nil && l.NoWait {
			err = tx.LockNoWait(ctx, t)
		} else if t != nil {
			err = tx.Lock(ctx, t)
		}
		if errors.Is(err, storage.ErrLockBusy) {
			err = pgerr.New(pgerr.LockNotAvailable, "could not obtain lock on row in relation \"%s\"", l.Name)
		}
		if err != nil {
			if own != nil {
				own.Rollback()
			}
			return nil, err
		}
	}
	return own, nil
}

// refuseRowLocks refuses FOR UPDATE/SHARE in a statement that runs a
// query without taking its locks (what names it).
func refuseRowLocks(q *planner.Query, what string) error {
	if len(q.Locks) > 0 {
		return pgerr.Unsupported("SELECT FOR UPDATE/SHARE in %s is not supported", what)
	}
	return nil
}
