package catalog

import (
	"fmt"
	"github.com/streamsql/streamsql/types"
	"strconv"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/storage"
)

// MaxColumns is PostgreSQL's limit of columns in a table or view
// (MaxHeapAttributeNumber).
const MaxColumns = 1600

// checkColumnCount refuses a relation of more than MaxColumns columns as
// PostgreSQL does (CREATE TABLE, CREATE TABLE AS, views, sources).
func checkColumnCount(rel *Relation) error {
	if len(rel.Columns) > MaxColumns {
		return pgerr.New(pgerr.TooManyColumns, "tables can have at most %d columns", MaxColumns)
	}
	return nil
}

// checkPseudoTypes refuses record columns in a relation that stores rows
// (a table, source or materialized view); a view's query may return
// records, as in PostgreSQL.
func checkPseudoTypes(rel *Relation) error {
	if rel.Kind == KindView || rel.Kind == KindSink {
		return nil
	}
	for _, col := range rel.Columns {
		t := col.Type
		for t.Kind == types.Array && t.Elem != nil {
			t = *t.Elem
		}
		if t.Kind == types.Record && !t.IsUserDefined() { // a composite type's columns are stored (usertype.go)
			return pgerr.New(pgerr.InvalidTableDefinition, "column \"%s\" has pseudo-type %s", col.Name, col.Type)
		}
	}
	return nil
}

func notice(code pgerr.Code, format string, args ...any) *pgerr.Error {
	e := pgerr.New(code, format, args...)
	e.Severity = pgerr.SevNotice
	return e
}

// commit persists and publishes a new snapshot; the caller holds c.mu.
func (c *Catalog) commit(s *snapshot) error {
	if err := c.save(s); err != nil {
		return err
	}
	c.cur.Store(s)
	return nil
}

// checkCreate validates the target schema of a new relation and that the
// name is free (relations and indexes share a namespace).
func (s *snapshot) checkCreate(schema, name string) error {
	s.ensureTempSchema(schema) // temp.go: a session's first temporary relation
	if s.schemas[schema] == nil {
		return pgerr.New(pgerr.UndefinedSchema, "schema \"%s\" does not exist", schema)
	}
	if schema == "pg_catalog" || schema == "information_schema" {
		return pgerr.New(pgerr.InsufficientPrivilege, "permission denied to create \"%s.%s\"", schema, name).
			WithDetail("System catalog modifications are currently disallowed.")
	}
	if s.rels[schema][name] != nil || s.indexByName(schema, name) != 0 {
		return pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", name)
	}
	if s.userTypeIn(schema, name) != nil { // usertype.go: a table's row type would take the name
		return pgerr.New(codeDuplicateObject, "type \"%s\" already exists", name)
	}
	return nil
}

