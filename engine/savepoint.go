package engine

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/storage"
)

// savepoint is one SAVEPOINT of a session's transaction block: its name and
// the mark of the block's writes when it was taken. Owned by the session.
type savepoint struct {
	name string
	mark *storage.Savepoint
	// auth and authTx are the session's users and their changes in the
	// block when the savepoint was set: ROLLBACK TO restores them (role.go).
	auth   authState
	authTx *authTx
}

// execSavepoint runs SAVEPOINT s, RELEASE [SAVEPOINT] s and ROLLBACK TO
// [SAVEPOINT] s as PostgreSQL does: ROLLBACK TO undoes the block's writes
// since s (keeping s) and brings a failed block (25P02) back to normal, so
// psql's ON_ERROR_ROLLBACK works; RELEASE forgets s and the savepoints after
// it, keeping the writes. A name used twice names the newest.
func (s *Session) execSavepoint(t *pg.TransactionStmt) (*Result, error) {
	what := map[pg.TransactionStmtKind]string{
		pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT:   "SAVEPOINT",
		pg.TransactionStmtKind_TRANS_STMT_RELEASE:     "RELEASE SAVEPOINT",
		pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO: "ROLLBACK TO SAVEPOINT",
	}[t.Kind]
	if s.tx == 'I' || s.stx == nil {
		return nil, pgerr.New(pgerr.NoActiveSQLTransaction, "%s can only be used in transaction blocks", what)
	}
	name := t.GetSavepointName()
	if t.Kind == pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT {
		sp := savepoint{name: name, mark: s.stx.Savepoint(), auth: s.auth}
		if s.authTx != nil {
			t := *s.authTx
			sp.authTx = &t
		}
		s.savepoints = append(s.savepoints, sp)
		return &Result{Tag: "SAVEPOINT"}, nil
	}
	i := len(s.savepoints) - 1
	for i >= 0 && s.savepoints[i].name != name {
		i--
	}
	if i < 0 {
		return nil, pgerr.New(pgerr.Code("3B001"), "savepoint \"%s\" does not exist", name)
	}
	if t.Kind == pg.TransactionStmtKind_TRANS_STMT_RELEASE {
		s.savepoints = s.savepoints[:i]
		return &Result{Tag: "RELEASE"}, nil
	}
	s.stx.RollbackTo(s.savepoints[i].mark)
	if sp := s.savepoints[i]; sp.auth != s.auth || sp.authTx != nil || s.authTx != nil {
		s.authTx = nil
		if sp.authTx != nil {
			t := *sp.authTx
			s.authTx = &t
		}
		s.setAuth(sp.auth)
	}
	s.savepoints = s.savepoints[:i+1]
	s.tx = 'T'
	return &Result{Tag: "ROLLBACK"}, nil
}
