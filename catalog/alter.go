package catalog

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/storage"
)

// AlterSpec describes one ALTER TABLE (or ALTER VIEW ... RENAME) for
// Catalog.AlterTable. The planner builds it from the relation it resolved.
type AlterSpec struct {
	// Old is the relation as the statement resolved it. If another DDL has
	// published a newer version since, AlterTable fails with 40001 and
	// nothing changes (the statement can simply be run again).
	Old *Relation
	// New is the relation's new definition: same OID, Kind and RowTypeOID.
	// Its Columns, Name, PrimaryKey/PKName and Unique may differ. A primary
	// key or UNIQUE constraint with no index OID is new: the catalog names
	// it if its name is empty (PostgreSQL's t_pkey, t_a_key) and allocates
	// its index OID.
	New *Relation
	// Convert turns a stored batch in Old's layout into New's; nil when the
	// layout is unchanged (renames, defaults, constraints). Tables only.
	Convert func(arrow.RecordBatch) (arrow.RecordBatch, error)
	// Check, if set, sees each converted chunk of the stored table with
	// its deleted-row bitmap and may refuse the change (new CHECK
	// constraints checked against the rows already there).
	Check func(rec arrow.RecordBatch, deleted []byte) error
	// From gives, for each of New's columns, the index of the Old column it
	// continues, or -1 (added); column comments follow it. nil matches
	// columns by name.
	From []int
	// Views are the OIDs of every view depending on Old (transitively) that
	// the caller checked against New; if the set has changed meanwhile,
	// AlterTable fails with 40001.
	Views []uint32
	// ViewQueries are new query texts (Relation.ViewQuery) for views among
	// Views, by OID: a RENAME rewrites the views that read the relation.
	ViewQueries map[uint32]string
	// DropViews are views to drop with the change (ALTER ... DROP COLUMN
	// ... CASCADE); they must be among Views.
	DropViews []uint32
}

// errConcurrentDDL is returned when the relation changed between planning
// an ALTER and applying it.
func errConcurrentDDL(name string) error {
	return pgerr.New(pgerr.Code("40001"), "could not alter relation \"%s\": it was changed by a concurrent statement", name).
		WithHint("Run the statement again.")
}

// Dependents returns the views that read relation oid, directly or through
// other views, each once, breadth-first and in OID order within a level.
func (c *Catalog) Dependents(oid uint32) []*Relation {
	return c.snap().dependentsOf(oid)
}

func (s *snapshot) dependentsOf(oid uint32) []*Relation {
	users := s.dependents()
	seen := map[uint32]bool{oid: true}
	var out []*Relation
	queue := []uint32{oid}
	for len(queue) > 0 {
		o := queue[0]
		queue = queue[1:]
		for _, d := range users[o] {
			if !seen[d.OID] {
				seen[d.OID] = true
				out = append(out, d)
				queue = append(queue, d.OID)
			}
		}
	}
	return out
}

// AlterTable applies spec: it checks that spec.Old is still the published
// relation, names new keys, rewrites the stored table (tables: storage
// checks NOT NULL and keys on the live rows with PostgreSQL's errors and
// converts the rows), then persists and publishes New (same OID, its view
// dependencies kept) in one catalog write, dropping spec.DropViews.
// Serialized with the other DDL. Returns the published relation.
//
// If the catalog write fails after the table was rewritten, the stored
// table already has the new layout while the catalog keeps the old one;
// the error says so (a full disk is the realistic cause).
func (c *Catalog) AlterTable(ctx context.Context, spec AlterSpec) (*Relation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.snap()
	old := spec.Old
	if old == nil || spec.New == nil {
		return nil, fmt.Errorf("catalog: AlterTable without a relation")
	}
	if cur.byOID[old.OID] != old {
		return nil, errConcurrentDDL(old.Name)
	}
	switch old.Kind {
	case KindTable, KindView:
	case KindMatView, KindSource:
		// Only renamed: the job (by OID) and the definition stay.
		if spec.Convert != nil || !sameColumns(old.Columns, spec.New.Columns) {
			return nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a table or view", old.Name)
		}
	default:
		return nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a table or view", old.Name)
	}
	if err := cur.checkRowFunction(old, spec.New.Columns); err != nil {
		return nil, err
	}
	var deps []uint32
	for _, d := range cur.dependentsOf(old.OID) {
		deps = append(deps, d.OID)
	}
	if !sameSet(deps, spec.Views) {
		return nil, errConcurrentDDL(old.Name)
	}
	s := cur.clone()
	r := *spec.New
	r.OID, r.Kind, r.RowTypeOID, r.Schema = old.OID, old.Kind, old.RowTypeOID, old.Schema
	r.DependsOn, r.ViewQuery, r.Rows = old.DependsOn, old.ViewQuery, nil
	r.Owner, r.ACL = old.Owner, old.ACL
	r.Columns = append([]Column(nil), spec.New.Columns...)
	r.PrimaryKey = append([]int(nil), spec.New.PrimaryKey...)
	r.Unique = append([]UniqueKey(nil), spec.New.Unique...)
	s.remove(old)
	// Views dropped by CASCADE go first, so that their names are free.
	for _, v := range spec.DropViews {
		if dv := s.byOID[v]; dv != nil && (dv.Kind == KindView || dv.Kind == KindMatView) {
			s.remove(dv)
		}
	}
	for oid, text := range spec.ViewQueries {
		dv := s.byOID[oid]
		if dv == nil || (dv.Kind != KindView && dv.Kind != KindMatView) || !slices.Contains(deps, oid) {
			return nil, fmt.Errorf("catalog: AlterTable rewrites relation %d, not a view depending on %s", oid, old.Name)
		}
		nv := *dv
		nv.ViewQuery = text
		s.rels[nv.Schema][nv.Name], s.byOID[oid] = &nv, &nv
	}
	if r.Name != old.Name {
		if err := s.checkCreate(r.Schema, r.Name); err != nil {
			return nil, err
		}
	}
	if err := s.nameKeys(old, &r); err != nil {
		return nil, err
	}
	r.Checks, r.ForeignKeys = slices.Clone(spec.New.Checks), slices.Clone(spec.New.ForeignKeys)
	if err := s.assignConstraints(&r); err != nil { // constraints.go
		return nil, err
	}
	if err := s.checkKeyDrop(old, &r); err != nil {
		return nil, err
	}
	s.remapReferencing(old, &r, spec.From)
	keepComments(cur, s, old, &r, spec.From)
	droppedSeqs := s.remapOwnedSequences(old, &r, spec.From) // sequence.go
	defer func() {
		for _, oid := range droppedSeqs {
			if s.byOID[oid] == nil && c.snap() == s {
				c.dropSeqState(oid)
			}
		}
	}()
	s.add(&r)
	if r.Kind == KindTable {
		tbl := c.store.Table(r.OID)
		if tbl == nil {
			return nil, pgerr.Internal("table %s has no storage", old.Name)
		}
		notNull := make([]bool, len(r.Columns))
		for i, col := range r.Columns {
			notNull[i] = col.NotNull
		}
		def := storage.TableDef{OID: r.OID, Columns: r.ColumnTypes(), NotNull: notNull,
			PrimaryKey: r.PrimaryKey, PKName: r.PKName, Unique: r.storageUnique(), TableName: r.Name}
		var checks []func(arrow.RecordBatch, []byte) error
		if spec.Check != nil {
			checks = append(checks, spec.Check)
		}
		if err := tbl.Alter(ctx, def, spec.Convert, checks...); err != nil {
			return nil, err
		}
		if err := c.commit(s); err != nil {
			return nil, fmt.Errorf("catalog: table %s was rewritten but the catalog could not be saved: %w", old.Name, err)
		}
		return &r, nil
	}
	if err := c.commit(s); err != nil {
		return nil, err
	}
	return &r, nil
}

