package catalog

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/storage"
)

// UniqueKey is one UNIQUE constraint of a table and its index: a
// constraint named Name over columns Columns (indexes into Relation.Columns,
// in key order), shown in pg_class as an index of OID IndexOID (also the
// pg_constraint row's OID).
type UniqueKey struct {
	Name     string `json:"name"`
	Columns  []int  `json:"columns"`
	IndexOID uint32 `json:"index_oid"`
}

// keyIndex is one index of a table as pg_catalog shows it: the primary
// key's or a UNIQUE constraint's.
type keyIndex struct {
	oid     uint32
	name    string
	cols    []int
	primary bool
}

// keyIndexes lists r's indexes, the primary key's first.
func (r *Relation) keyIndexes() []keyIndex {
	var out []keyIndex
	if r.PKIndexOID != 0 {
		out = append(out, keyIndex{oid: r.PKIndexOID, name: r.PKName, cols: r.PrimaryKey, primary: true})
	}
	for _, u := range r.Unique {
		out = append(out, keyIndex{oid: u.IndexOID, name: u.Name, cols: u.Columns})
	}
	return out
}

// keyIndex finds one of r's indexes by OID.
func (r *Relation) keyIndex(oid uint32) (keyIndex, bool) {
	for _, k := range r.keyIndexes() {
		if k.oid == oid {
			return k, true
		}
	}
	return keyIndex{}, false
}

// storageUnique is r's UNIQUE constraints as storage enforces them.
func (r *Relation) storageUnique() []storage.UniqueKey {
	var out []storage.UniqueKey
	for _, u := range r.Unique {
		out = append(out, storage.UniqueKey{Name: u.Name, Columns: u.Columns})
	}
	return out
}

// assignUnique names r's UNIQUE constraints that have no name, as
// PostgreSQL does (table_col1_col2_key, then key1, key2, ... until free),
// checks that given names are free, and allocates their index OIDs.
// Runs inside CreateTable on the snapshot s being built.
func (s *snapshot) assignUnique(r *Relation) error {
	taken := func(name string) bool {
		if s.rels[r.Schema][name] != nil || s.indexByName(r.Schema, name) != 0 || name == r.Name || name == r.PKName {
			return true
		}
		for _, u := range r.Unique {
			if u.Name == name {
				return true
			}
		}
		return false
	}
	given := make([]UniqueKey, len(r.Unique))
	copy(given, r.Unique)
	r.Unique = nil
	for _, u := range given {
		for _, c := range u.Columns {
			if c < 0 || c >= len(r.Columns) {
				return fmt.Errorf("catalog: unique key column %d out of range", c)
			}
		}
		u.Columns = append([]int(nil), u.Columns...)
		if u.Name == "" {
			parts := []string{r.Name}
			for _, c := range u.Columns {
				parts = append(parts, r.Columns[c].Name)
			}
			base := truncateName(strings.Join(parts, "_"), len("_key"))
			u.Name = base + "_key"
			for n := 1; taken(u.Name); n++ {
				suffix := "_key" + strconv.Itoa(n)
				u.Name = truncateName(base, len(suffix)) + suffix
			}
		} else if taken(u.Name) {
			return pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", u.Name)
		}
		u.IndexOID = s.allocOID()
		r.Unique = append(r.Unique, u)
	}
	return nil
}

// truncateName cuts name so that adding room more bytes stays within
// PostgreSQL's 63-byte identifiers (at a character boundary).
func truncateName(name string, room int) string {
	n := 63 - room
	if len(name) <= n {
		return name
	}
	for n > 0 && name[n]&0xC0 == 0x80 {
		n--
	}
	return name[:n]
}
