package engine

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
)

// Temporary relations (catalog/temp.go): CREATE TEMP TABLE, VIEW and
// SEQUENCE put them in the session's schema pg_temp_<pid>, which the
// session searches first once it exists and drops, with everything in it
// and whatever depends on it, when it ends (Close) or at DISCARD TEMP /
// DISCARD ALL. Only the session's own goroutine touches these fields.

// tempSchemaName is the name of the session's temporary schema.
func (s *Session) tempSchemaName() string {
	return fmt.Sprintf("%s%d", catalog.TempSchemaPrefix, s.pid)
}

// noteTemp records that the session is creating a relation in schema: if
// it is the session's temporary schema, search_path includes it from now
// on (a failed create leaves it unused: missing schemas are skipped).
func (s *Session) noteTemp(schema string) {
	if schema == s.tempSchemaName() {
		s.set.tempSchema = schema
	}
}

// tempCreated records a temporary relation created inside a transaction
// block, which the block's rollback drops again.
func (s *Session) tempCreated(rel *catalog.Relation) {
	if rel != nil && rel.IsTemp() && s.tx != 'I' {
		s.txTemps = append(s.txTemps, rel)
	}
}

// endTempTx ends the block for its temporary relations: a rollback drops
// the ones it created (newest first, with what depends on them), as
// PostgreSQL's transactional DDL would. Other DDL is not transactional
// here (docs/transactions.md); temporary relations can be undone because
// no other session sees them. ROLLBACK TO a savepoint keeps them.
func (s *Session) endTempTx(commit bool) {
	created := s.txTemps
	s.txTemps = nil
	if commit || len(created) == 0 {
		return
	}
	defer s.eng.stopDroppedJobs()
	for i := len(created) - 1; i >= 0; i-- {
		r := created[i]
		cur := s.eng.cat.Relation(r.OID)
		if cur == nil || cur.Schema != r.Schema {
			continue // dropped already
		}
		if _, err := s.eng.cat.Drop(cur.Kind, cur.Schema, cur.Name, true, true, nil); err != nil {
			s.eng.cfg.Logf("session %d: rollback: dropping temporary %s: %v", s.pid, r.Name, err)
		}
	}
}

// dropTemp drops the session's temporary schema and everything in it.
func (s *Session) dropTemp() error {
	if s.set.tempSchema == "" {
		return nil
	}
	defer s.eng.stopDroppedJobs()
	if _, err := s.eng.cat.DropSchema(s.set.tempSchema, true, true); err != nil {
		return err
	}
	s.set.tempSchema = ""
	return nil
}

// checkOnCommit checks CREATE TABLE's ON COMMIT clause: only temporary
// tables may have one (42P16, as PostgreSQL), and only PRESERVE ROWS, the
// default, is implemented.
func checkOnCommit(rv *pg.RangeVar, oc pg.OnCommitAction) error {
	switch oc {
	case pg.OnCommitAction_ONCOMMIT_NOOP, pg.OnCommitAction_ON_COMMIT_ACTION_UNDEFINED:
		return nil
	}
	if rv.Relpersistence != "t" {
		return pgerr.New(pgerr.InvalidTableDefinition, "ON COMMIT can only be used on temporary tables")
	}
	switch oc {
	case pg.OnCommitAction_ONCOMMIT_DELETE_ROWS:
		return pgerr.Unsupported("ON COMMIT DELETE ROWS is not supported")
	case pg.OnCommitAction_ONCOMMIT_DROP:
		return pgerr.Unsupported("ON COMMIT DROP is not supported")
	}
	return nil
}
