package stream

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Run-time errors in single rows (division by zero, a bad cast) must not
// stop a job. When Env.OnRowError is set, an expression that fails over a
// whole chunk is evaluated again row by row: Project writes NULL where a row
// fails, Filter drops a row whose condition fails, and each failure goes to
// OnRowError. Both outcomes depend on the row only, so a retraction meets
// the same fate as the insert it retracts. Without OnRowError the chunk's
// error stops the graph (env.Fail).

// evalOrNull evaluates e over rec the way every operator does (group and
// join keys, aggregate arguments and FILTERs, join conditions, sort keys):
// if that fails and env takes row errors, the failing rows are NULL.
func evalOrNull(env *Env, ectx *expr.Context, e expr.Expr, rec arrow.RecordBatch) (arrow.Array, error) {
	a, err := e.Eval(ectx, rec)
	if err != nil && env.OnRowError != nil {
		return evalRows(env, ectx, e, rec)
	}
	return a, err
}

// evalRows evaluates e over rec, replacing failing rows by NULL. It is the
// slow path, taken only after e failed over the whole chunk.
func evalRows(env *Env, ectx *expr.Context, e expr.Expr, rec arrow.RecordBatch) (arrow.Array, error) {
	return evalKept(env, ectx, e, rec, nil)
}

// evalKept evaluates e row by row on the rows of rec that keep marks (nil:
// all of them), NULL on the others; a row that fails is a row error
// (NULL) when the job counts them (env.OnRowError), else the error.
func evalKept(env *Env, ectx *expr.Context, e expr.Expr, rec arrow.RecordBatch, keep []bool) (arrow.Array, error) {
	n := int(rec.NumRows())
	parts := make([]arrow.Array, 0, n)
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for i := 0; i < n; i++ {
		if keep != nil && !keep[i] {
			parts = append(parts, nullArray(ectx, e.Type()))
			continue
		}
		row := rec.NewSlice(int64(i), int64(i+1))
		a, err := e.Eval(ectx, row)
		row.Release()
		if err != nil {
			if env.OnRowError == nil {
				return nil, err
			}
			env.OnRowError(err)
			a = nullArray(ectx, e.Type())
		}
		parts = append(parts, a)
	}
	if len(parts) == 0 {
		return nullArrayN(ectx, e.Type(), 0), nil
	}
	return array.Concatenate(parts, ectx.Allocator())
}

func nullArray(ectx *expr.Context, t types.T) arrow.Array { return nullArrayN(ectx, t, 1) }

func nullArrayN(ectx *expr.Context, t types.T, n int) arrow.Array {
	b := array.NewBuilder(ectx.Allocator(), t.ArrowType())
	defer b.Release()
	b.AppendNulls(n)
	return b.NewArray()
}
