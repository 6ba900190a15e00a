package engine

import (
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
)

// CREATE / ALTER SEQUENCE and the session's currval/lastval state. The
// values themselves live in the catalog (catalog/sequence.go).

// seqCatalog is the part of *catalog.Catalog sequences need.
type seqCatalog interface {
	CreateSequence(rel *catalog.Relation) (*catalog.Relation, error)
	AlterSequence(oid uint32, opts *catalog.SeqOptions, restart *int64) error
}

// seqMemo is a session's currval and lastval state. Guarded by mu: a
// cursor's rows may be produced while the session runs another statement.
type seqMemo struct {
	mu      sync.Mutex
	curr    map[uint32]int64
	lastOID uint32
	lastOK  bool
}

func (i sessionInfo) SeqRecord(oid uint32, v int64, last bool) {
	m := &i.s.seq
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.curr == nil {
		m.curr = map[uint32]int64{}
	}
	m.curr[oid] = v
	if last {
		m.lastOID, m.lastOK = oid, true
	}
}

func (i sessionInfo) SeqCurr(oid uint32) (int64, bool) {
	m := &i.s.seq
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.curr[oid]
	return v, ok
}

func (i sessionInfo) SeqLast() (uint32, int64, bool) {
	m := &i.s.seq
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.lastOK {
		return 0, 0, false
	}
	v, ok := m.curr[m.lastOID]
	return m.lastOID, v, ok
}

// SeqAccess allows the sequence functions to the sequence's owner and to
// superusers (no USAGE/SELECT/UPDATE grants on sequences yet): otherwise
// 42501 `permission denied for sequence s`.
func (i sessionInfo) SeqAccess(rel *catalog.Relation) error {
	if c := i.s.privChecker(); c != nil && !c.pc.IsOwner(c.role, rel) {
		return pgerr.New(pgerr.InsufficientPrivilege, "permission denied for sequence %s", rel.Name)
	}
	return nil
}

func (s *Session) seqCatalog() (seqCatalog, error) {
	sc, ok := s.eng.cat.(seqCatalog)
	if !ok {
		return nil, pgerr.Unsupported("sequences are not supported by this catalog")
	}
	return sc, nil
}

// execCreateSequence runs CREATE SEQUENCE [IF NOT EXISTS].
func (s *Session) execCreateSequence(n *pg.CreateSeqStmt) (*Result, error) {
	sc, err := s.seqCatalog()
	if err != nil {
		return nil, err
	}
	if n.Sequence.Relpersistence == "t" {
		return nil, pgerr.Unsupported("temporary sequences are not supported")
	}
	if n.Sequence.Relpersistence == "u" {
		return nil, pgerr.Unsupported("unlogged sequences are not supported")
	}
	spec, err := planner.SeqSpec(n.Options, false)
	if err != nil {
		return nil, err
	}
	opts, err := catalog.ApplySeqSpec(nil, spec)
	if err != nil {
		return nil, err
	}
	rel := &catalog.Relation{Schema: n.Sequence.Schemaname, Name: n.Sequence.Relname, Kind: catalog.KindSequence, Seq: opts, Owner: s.sessionOwner()}
	if _, err := sc.CreateSequence(rel); err != nil {
		return s.maybeSkip(err, n.IfNotExists, "CREATE SEQUENCE")
	}
	return &Result{Tag: "CREATE SEQUENCE"}, nil
}

// execAlterSequence runs ALTER SEQUENCE [IF EXISTS] s options: every
// option of CREATE SEQUENCE and RESTART [WITH n]; the owner must run it.
func (s *Session) execAlterSequence(n *pg.AlterSeqStmt) (*Result, error) {
	sc, err := s.seqCatalog()
	if err != nil {
		return nil, err
	}
	rel, err := s.eng.cat.Resolve(n.Sequence.Schemaname, n.Sequence.Relname, s.set.searchPath())
	if err != nil {
		if n.MissingOk {
			if e, ok := err.(*pgerr.Error); ok && e.Code == pgerr.UndefinedTable {
				return &Result{Tag: "ALTER SEQUENCE", Notices: appendNotice(nil, "relation \""+n.Sequence.Relname+"\" does not exist, skipping")}, nil
			}
		}
		return nil, err
	}
	if rel.Kind != catalog.KindSequence || rel.Seq == nil {
		return nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a sequence", rel.Name)
	}
	if err := s.checkOwner(rel); err != nil {
		return nil, err
	}
	spec, err := planner.SeqSpec(n.Options, true)
	if err != nil {
		return nil, err
	}
	opts, err := catalog.ApplySeqSpec(rel.Seq, spec)
	if err != nil {
		return nil, err
	}
	var restart *int64
	if spec.Restart {
		v := opts.Start
		if spec.RestartWith != nil {
			v = *spec.RestartWith
		}
		restart = &v
	}
	if err := sc.AlterSequence(rel.OID, opts, restart); err != nil {
		return nil, err
	}
	return &Result{Tag: "ALTER SEQUENCE"}, nil
}
