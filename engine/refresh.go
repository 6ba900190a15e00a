package engine

import (
	"context"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
)

// execRefresh runs REFRESH MATERIALIZED VIEW [CONCURRENTLY] v. Materialized
// views are maintained continuously, so there is nothing to recompute; the
// statement waits as FLUSH does (every change committed before it has then
// reached every view) and says so in a NOTICE. Tools such as dbt send it
// after loading data, and then read the view. WITH NO DATA (which would
// empty the view and make it unreadable in PostgreSQL) is refused.
func (s *Session) execRefresh(ctx context.Context, r *pg.RefreshMatViewStmt) (*Result, error) {
	rv := r.Relation
	rel, err := s.eng.cat.Resolve(rv.GetSchemaname(), rv.GetRelname(), s.set.searchPath())
	if err != nil {
		return nil, err
	}
	switch rel.Kind {
	case catalog.KindMatView:
	case catalog.KindTable:
		// PostgreSQL: a table passes the ownership check and fails later.
		return nil, pgerr.New(pgerr.FeatureNotSupported, "\"%s\" is not a materialized view", rel.Name)
	default:
		return nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a table or materialized view", rel.Name)
	}
	if r.SkipData {
		return nil, pgerr.Unsupported("REFRESH MATERIALIZED VIEW ... WITH NO DATA is not supported: materialized views are maintained continuously")
	}
	if s.eng.flow != nil {
		if err := s.eng.flow.Flush(ctx); err != nil {
			return nil, err
		}
	}
	n := pgerr.New(pgerr.SuccessfulCompletion, "materialized view \"%s\" is maintained continuously; REFRESH only waited until it caught up with its inputs", rel.Name)
	n.Severity = pgerr.SevNotice
	return &Result{Tag: "REFRESH MATERIALIZED VIEW", Notices: []*pgerr.Error{n}}, nil
}
