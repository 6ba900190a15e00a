package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Collations. streamsql compares text in byte order, the C collation, and
// its catalog lists the collations that compare so: default, C and POSIX
// (pg_collation). COLLATE names one of them (also pg_catalog-qualified) and
// changes nothing; another name is refused as PostgreSQL refuses a
// collation it does not have (42704), so that no COLLATE "en_US" is
// accepted and then ignored. COLLATE on a type without collations is
// 42804, as in PostgreSQL, which checks the type first. Both point at the
// COLLATE clause, in expressions and column definitions.

// checkCollate checks a COLLATE clause (its name's parts) over a value of
// type t.
func (b *binder) checkCollate(name []*pg.Node, t types.T, loc int32) error {
	if !collatable(t) {
		return b.newErr(pgerr.DatatypeMismatch, loc, "collations are not supported by type %s", t)
	}
	return b.errAt(CheckCollation(name), loc)
}

// CheckCollation refuses a collation name (its parts) the catalog does
// not have (a CREATE INDEX key's COLLATE too: engine/index.go).
func CheckCollation(name []*pg.Node) error {
	names := strs(name)
	n := names
	if len(n) == 2 && n[0] == "pg_catalog" {
		n = n[1:]
	}
	if len(n) == 1 {
		switch n[0] {
		case "default", "C", "POSIX":
			return nil
		}
	}
	return pgerr.New(pgerr.UndefinedObject, "collation \"%s\" for encoding \"UTF8\" does not exist", joinDots(names))
}

// columnCollate checks a column definition's COLLATE clause, if any, over
// the column's type.
func (b *binder) columnCollate(cd *pg.ColumnDef, t types.T) error {
	if cd.CollClause == nil {
		return nil
	}
	return b.checkCollate(cd.CollClause.Collname, t, cd.CollClause.Location)
}

// collatable reports the types PostgreSQL gives a collation: the string
// types and arrays of them (an untyped literal becomes text).
func collatable(t types.T) bool {
	switch t.Kind {
	case types.Text, types.Varchar, types.Bpchar, types.Name, types.Unknown:
		return true
	case types.Array:
		return t.Elem != nil && collatable(*t.Elem)
	}
	return false
}
