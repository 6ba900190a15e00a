package planner

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/storage"
)

// Check evaluates the CHECK constraints over rec (rows in the table's
// column layout) and fails with PostgreSQL's 23514 for the first row
// that fails one (a NULL result passes). As PostgreSQL checks a row's NOT
// NULL constraints before its CHECK constraints, a row with a NULL in a
// NOT NULL column at or before that row is left to storage, which
// reports it (23502). A nil RowChecks checks nothing.
func (rc *RowChecks) Check(ctx *expr.Context, rec arrow.RecordBatch) error {
	if rc == nil || rec == nil || rec.NumRows() == 0 {
		return nil
	}
	first, which := int(rec.NumRows()), -1
	for k, e := range rc.Exprs {
		a, err := e.Eval(ctx, rec)
		if err != nil {
			return err
		}
		if bools, ok := a.(*array.Boolean); ok {
			for i := 0; i < first; i++ {
				if bools.IsValid(i) && !bools.Value(i) {
					first, which = i, k
					break
				}
			}
		}
		a.Release()
	}
	if which < 0 {
		return nil
	}
	if rc.Validating {
		return pgerr.New(pgerr.CheckViolation, `check constraint "%s" of relation "%s" is violated by some row`, rc.Names[which], rc.Table)
	}
	for c, nn := range rc.NotNull {
		if !nn || c >= int(rec.NumCols()) {
			continue
		}
		col := rec.Column(c)
		for i := 0; i <= first && col.NullN() > 0; i++ {
			if col.IsNull(i) {
				return nil
			}
		}
	}
	return pgerr.New(pgerr.CheckViolation, `new row for relation "%s" violates check constraint "%s"`, rc.Table, rc.Names[which]).
		WithDetail("Failing row contains (%s).", storage.FailingRow(rec, first, rc.Columns))
}
