package catalog

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/streamsql/streamsql/pgerr"
)

// Table CHECK constraints and foreign keys (docs/contributing/constraints.md).
//
// A table keeps its CHECK constraints (Relation.Checks) as SQL text over its
// columns and its foreign keys (Relation.ForeignKeys) as column indexes
// into itself and into the referenced table, by OID. Both are part of the
// immutable Relation published in a snapshot: the planner binds the
// checks into each INSERT/UPDATE/COPY plan, and the engine enforces the
// foreign keys around each write (engine/fk.go). The catalog names
// unnamed constraints as PostgreSQL does, allocates their OIDs (shared
// with pg_class's OID space, as key constraints do) and refuses to drop a
// table that another table's foreign key references (unless CASCADE, which
// drops the foreign key).

// CheckConstraint is one CHECK constraint of a table.
type CheckConstraint struct {
	Name string `json:"name"`
	// Expr is the condition as SQL text over the table's columns.
	Expr string `json:"expr"`
	OID  uint32 `json:"oid"`
	// Column marks a column constraint (named table_column_check when
	// unnamed; Column is then the column's name): "" for a table one.
	Column string `json:"column,omitempty"`
	// NotValid marks a constraint added NOT VALID: enforced on new rows,
	// not yet checked against the rows that were there (VALIDATE
	// CONSTRAINT checks them and clears it).
	NotValid bool `json:"not_valid,omitempty"`
}

// Foreign key actions, as pg_constraint.confupdtype/confdeltype spell them.
const (
	FKNoAction   byte = 'a'
	FKRestrict   byte = 'r'
	FKCascade    byte = 'c'
	FKSetNull    byte = 'n'
	FKSetDefault byte = 'd'
)

// ForeignKey is one FOREIGN KEY constraint of a table: Columns (indexes
// into the table's columns) reference RefColumns of table RefTable (by
// OID; 0 while the planner builds a table that references itself, which
// CreateTable replaces by the new table's OID). RefColumns are exactly
// the columns of the referenced table's primary key or of one of its
// UNIQUE constraints, in the referencing columns' order.
type ForeignKey struct {
	Name       string `json:"name"`
	OID        uint32 `json:"oid"`
	Columns    []int  `json:"columns"`
	RefTable   uint32 `json:"ref_table"`
	RefColumns []int  `json:"ref_columns"`
	OnDelete   byte   `json:"on_delete"`
	OnUpdate   byte   `json:"on_update"`
	// MatchFull is MATCH FULL: a key with some but not all columns NULL
	// is refused (MATCH SIMPLE, the default, lets any NULL pass).
	MatchFull bool `json:"match_full,omitempty"`
	NotValid  bool `json:"not_valid,omitempty"`
}

// FKActionName is an action as SQL spells it ("NO ACTION", "CASCADE", ...).
func FKActionName(a byte) string {
	switch a {
	case FKRestrict:
		return "RESTRICT"
	case FKCascade:
		return "CASCADE"
	case FKSetNull:
		return "SET NULL"
	case FKSetDefault:
		return "SET DEFAULT"
	}
	return "NO ACTION"
}

// constraintTaken reports whether r already has a constraint named name
// (keys, checks, foreign keys).
func (r *Relation) constraintTaken(name string) bool {
	if name == r.PKName && len(r.PrimaryKey) > 0 {
		return true
	}
	for _, u := range r.Unique {
		if u.Name == name {
			return true
		}
	}
	for _, c := range r.Checks {
		if c.Name == name {
			return true
		}
	}
	for _, f := range r.ForeignKeys {
		if f.Name == name {
			return true
		}
	}
	return false
}

// FreeConstraintName is PostgreSQL's name for a new constraint of r:
// parts joined by "_" (cut to fit 63 bytes), then "_" and suffix, then a
// number from 1 until no constraint of r has the name.
func (r *Relation) FreeConstraintName(parts []string, suffix string) string {
	base := truncateName(strings.Join(parts, "_"), len(suffix)+1)
	name := base + "_" + suffix
	for n := 1; r.constraintTaken(name); n++ {
		sfx := "_" + suffix + strconv.Itoa(n)
		name = truncateName(base, len(sfx)) + sfx
	}
	return name
}