// nameKeys allocates index OIDs (and default names) for keys new in r.
func (s *snapshot) nameKeys(old, r *Relation) error {
	taken := func(name string, self int) bool {
		if s.rels[r.Schema][name] != nil || s.indexByName(r.Schema, name) != 0 || name == r.Name {
			return true
		}
		if self != -1 && name == r.PKName {
			return true
		}
		for i, u := range r.Unique {
			if i != self && u.Name == name && u.IndexOID != 0 {
				return true
			}
		}
		return false
	}
	if len(r.PrimaryKey) == 0 {
		r.PKName, r.PKIndexOID = "", 0
	} else if r.PKIndexOID == 0 || r.PKIndexOID != old.PKIndexOID {
		for _, i := range r.PrimaryKey {
			r.Columns[i].NotNull = true
		}
		if r.PKName == "" {
			base := truncateName(r.Name, len("_pkey")) + "_pkey"
			r.PKName = base
			for n := 1; taken(r.PKName, -1); n++ {
				r.PKName = base + strconv.Itoa(n)
			}
		} else if taken(r.PKName, -1) {
			return pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", r.PKName)
		}
		r.PKIndexOID = s.allocOID()
	}
	for i := range r.Unique {
		u := &r.Unique[i]
		if u.IndexOID != 0 {
			continue
		}
		if u.Name == "" {
			parts := []string{r.Name}
			for _, c := range u.Columns {
				parts = append(parts, r.Columns[c].Name)
			}
			base := truncateName(strings.Join(parts, "_"), len("_key"))
			u.Name = base + "_key"
			for n := 1; taken(u.Name, i); n++ {
				suffix := "_key" + strconv.Itoa(n)
				u.Name = truncateName(base, len(suffix)) + suffix
			}
		} else if taken(u.Name, i) {
			return pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", u.Name)
		}
		u.IndexOID = s.allocOID()
	}
	return nil
}

// keepComments carries the comments of old (removed from s) over to r: the
// relation's own, and its columns' through from (by name when nil).
func keepComments(cur, s *snapshot, old, r *Relation, from []int) {
	newIndex := func(oldCol int) int { return newColumnIndex(old, r, from, oldCol) }
	for k, v := range cur.comments {
		switch {
		case k.OID == old.OID && k.Sub == 0:
			s.comments[k] = v
		case k.OID == old.OID && k.Sub > 0 && int(k.Sub) <= len(old.Columns):
			if i := newIndex(int(k.Sub) - 1); i >= 0 {
				s.comments[objKey{r.OID, int32(i + 1)}] = v
			}
		}
	}
}

func sameSet(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	x := append([]uint32(nil), a...)
	y := append([]uint32(nil), b...)
	sort.Slice(x, func(i, j int) bool { return x[i] < x[j] })
	sort.Slice(y, func(i, j int) bool { return y[i] < y[j] })
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// Generation identifies the published version of the catalog: values
// compare equal (==) only if no DDL was published in between. Sessions use
// it to re-plan prepared statements after DDL.
func (c *Catalog) Generation() any { return c.snap() }

// sameColumns reports whether two column lists are equal in names and types.
func sameColumns(a, b []Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !a[i].Type.Equal(b[i].Type) {
			return false
		}
	}
	return true
}
