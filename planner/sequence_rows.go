package planner

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// SELECT ... FROM a sequence: one row (last_value, log_cnt, is_called), as
// PostgreSQL shows a sequence's tuple, read when the plan runs.

// seqRowReader is the optional part of Env.Catalog that reads a
// sequence's row (implemented by *catalog.Catalog).
type seqRowReader interface {
	SeqRow(oid uint32) (last, logCnt int64, called bool, err error)
}

// seqColumns are a sequence's columns.
var seqColumns = []types.Column{
	{Name: "last_value", Type: types.TInt8},
	{Name: "log_cnt", Type: types.TInt8},
	{Name: "is_called", Type: types.TBool},
}

// sequenceRows binds a sequence named in FROM (its SELECT privilege is
// checked by the caller). A continuous query cannot read one.
func (b *binder) sequenceRows(rel *catalog.Relation, loc int32) (lnode, error) {
	sr, _ := b.env.Catalog.(seqRowReader)
	if sr == nil || b.stream {
		return nil, b.newErr(pgerr.FeatureNotSupported, loc, "sequence \"%s\" cannot be read in this query", rel.Name)
	}
	ids := make([]int, len(seqColumns))
	for i, c := range seqColumns {
		ids[i] = b.newCol(c.Name, rel.Name, c.Type)
	}
	oid := rel.OID
	return &lFunc{name: rel.Name, scan: "Seq Scan", ids: ids, produce: func([]expr.Expr) func(*exec.Context) ([]arrowBatch, error) {
		return func(ctx *exec.Context) ([]arrowBatch, error) {
			last, logCnt, called, err := sr.SeqRow(oid)
			if err != nil {
				return nil, err
			}
			return rowBatches(ctx, seqColumns, [][]types.Value{{last, logCnt, called}})
		}
	}}, nil
}