// assignConstraints names r's unnamed CHECK constraints and foreign keys
// as PostgreSQL does (t_a_check / t_check, t_a_b_fkey, then a number until
// free), refuses a given name the table already uses (42710), resolves a
// self-reference (RefTable 0) and allocates the OIDs of the new ones (OID
// 0). Constraints already with an OID are kept as they are. Runs inside
// CreateTable and AlterTable on the snapshot being built.
func (s *snapshot) assignConstraints(r *Relation) error {
	checks, fks := r.Checks, r.ForeignKeys
	r.Checks, r.ForeignKeys = nil, nil
	for _, c := range checks {
		if c.OID != 0 {
			r.Checks = append(r.Checks, c)
		}
	}
	for _, f := range fks {
		if f.OID != 0 {
			r.ForeignKeys = append(r.ForeignKeys, f)
		}
	}
	pick := func(given string, parts []string, suffix string) (string, error) {
		if given != "" {
			if r.constraintTaken(given) {
				return "", pgerr.New(codeDuplicateObject, "constraint \"%s\" for relation \"%s\" already exists", given, r.Name)
			}
			return given, nil
		}
		return r.FreeConstraintName(parts, suffix), nil
	}
	for _, c := range checks {
		if c.OID != 0 {
			continue
		}
		parts := []string{r.Name}
		if c.Column != "" {
			parts = append(parts, c.Column)
		}
		name, err := pick(c.Name, parts, "check")
		if err != nil {
			return err
		}
		c.Name, c.OID = name, s.allocOID()
		r.Checks = append(r.Checks, c)
	}
	for _, f := range fks {
		if f.OID != 0 {
			continue
		}
		parts := []string{r.Name}
		for _, i := range f.Columns {
			if i < 0 || i >= len(r.Columns) {
				return fmt.Errorf("catalog: foreign key column %d out of range", i)
			}
			parts = append(parts, r.Columns[i].Name)
		}
		name, err := pick(f.Name, parts, "fkey")
		if err != nil {
			return err
		}
		f.Name, f.OID = name, s.allocOID()
		f.Columns, f.RefColumns = append([]int(nil), f.Columns...), append([]int(nil), f.RefColumns...)
		if f.RefTable == 0 {
			f.RefTable = r.OID
		}
		r.ForeignKeys = append(r.ForeignKeys, f)
	}
	return nil
}

// ReferencingKey is a foreign key of Table that references another table.
type ReferencingKey struct {
	Table *Relation
	Key   ForeignKey
}

// Referencing lists the foreign keys of every table that reference
// relation oid (its own included), in table OID then creation order.
// Cheap (every write asks): the published snapshot's index, built once.
func (c *Catalog) Referencing(oid uint32) []ReferencingKey {
	s := c.snap()
	if s.fks == nil {
		return s.referencing(oid)
	}
	s.fks.once.Do(func() {
		s.fks.byRef = map[uint32][]ReferencingKey{}
		for _, r := range s.byOID {
			for _, f := range r.ForeignKeys {
				s.fks.byRef[f.RefTable] = nil
			}
		}
		for ref := range s.fks.byRef {
			s.fks.byRef[ref] = s.referencing(ref)
		}
	})
	return s.fks.byRef[oid]
}

// fkIndex is a published snapshot's foreign keys by referenced table,
// built at the first Referencing call (the snapshot never changes after).
type fkIndex struct {
	once  sync.Once
	byRef map[uint32][]ReferencingKey
}

func (s *snapshot) referencing(oid uint32) []ReferencingKey {
	var out []ReferencingKey
	for _, r := range s.byOID {
		for _, f := range r.ForeignKeys {
			if f.RefTable == oid {
				out = append(out, ReferencingKey{Table: r, Key: f})
			}
		}
	}
	if len(out) > 1 {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Table.OID < out[j].Table.OID })
	}
	return out
}

