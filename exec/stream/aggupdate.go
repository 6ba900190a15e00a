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
// there and counted (rowerr.go); rows FILTER rejects are skipped. A FILTER
// that several aggregates share (the same expr.Expr: the planner's
// shareFilters) is evaluated once. fs is the caller's scratch.
func updateAggs(env *Env, ectx *expr.Context, specs []AggSpec, aggs []aggCol, rec arrow.RecordBatch, gids []int32, signs []int64, fs *aggFilters) error {
	fs.filters = fs.filters[:0]
	for j, spec := range specs {
		var arg arrow.Array
		if spec.Kind != AggCountStar && spec.Arg != nil {
			a, err := evalOrNull(env, ectx, spec.Arg, rec)
			if err != nil {
				return err
			}
			defer a.Release()
			arg = a
		}
		use := gids
		if spec.Filter != nil {
			var err error
			if use, err = fs.gidsOf(env, ectx, spec.Filter, rec, gids); err != nil {
				return err
			}
		}
		if m, ok := aggs[j].(multiArgCol); ok {
			if err := updateMulti(env, ectx, spec, m, arg, rec, use, signs); err != nil {
				return err
			}
			continue
		}
		if err := aggs[j].update(arg, use, signs); err != nil {
			return err
		}
	}
	return nil
}

// aggFilters is updateAggs' scratch, owned by one operator's goroutine:
// per FILTER evaluated for the current chunk, the group ids its rows take.
type aggFilters struct {
	filters []expr.Expr // the chunk's FILTERs evaluated so far
	gids    [][]int32   // per filter: gids with -1 where it rejects the row
}

// gidsOf is gids with -1 for the rows filter rejects (false or NULL),
// evaluated once per chunk for each filter.
func (fs *aggFilters) gidsOf(env *Env, ectx *expr.Context, filter expr.Expr, rec arrow.RecordBatch, gids []int32) ([]int32, error) {
	for i, f := range fs.filters {
		if f == filter {
			return fs.gids[i], nil
		}
	}
	m, err := evalOrNull(env, ectx, filter, rec)
	if err != nil {
		return nil, err
	}
	defer m.Release()
	mask, ok := m.(*array.Boolean)
	if !ok {
		return nil, fmt.Errorf("stream: FILTER is %s, not boolean", m.DataType())
	}
	k := len(fs.filters)
	fs.filters = append(fs.filters, filter)
	if k == len(fs.gids) {
		fs.gids = append(fs.gids, nil)
	}
	out := append(fs.gids[k][:0], gids...)
	for i := range out {
		if mask.IsNull(i) || !mask.Value(i) {
			out[i] = -1
		}
	}
	fs.gids[k] = out
	return out, nil
}
