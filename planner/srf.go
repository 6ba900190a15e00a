package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/pgerr"
)

// rangeFunction binds a function in FROM.
func (b *binder) rangeFunction(l *level, rf *pg.RangeFunction) (lnode, []*nsItem, error) {
	return nil, nil, pgerr.Unsupported("functions in FROM are not supported yet")
}