// CreateTable creates a table (Kind KindTable or 0), a source or a
// materialized view from rel, whose OID is unset: it assigns OIDs, creates
// the stored table (tables only), persists the catalog and returns the
// published relation (a copy of rel; rel itself is not modified). Schema ""
// means public. Primary key columns become NOT NULL. An existing name is
// 42P07 `relation "t" already exists`; with ifNotExists the existing
// relation is returned beside that error (the caller reports it as the
// notice `relation "t" already exists, skipping`).
func (c *Catalog) CreateTable(rel *Relation, ifNotExists bool) (*Relation, error) {
	if err := checkColumnCount(rel); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snap().clone()
	r := *rel
	if r.Kind == 0 {
		r.Kind = KindTable
	}
	if r.Kind != KindTable && r.Kind != KindSource && r.Kind != KindMatView {
		return nil, fmt.Errorf("catalog: CreateTable of relkind %q", r.Kind)
	}
	if err := checkPseudoTypes(&r); err != nil {
		return nil, err
	}
	if r.Schema == "" {
		r.Schema = "public"
	}
	if err := s.checkCreate(r.Schema, r.Name); err != nil {
		if ifNotExists && pgerr.CodeOf(err) == pgerr.DuplicateTable {
			return s.rels[r.Schema][r.Name], err
		}
		return nil, err
	}
	r.Columns = append([]Column(nil), rel.Columns...)
	r.PrimaryKey = append([]int(nil), rel.PrimaryKey...)
	r.Rows = nil
	r.OID = s.allocOID()
	r.RowTypeOID = s.allocOID()
	if len(r.PrimaryKey) > 0 {
		for _, i := range r.PrimaryKey {
			if i < 0 || i >= len(r.Columns) {
				return nil, fmt.Errorf("catalog: primary key column %d out of range", i)
			}
			r.Columns[i].NotNull = true
		}
		if r.PKName == "" {
			r.PKName = r.Name + "_pkey"
		}
		if r.PKName == r.Name+"_pkey" { // an automatic name: pick a free one, as PostgreSQL does
			base := r.PKName
			for n := 1; s.rels[r.Schema][r.PKName] != nil || s.indexByName(r.Schema, r.PKName) != 0 || r.PKName == r.Name; n++ {
				r.PKName = base + strconv.Itoa(n)
			}
		} else if s.rels[r.Schema][r.PKName] != nil || s.indexByName(r.Schema, r.PKName) != 0 || r.PKName == r.Name {
			return nil, pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", r.PKName)
		}
		r.PKIndexOID = s.allocOID()
	} else {
		r.PKName = ""
	}
	if err := s.assignUnique(&r); err != nil {
		return nil, err
	}
	if err := s.assignConstraints(&r); err != nil { // constraints.go
		return nil, err
	}
	if err := c.addSerials(s, &r); err != nil {
		return nil, err
	}
	s.add(&r)
	if r.Kind == KindTable {
		notNull := make([]bool, len(r.Columns))
		for i, col := range r.Columns {
			notNull[i] = col.NotNull
		}
		def := storage.TableDef{OID: r.OID, Columns: r.ColumnTypes(), NotNull: notNull,
			PrimaryKey: r.PrimaryKey, PKName: r.PKName, Unique: r.storageUnique(), TableName: r.Name}
		if _, err := c.store.CreateTable(def); err != nil {
			return nil, fmt.Errorf("catalog: create table %s: %w", r.Name, err)
		}
		if err := c.commit(s); err != nil {
			c.store.DropTable(r.OID) // best effort; an orphan is dropped at the next Open
			return nil, err
		}
		return &r, nil
	}
	if err := c.commit(s); err != nil {
		return nil, err
	}
	return &r, nil
}

// CreateView creates (or with orReplace replaces) a view or materialized
// view; deps are the OIDs of the relations its query reads. A replaced view
// keeps its OID and must keep its columns' names and types in order (new
// columns may be added at the end), as PostgreSQL requires.
func (c *Catalog) CreateView(rel *Relation, deps []uint32, orReplace bool) (*Relation, error) {
	if err := checkColumnCount(rel); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snap().clone()
	r := *rel
	if r.Kind == 0 {
		r.Kind = KindView
	}
	if r.Kind != KindView && r.Kind != KindMatView && r.Kind != KindSink {
		return nil, fmt.Errorf("catalog: CreateView of relkind %q", r.Kind)
	}
	if err := checkPseudoTypes(&r); err != nil {
		return nil, err
	}
	if r.Schema == "" {
		r.Schema = "public"
	}
	r.Columns = append([]Column(nil), rel.Columns...)
	r.PrimaryKey, r.PKName, r.PKIndexOID, r.Unique, r.Rows = nil, "", 0, nil, nil
	r.DependsOn = nil
	seen := map[uint32]bool{}
	for _, d := range deps {
		dep := s.byOID[d]
		if dep == nil && (s.funcs[d] != nil || s.domains[d] != nil || s.utypes[d] != nil) { // a SQL function the view inlined (function.go), a domain it casts to (domain.go)
			if !seen[d] {
				seen[d] = true
				r.DependsOn = append(r.DependsOn, d)
			}
			continue
		}
		if dep == nil {
			return nil, fmt.Errorf("catalog: view %s depends on unknown relation %d", r.Name, d)
		}
		if dep.Kind != KindSystem && !seen[d] {
			seen[d] = true
			r.DependsOn = append(r.DependsOn, d)
		}
	}
	old := s.rels[r.Schema][r.Name]
	if orReplace && old != nil && s.schemas[r.Schema] != nil {
		if old.Kind != r.Kind || old.Kind == KindSystem {
			return nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a view", r.Name)
		}
		if err := checkViewReplace(old, &r); err != nil {
			return nil, err
		}
		if err := s.checkRowFunction(old, r.Columns); err != nil {
			return nil, err
		}
		for _, d := range r.DependsOn {
			if d == old.OID || s.dependsOn(d, old.OID) {
				return nil, pgerr.New(pgerr.InvalidObjectDefinition, "infinite recursion detected in rules for relation \"%s\"", r.Name)
			}
		}
		r.OID, r.RowTypeOID = old.OID, old.RowTypeOID
		r.Owner, r.ACL = old.Owner, old.ACL // as PostgreSQL: the replaced view keeps both
		s.remove(old)
		for k, v := range c.snap().comments { // keep the view's comments
			if k.OID == old.OID {
				s.comments[k] = v
			}
		}
		s.add(&r)
		if err := c.commit(s); err != nil {
			return nil, err
		}
		return &r, nil
	}
	if err := s.checkCreate(r.Schema, r.Name); err != nil {
		return nil, err
	}
	r.OID = s.allocOID()
	if r.Kind != KindSink { // a sink has no row type
		r.RowTypeOID = s.allocOID()
	}
	s.add(&r)
	if err := c.commit(s); err != nil {
		return nil, err
	}
	return &r, nil
}

