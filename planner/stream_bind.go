package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
)

// Binding hooks for views and sources (called from bind_from.go).

// viewRows binds a materialized view read by a batch query: a function
// scan over the view's snapshot as of the last completed epoch, taken when
// the plan is opened, so that filters, joins and aggregates over views run
// through the full batch engine.
func (b *binder) viewRows(rel *catalog.Relation) lnode {
	ids := make([]int, len(rel.Columns))
	for i, c := range rel.Columns {
		ids[i] = b.newCol(c.Name, rel.Name, c.Type)
	}
	var streams Streams
	if b.env != nil {
		streams = b.env.Streams
	}
	oid, name := rel.OID, rel.Name
	b.matviews = append(b.matviews, oid)
	produce := func(ctx *exec.Context) ([]arrowBatch, error) {
		if ctx != nil {
			if rows, ok := ctx.Views[oid]; ok {
				return rows, nil
			}
		}
		if streams == nil {
			return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" cannot be read: the streaming runtime is not running", name)
		}
		return streams.ViewRows(oid)
	}
	return &lFunc{name: rel.Name, ids: ids, produce: func([]expr.Expr) func(*exec.Context) ([]arrowBatch, error) {
		return produce
	}}
}

// streamFuncErr is the error for a function in the FROM clause of a
// continuous query: it would be evaluated once, not maintained.
func (b *binder) streamFuncErr(rf *pg.RangeFunction) error {
	name := "a function in FROM"
	loc := int32(-1)
	if len(rf.Functions) > 0 {
		if items := rf.Functions[0].GetList().GetItems(); len(items) > 0 {
			loc = nodeLoc(items[0])
			if fc := items[0].GetFuncCall(); fc != nil {
				name = funcName(fc.Funcname)
			}
		}
	}
	return b.newErr(pgerr.FeatureNotSupported, loc, "%s cannot be used in a materialized view", name)
}