// fkDependents finds the foreign keys of tables not in gone that reference
// a table in gone: lines for the 2BP01 detail, the notices of a cascade,
// and the referencing tables with those keys removed (what DROP ...
// CASCADE publishes).
func (s *snapshot) fkDependents(gone map[uint32]bool, searchPath []string) (lines, notices []string, changed []*Relation) {
	for _, r := range s.sortedRelations() {
		if gone[r.OID] || len(r.ForeignKeys) == 0 {
			continue
		}
		var kept []ForeignKey
		for _, f := range r.ForeignKeys {
			if gone[f.RefTable] {
				lines = append(lines, fmt.Sprintf("constraint %s on table %s depends on table %s", f.Name, s.displayName(r.OID, searchPath), s.displayName(f.RefTable, searchPath)))
				notices = append(notices, fmt.Sprintf("drop cascades to constraint %s on table %s", f.Name, s.displayName(r.OID, searchPath)))
				continue
			}
			kept = append(kept, f)
		}
		if len(kept) != len(r.ForeignKeys) {
			nr := *r
			nr.ForeignKeys = kept
			changed = append(changed, &nr)
		}
	}
	return lines, notices, changed
}

// checkKeyDrop refuses to drop a key constraint of old that another
// table's foreign key references, as PostgreSQL does (2BP01), when newRel
// no longer has a key over exactly those columns.
func (s *snapshot) checkKeyDrop(old, newRel *Relation) error {
	for _, rk := range s.referencing(old.OID) {
		if rk.Table.OID == old.OID || newRel.hasKeyOver(rk.Key.RefColumns) {
			continue
		}
		name := ""
		for _, k := range old.keyIndexes() {
			if sameSet(intsToOIDs(k.cols), intsToOIDs(rk.Key.RefColumns)) {
				name = k.name
			}
		}
		return pgerr.New(pgerr.DependentObjectsStillExist, "cannot drop constraint %s on table %s because other objects depend on it", name, old.Name).
			WithDetail("constraint %s on table %s depends on index %s", rk.Key.Name, rk.Table.Name, name).
			WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
	}
	return nil
}

// remapReferencing renumbers the referenced columns of other tables'
// foreign keys that reference old, now r (from: r's column -> old's
// column, nil meaning by name). Keys over dropped columns were refused
// by checkKeyDrop.
func (s *snapshot) remapReferencing(old, r *Relation, from []int) {
	newIndex := func(oldCol int) int { return newColumnIndex(old, r, from, oldCol) }
	for _, rk := range s.referencing(old.OID) {
		if rk.Table.OID == old.OID {
			continue
		}
		t := s.byOID[rk.Table.OID]
		nt := *t
		nt.ForeignKeys = append([]ForeignKey(nil), t.ForeignKeys...)
		changed := false
		for k := range nt.ForeignKeys {
			f := &nt.ForeignKeys[k]
			if f.RefTable != old.OID {
				continue
			}
			cols := make([]int, len(f.RefColumns))
			for j, c := range f.RefColumns {
				cols[j] = newIndex(c)
				changed = changed || cols[j] != c
			}
			f.RefColumns = cols
		}
		if changed {
			s.add(&nt)
		}
	}
}

// newColumnIndex is the index in r of old's column oldCol after an ALTER
// (from: r's column -> old's column; nil matches by name), or -1.
func newColumnIndex(old, r *Relation, from []int, oldCol int) int {
	if from == nil {
		return r.ColumnIndex(old.Columns[oldCol].Name)
	}
	for i, f := range from {
		if f == oldCol {
			return i
		}
	}
	return -1
}

// hasKeyOver reports whether r has a primary key or UNIQUE constraint over
// exactly the columns cols (in any order).
func (r *Relation) hasKeyOver(cols []int) bool {
	if len(r.PrimaryKey) > 0 && sameSet(intsToOIDs(r.PrimaryKey), intsToOIDs(cols)) {
		return true
	}
	for _, u := range r.Unique {
		if sameSet(intsToOIDs(u.Columns), intsToOIDs(cols)) {
			return true
		}
	}
	return false
}

func intsToOIDs(a []int) []uint32 {
	out := make([]uint32, len(a))
	for i, v := range a {
		out[i] = uint32(v)
	}
	return out
}
