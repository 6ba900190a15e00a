package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
)

// SourceReader is the optional part of Env.Streams that reads a source in
// a batch query (SELECT * FROM src LIMIT n, to peek at what it parses).
// Implemented by engine/. Safe for concurrent use.
type SourceReader interface {
	// SourceFinite reports whether the source ends by itself (a datagen or
	// nexmark source with a count and no pacing, a file without follow).
	SourceFinite(oid uint32) (bool, error)
	// SourceRows reads the source from its start: limit rows (-1: to its
	// end). The batches belong to the caller.
	SourceRows(oid uint32, limit int64) ([]arrowBatch, error)
}

// sourceRows binds a source named in a batch query: its rows read from its
// start. A finite source is read to its end (or up to the SELECT's LIMIT);
// an unbounded one needs the SELECT to be SELECT ... FROM src LIMIT n
// (n+OFFSET rows are read), else the query is refused naming the source.
func (b *binder) sourceRows(rel *catalog.Relation, loc int32) (lnode, error) {
	var sr SourceReader
	if b.env != nil {
		sr, _ = b.env.Streams.(SourceReader)
	}
	if sr == nil {
		return nil, b.newErr(pgerr.FeatureNotSupported, loc, "cannot read source \"%s\" in a batch query; create a materialized view over it", rel.Name)
	}
	finite, err := sr.SourceFinite(rel.OID)
	if err != nil {
		return nil, b.errAt(err, loc)
	}
	limit := b.sourceLimit
	if !finite && limit < 0 {
		e := pgerr.New(pgerr.FeatureNotSupported, "source \"%s\" is unbounded: a batch query can read it only as SELECT ... FROM %s LIMIT n", rel.Name, rel.Name).
			WithHint("Add LIMIT to peek at its first rows, or create a materialized view over it.")
		return nil, b.errAt(e, loc)
	}
	ids := make([]int, len(rel.Columns))
	for i, c := range rel.Columns {
		ids[i] = b.newCol(c.Name, rel.Name, c.Type)
	}
	oid := rel.OID
	return &lFunc{name: rel.Name, scan: "Seq Scan", ids: ids, produce: func([]expr.Expr) func(*exec.Context) ([]arrowBatch, error) {
		return func(*exec.Context) ([]arrowBatch, error) { return sr.SourceRows(oid, limit) }
	}}, nil
}

// sourceLimitOf is LIMIT n [OFFSET m] of a SELECT that reads one FROM item
// with no clause that would need more rows than it returns (WHERE, GROUP
// BY, HAVING, DISTINCT, ORDER BY, windows): n+m, or -1.
func sourceLimitOf(s *pg.SelectStmt) int64 {
	if len(s.FromClause) != 1 || s.WhereClause != nil || len(s.GroupClause) > 0 || s.HavingClause != nil ||
		len(s.DistinctClause) > 0 || len(s.SortClause) > 0 || len(s.WindowClause) > 0 || s.LimitCount == nil ||
		s.LimitOption == pg.LimitOption_LIMIT_OPTION_WITH_TIES {
		return -1
	}
	n, ok := literalInt(s.LimitCount)
	if !ok {
		return -1
	}
	if s.LimitOffset != nil {
		m, ok := literalInt(s.LimitOffset)
		if !ok {
			return -1
		}
		n += m
	}
	return n
}

// literalInt reads a non-negative integer literal.
func literalInt(n *pg.Node) (int64, bool) {
	c := n.GetAConst()
	if c == nil || c.GetIval() == nil {
		return 0, false
	}
	v := int64(c.GetIval().Ival)
	return v, v >= 0
}
