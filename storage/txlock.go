package storage

import (
	"context"
	"errors"
)

// ErrLockBusy is LockNoWait's error when another transaction holds the
// table's write lock.
var ErrLockBusy = errors.New("storage: table locked by another transaction")

// Lock takes t's write lock for tx without writing, as a write would (it
// waits for other writers, with 40P01 on a deadlock), so that tx reads
// every write accepted before it (Tx.Snapshot, including one whose fsync
// is in flight) and no other writer changes t until tx ends. Foreign keys
// use it to read a referencing or referenced table consistently.
func (tx *Tx) Lock(ctx context.Context, t *Table) error { return tx.lock(ctx, t, true) }

// LockNoWait is Lock that does not wait: ErrLockBusy when another
// transaction holds t's write lock (SELECT ... FOR UPDATE NOWAIT).
func (tx *Tx) LockNoWait(ctx context.Context, t *Table) error { return tx.lock(ctx, t, false) }

func (tx *Tx) lock(ctx context.Context, t *Table, wait bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if tx.done {
		return errTxDone
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writable(); err != nil {
		return err
	}
	if !wait && t.owner != nil && t.owner != tx {
		return ErrLockBusy
	}
	if err := t.acquire(ctx, tx); err != nil {
		return err
	}
	if err := t.settle(); err != nil {
		return err
	}
	if tx.find(t) == nil { // registered so that Commit or Rollback unlocks t
		tx.tables = append(tx.tables, &txTable{t: t, st: t.w, gen: t.gen})
	}
	return nil
}
