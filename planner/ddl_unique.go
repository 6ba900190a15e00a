package planner

import (
	"slices"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
)

// uniqueSpec is a UNIQUE constraint as written in CREATE TABLE.
type uniqueSpec struct {
	cols []string
	name string // "" = the catalog picks PostgreSQL's default name
	loc  int32
}

// uniqueKeys resolves UNIQUE constraints into rel.Unique. As in
// PostgreSQL, a constraint over the same columns (in the same order) as the
// primary key or an earlier UNIQUE constraint creates no second index; the
// kept one takes the later one's name if it had none.
func (b *binder) uniqueKeys(rel *catalog.Relation, specs []uniqueSpec) error {
	for _, u := range specs {
		var cols []int
		for _, name := range u.cols {
			i := rel.ColumnIndex(name)
			if i < 0 {
				return b.newErr(pgerr.UndefinedColumn, u.loc, "column \"%s\" named in key does not exist", name)
			}
			if slices.Contains(cols, i) {
				return b.newErr(pgerr.DuplicateColumn, u.loc, "column \"%s\" appears twice in unique constraint", name)
			}
			cols = append(cols, i)
		}
		if slices.Equal(cols, rel.PrimaryKey) {
			continue
		}
		dup := false
		for k := range rel.Unique {
			if slices.Equal(rel.Unique[k].Columns, cols) {
				if rel.Unique[k].Name == "" {
					rel.Unique[k].Name = u.name
				}
				dup = true
				break
			}
		}
		if !dup {
			rel.Unique = append(rel.Unique, catalog.UniqueKey{Name: u.name, Columns: cols})
		}
	}
	return nil
}
