package planner

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
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
	fn := &lFunc{name: rel.Name, scan: "Seq Scan", ids: ids, produce: func([]expr.Expr) func(*exec.Context) ([]arrowBatch, error) {
		return produce
	}}
	if lk, ok := streams.(viewLookup); ok {
		if key := streams.ViewKey(oid); len(key) == 1 {
			fn.keyCol = key[0]
			fn.lookup = func(k expr.Expr) func(*exec.Context) ([]arrowBatch, error) {
				return lookupProduce(lk, oid, k, rel.Columns, produce)
			}
		}
	}
	return fn
}

// viewLookup is implemented by Streams that can find a keyed view's row by
// its key (engine.flowStreams).
type viewLookup interface {
	ViewLookup(oid uint32, key []types.Value) (row []types.Value, found, keyed bool, err error)
}

// lookupProduce returns the view rows whose single-column stream key
// equals key: one row or none, found without building the view's
// snapshot. A statement that reads several views at one epoch
// (exec.Context.Views) and a view that cannot be searched read the whole
// snapshot instead (produce); the filter above applies either way.
func lookupProduce(lk viewLookup, oid uint32, key expr.Expr, cols []catalog.Column, produce func(*exec.Context) ([]arrowBatch, error)) func(*exec.Context) ([]arrowBatch, error) {
	return func(ctx *exec.Context) ([]arrowBatch, error) {
		if ctx != nil {
			if _, pinned := ctx.Views[oid]; pinned {
				return produce(ctx)
			}
		}
		v, ok := exec.KeyValue(ctx, key)
		if !ok {
			return produce(ctx)
		}
		if v == nil {
			return nil, nil // key = NULL is never true
		}
		row, found, keyed, err := lk.ViewLookup(oid, []types.Value{v})
		if err != nil {
			return nil, err
		}
		if !keyed {
			return produce(ctx)
		}
		if !found {
			return nil, nil
		}
		tcols := make([]types.Column, len(cols))
		arrs := make([]arrow.Array, len(cols))
		for i, c := range cols {
			tcols[i] = types.Column{Name: c.Name, Type: c.Type}
			b := types.NewBuilder(memory.DefaultAllocator, c.Type)
			if err := types.AppendValue(b, row[i], c.Type); err != nil {
				b.Release()
				return nil, err
			}
			arrs[i] = b.NewArray()
			b.Release()
		}
		return []arrowBatch{array.NewRecordBatch(types.ArrowSchema(tcols), arrs, 1)}, nil
	}
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
	err := b.newErr(pgerr.FeatureNotSupported, loc, "%s cannot be used in a materialized view", name)
	if isSRF(name) {
		return err.(*pgerr.Error).WithHint("A set-returning function can follow the items whose rows it expands: FROM t, unnest(t.tags) AS tag, or SELECT unnest(t.tags) FROM t.")
	}
	return err
}
