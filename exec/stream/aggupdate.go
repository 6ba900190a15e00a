package stream

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
)

// updateAggs applies a chunk's rows to the aggregates' columnar state, for
// HashAgg and WindowAgg alike: row i goes to group gids[i] (-1: none) with
// sign signs[i] (signs nil: all +1). Each aggregate's argument and FILTER
// are evaluated over the whole chunk; a row whose evaluation fails is NULL
// there and counted (rowerr.go); rows FILTER rejects are skipped. fgids is
// the caller's scratch slice, returned for reuse.
func updateAggs(env *Env, ectx *expr.Context, specs []AggSpec, aggs []aggCol, rec arrow.RecordBatch, gids []int32, signs []int64, fgids []int32) ([]int32, error) {
	for j, spec := range specs {
		var arg arrow.Array
		if spec.Kind != AggCountStar && spec.Arg != nil {
			a, err := evalOrNull(env, ectx, spec.Arg, rec)
			if err != nil {
				return fgids, err
			}
			defer a.Release()
			arg = a
		}
		use := gids
		if spec.Filter != nil {
			m, err := evalOrNull(env, ectx, spec.Filter, rec)
			if err != nil {
				return fgids, err
			}
			defer m.Release()
			mask, ok := m.(*array.Boolean)
			if !ok {
				return fgids, fmt.Errorf("stream: FILTER is %s, not boolean", m.DataType())
			}
			fgids = append(fgids[:0], gids...)
			for i := range fgids {
				if mask.IsNull(i) || !mask.Value(i) {
					fgids[i] = -1
				}
			}
			use = fgids
		}
		if m, ok := aggs[j].(multiArgCol); ok {
			if err := updateMulti(env, ectx, spec, m, arg, rec, use, signs); err != nil {
				return fgids, err
			}
			continue
		}
		if err := aggs[j].update(arg, use, signs); err != nil {
			return fgids, err
		}
	}
	return fgids, nil
}