// dependsOn reports whether relation a reads b, directly or through views.
func (s *snapshot) dependsOn(a, b uint32) bool {
	r := s.byOID[a]
	if r == nil {
		return false
	}
	for _, d := range r.DependsOn {
		if d == b || s.dependsOn(d, b) {
			return true
		}
	}
	return false
}

func checkViewReplace(old, r *Relation) error {
	if len(r.Columns) < len(old.Columns) {
		return pgerr.New(pgerr.InvalidTableDefinition, "cannot drop columns from view")
	}
	for i, oc := range old.Columns {
		nc := r.Columns[i]
		if oc.Name != nc.Name {
			return pgerr.New(pgerr.InvalidTableDefinition, "cannot change name of view column \"%s\" to \"%s\"", oc.Name, nc.Name).
				WithHint("Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead.")
		}
		if !oc.Type.Equal(nc.Type) {
			return pgerr.New(pgerr.InvalidTableDefinition, "cannot change data type of view column \"%s\" from %s to %s", oc.Name, oc.Type, nc.Type)
		}
	}
	return nil
}

// CreateSchema creates a schema. An existing name is 42P06 `schema "s"
// already exists` (with ifNotExists too: the caller reports it as a notice).
func (c *Catalog) CreateSchema(name string, ifNotExists bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snap().clone()
	if s.schemas[name] != nil {
		return pgerr.New(pgerr.DuplicateSchema, "schema \"%s\" already exists", name)
	}
	if len(name) >= 3 && name[:3] == "pg_" {
		return pgerr.New("42939", "unacceptable schema name \"%s\"", name).
			WithDetail("The prefix \"pg_\" is reserved for system schemas.")
	}
	s.schemas[name] = &Schema{OID: s.allocOID(), Name: name}
	s.rels[name] = map[string]*Relation{}
	return c.commit(s)
}

// Comment sets (text != "") or removes (text == "") the comment on a
// relation or schema OID, or on column sub (1-based) of a relation.
func (c *Catalog) Comment(oid uint32, sub int32, text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snap().clone()
	known := s.byOID[oid] != nil || s.indexes[oid] != nil
	for _, sc := range s.schemas {
		known = known || sc.OID == oid
	}
	if !known {
		return fmt.Errorf("catalog: comment on unknown object %d", oid)
	}
	if text == "" {
		delete(s.comments, objKey{oid, sub})
	} else {
		s.comments[objKey{oid, sub}] = text
	}
	return c.commit(s)
}
