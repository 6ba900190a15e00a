package storage

// Savepoint marks a point in a transaction's writes (SAVEPOINT s): the
// writes staged after it can be undone with RollbackTo, leaving the earlier
// ones. It belongs to the Tx that made it and, like the Tx, is used by one
// goroutine (the session's).
type Savepoint struct {
	tx     *Tx
	tables int         // len(tx.tables) when taken
	marks  []tableMark // per table written before it
}

// tableMark is one table's staged writes at a savepoint.
type tableMark struct {
	st     *state
	frames int
	undo   int
	deltas int
}

// Savepoint marks the transaction's writes so far.
func (tx *Tx) Savepoint() *Savepoint {
	sp := &Savepoint{tx: tx, tables: len(tx.tables)}
	for _, tt := range tx.tables {
		sp.marks = append(sp.marks, tableMark{st: tt.st, frames: len(tt.frames), undo: len(tt.undo), deltas: len(tt.deltas)})
	}
	return sp
}

// RollbackTo undoes the writes staged since sp (ROLLBACK TO SAVEPOINT):
// their keys leave the tables' indexes and the transaction's view of each
// table is what it was at sp. The tables stay locked by the transaction
// until it ends, as PostgreSQL keeps the locks. A savepoint of another or
// finished transaction is ignored.
func (tx *Tx) RollbackTo(sp *Savepoint) {
	if sp == nil || sp.tx != tx || tx.done {
		return
	}
	for i, tt := range tx.tables {
		var m tableMark // a table first written after sp: back to no writes
		if i < sp.tables {
			m = sp.marks[i]
		}
		t := tt.t
		t.mu.Lock()
		if tt.gen == t.gen { // else a settled write failure rebuilt the indexes (failure.go)
			for k := len(tt.undo) - 1; k >= m.undo; k-- {
				tt.undo[k]()
			}
		}
		if i >= sp.tables {
			m.st = t.w // the table is locked by tx: its committed state is the base
		}
		tt.st = m.st
		tt.frames, tt.undo, tt.deltas = tt.frames[:m.frames], tt.undo[:m.undo], tt.deltas[:m.deltas]
		t.mu.Unlock()
	}
}
