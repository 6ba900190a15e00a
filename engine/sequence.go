package engine

import (
	"context"
	"fmt"
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
)

// CREATE / ALTER SEQUENCE and the session's currval/lastval state. The
// values themselves live in the catalog (catalog/sequence.go).

// seqCatalog is the part of *catalog.Catalog sequences need.
type seqCatalog interface {
	CreateSequence(rel *catalog.Relation) (*catalog.Relation, error)
	AlterSequence(oid uint32, opts *catalog.SeqOptions, restart *int64, params bool) error
}

// seqMemo is a session's state of the sequences it used (currval, its
// preallocated CACHE values) and lastval's sequence. Guarded by mu: a
// cursor's rows may be produced while the session runs another statement.
// Dropped with the session, and with it the values it had preallocated.
type seqMemo struct {
	mu      sync.Mutex
	local   map[uint32]*catalog.SeqLocal
	lastOID uint32
	lastOK  bool
}

// The sequence functions find the session's state and check its
// privileges through this interface: a session that did not implement it
// would run them unchecked.
var _ catalog.SeqSession = sessionInfo{}

// SeqLocal is catalog.SeqSession.SeqLocal.
func (i sessionInfo) SeqLocal(oid uint32, nextval bool, fn func(*catalog.SeqLocal) error) error {
	m := &i.s.seq
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.local[oid]
	if l == nil {
		l = &catalog.SeqLocal{}
		if m.local == nil {
			m.local = map[uint32]*catalog.SeqLocal{}
		}
		m.local[oid] = l
	}
	if err := fn(l); err != nil {
		return err
	}
	if nextval {
		m.lastOID, m.lastOK = oid, true
	}
	return nil
}

// SeqLast is catalog.SeqSession.SeqLast.
func (i sessionInfo) SeqLast() (uint32, bool) {
	m := &i.s.seq
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lastOID, m.lastOK
}

// discard forgets every sequence's state (DISCARD SEQUENCES / ALL).
func (m *seqMemo) discard() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.local, m.lastOID, m.lastOK = nil, 0, false
}

// SeqAccess is catalog.SeqSession.SeqAccess: superusers and the owner
// hold every privilege, others what the sequence's ACL gives them. On a
// cluster worker nextval and setval (the calls needing UPDATE) are
// refused: a sequence's values are the coordinator's (cluster_tables.go).
func (i sessionInfo) SeqAccess(rel *catalog.Relation, need catalog.Privilege) error {
	if c := i.s.eng.cfg.Cluster; c != nil && !c.IsCoordinator() && need&catalog.PrivUpdate != 0 && !rel.IsTemp() {
		return onCoordinator(fmt.Sprintf("nextval and setval of sequence \"%s\"", rel.Name))
	}
	if c := i.s.privChecker(); c != nil && !c.pc.HasAnyPrivilege(c.role, rel, need) {
		return catalog.PermissionDenied(rel)
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
func (s *Session) execCreateSequence(ctx context.Context, stmt sql.Statement, n *pg.CreateSeqStmt) (*Result, error) {
	sc, err := s.seqCatalog()
	if err != nil {
		return nil, err
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
	schema, err := planner.CreateSchema(s.env(context.Background(), nil), n.Sequence)
	if err != nil {
		return nil, err
	}
	rel := &catalog.Relation{Schema: schema, Name: n.Sequence.Relname, Kind: catalog.KindSequence, Seq: opts, Owner: s.sessionOwner()}
	s.noteTemp(schema)
	if spec.OwnedBy != nil {
		if n.IfNotExists { // an existing sequence is skipped before OWNED BY is looked at
			if old, err := s.eng.cat.Resolve(rel.Schema, rel.Name, nil); err == nil && old != nil {
				return s.maybeSkip(pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", rel.Name), true, "CREATE SEQUENCE")
			}
		}
		if opts.OwnedBy, opts.OwnedByCol, err = s.seqOwnedBy(rel, spec.OwnedBy); err != nil {
			return nil, err
		}
	}
	created, err := sc.CreateSequence(rel)
	if err != nil {
		return s.maybeSkip(err, n.IfNotExists, "CREATE SEQUENCE")
	}
	s.tempCreated(created)
	if err := s.clusterCreated(ctx, stmt, created, nil); err != nil { // cluster_run.go
		s.dropQuietly(created)
		return nil, err
	}
	return &Result{Tag: "CREATE SEQUENCE"}, nil
}

// seqOwnedBy resolves OWNED BY names for sequence seq (being created or
// altered) to the table and 1-based column that will own it (0, 0 for
// NONE), checked as PostgreSQL's process_owned_by does: a table, view or
// source of the same owner and schema; an identity column's sequence
// keeps its column.
func (s *Session) seqOwnedBy(seq *catalog.Relation, names []string) (uint32, int16, error) {
	if seq.OID != 0 && seq.Seq != nil && seq.Seq.OwnedBy != 0 {
		if t := s.eng.cat.Relation(seq.Seq.OwnedBy); t != nil {
			if i := int(seq.Seq.OwnedByCol) - 1; i >= 0 && i < len(t.Columns) && t.Columns[i].Identity != 0 {
				return 0, 0, pgerr.New(pgerr.FeatureNotSupported, "cannot change ownership of identity sequence").
					WithDetail("Sequence \"%s\" is linked to table \"%s\".", seq.Name, t.Name)
			}
		}
	}
	if len(names) == 1 && names[0] == "none" {
		return 0, 0, nil
	}
	if len(names) < 2 || len(names) > 3 {
		return 0, 0, pgerr.New(pgerr.SyntaxError, "invalid OWNED BY option").WithHint("Specify OWNED BY table.column or OWNED BY NONE.")
	}
	schema, table, col := "", names[len(names)-2], names[len(names)-1]
	if len(names) == 3 {
		schema = names[0]
	}
	t, err := s.eng.cat.Resolve(schema, table, s.set.searchPath())
	if err != nil {
		return 0, 0, err
	}
	switch t.Kind {
	case catalog.KindTable, catalog.KindView, catalog.KindSource:
	default:
		what := map[catalog.RelKind]string{catalog.KindMatView: "materialized views", catalog.KindSequence: "sequences", catalog.KindSystem: "views"}[t.Kind]
		return 0, 0, pgerr.New(pgerr.WrongObjectType, "sequence cannot be owned by relation \"%s\"", t.Name).
			WithDetail("This operation is not supported for %s.", what)
	}
	if t.OwnerOID() != seq.OwnerOID() {
		return 0, 0, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "sequence must have same owner as table it is linked to")
	}
	if t.Schema != seq.Schema {
		return 0, 0, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "sequence must be in same schema as table it is linked to")
	}
	i := t.ColumnIndex(col)
	if i < 0 {
		return 0, 0, pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", col, t.Name)
	}
	return t.OID, int16(i + 1), nil
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
	if spec.OwnedBy != nil {
		if opts.OwnedBy, opts.OwnedByCol, err = s.seqOwnedBy(rel, spec.OwnedBy); err != nil {
			return nil, err
		}
	}
	var restart *int64
	if spec.Restart {
		v := opts.Start
		if spec.RestartWith != nil {
			v = *spec.RestartWith
		}
		restart = &v
	}
	if err := sc.AlterSequence(rel.OID, opts, restart, spec.Params()); err != nil {
		return nil, err
	}
	return &Result{Tag: "ALTER SEQUENCE"}, nil
}
