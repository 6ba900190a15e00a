package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
)

// CREATE TABLE t (LIKE src [INCLUDING ... | EXCLUDING ...], ...): src's
// column names, types and NOT NULL always; with INCLUDING DEFAULTS its
// column defaults (a serial's default keeps naming src's sequence, as in
// PostgreSQL), IDENTITY its identity columns (each with a new sequence of
// the same parameters), CONSTRAINTS its CHECK constraints (same names),
// INDEXES its primary key and UNIQUE constraints (t's own names), COMMENTS
// its column comments (the engine copies them once t exists:
// Session.copyLikeComments), GENERATED its generated columns' expressions
// (without it they are plain columns). Foreign keys are never copied.
// STATISTICS, STORAGE and COMPRESSION copy what streamsql does not have
// (statistics targets, per-column storage), that is nothing.

// The TableLikeClause option bits (PostgreSQL's CREATE_TABLE_LIKE_*).
// LikeComments is the engine's to honour (Session.copyLikeComments).
const (
	LikeComments    = 1 << 0
	likeConstraints = 1 << 2
	likeDefaults    = 1 << 3
	likeGenerated   = 1 << 4
	likeIdentity    = 1 << 5
	likeIndexes     = 1 << 6
)

// likeCopy is what a LIKE clause adds besides the columns.
type likeCopy struct {
	pk      []string // INCLUDING INDEXES: the primary key's columns
	uniques [][]string
	checks  []catalog.CheckConstraint
}

// tableLike appends src's columns to rel and returns the rest to copy.
func (b *binder) tableLike(rel *catalog.Relation, lc *pg.TableLikeClause) (likeCopy, error) {
	var out likeCopy
	rv := lc.Relation
	src, err := b.env.Catalog.Resolve(rv.Schemaname, rv.Relname, b.env.SearchPath)
	if err != nil {
		return out, b.errAt(err, rv.Location)
	}
	switch src.Kind {
	case catalog.KindTable, catalog.KindView, catalog.KindMatView, catalog.KindSource:
	default:
		return out, b.newErr(pgerr.WrongObjectType, rv.Location, "\"%s\" is not a table, view, materialized view, composite type, or foreign table", src.Name)
	}
	for _, c := range src.Columns {
		if rel.ColumnIndex(c.Name) >= 0 {
			return out, pgerr.New(pgerr.DuplicateColumn, "column \"%s\" specified more than once", c.Name)
		}
		col := catalog.Column{Name: c.Name, Type: c.Type, NotNull: c.NotNull, Domain: c.Domain}
		if lc.Options&likeDefaults != 0 {
			col.Default = c.Default
		}
		if lc.Options&likeGenerated != 0 {
			col.Generated = c.Generated
		}
		if c.Identity != 0 && lc.Options&likeIdentity != 0 {
			schema, name, ok := catalog.SeqDefaultTarget(c.IdentityDefault)
			if !ok {
				return out, pgerr.Internal("identity column %q of %s has no sequence", c.Name, src.Name)
			}
			if schema == "" {
				schema = src.Schema
			}
			seq, err := b.env.Catalog.Resolve(schema, name, b.env.SearchPath)
			if err != nil || seq.Seq == nil {
				return out, pgerr.Internal("identity column %q of %s: its sequence %s: %v", c.Name, src.Name, name, err)
			}
			spec := catalog.SpecOf(seq.Seq)
			col.Identity, col.Serial, col.SerialSpec = c.Identity, seq.Seq.Type, &spec
		}
		rel.Columns = append(rel.Columns, col)
	}
	names := func(idx []int) []string {
		out := make([]string, len(idx))
		for i, j := range idx {
			out[i] = src.Columns[j].Name
		}
		return out
	}
	if lc.Options&likeIndexes != 0 {
		if len(src.PrimaryKey) > 0 {
			out.pk = names(src.PrimaryKey)
		}
		for _, u := range src.Unique {
			out.uniques = append(out.uniques, names(u.Columns))
		}
	}
	if lc.Options&likeConstraints != 0 {
		for _, c := range src.Checks {
			out.checks = append(out.checks, catalog.CheckConstraint{Name: c.Name, Expr: c.Expr, Column: c.Column})
		}
	}
	return out, nil
}
