package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// NewIntSeries returns an iterator over start, start+step, ... up to stop
// (inclusive; downwards for a negative step), as generate_series over
// integers does, in batches of ctx.Size() rows made on demand. cols is one
// integer column of type t, plus an int8 ordinality column when ordinality
// is set. step must not be zero.
func NewIntSeries(ctx *Context, cols []types.Column, start, stop, step int64, ordinality bool) Iterator {
	return &intSeries{ctx: ctx, schema: types.ArrowSchema(cols), t: cols[0].Type,
		next: start, stop: stop, step: step, ord: ordinality, done: past(start, stop, step)}
}

type intSeries struct {
	ctx              *Context
	schema           *arrow.Schema
	t                types.T
	next, stop, step int64
	n                int64 // values produced so far
	ord, done        bool
}

// past reports whether v is beyond stop in the direction of step.
func past(v, stop, step int64) bool {
	return step > 0 && v > stop || step < 0 && v < stop
}

func (s *intSeries) Next() (arrow.RecordBatch, error) {
	if s.done {
		return nil, nil
	}
	if err := canceled(s.ctx); err != nil {
		return nil, err
	}
	size := s.ctx.Size()
	vals := make([]int64, 0, size)
	for len(vals) < size {
		v := s.next
		vals = append(vals, v)
		// Stop before stepping past stop or overflowing int64.
		if s.step > 0 && v > s.stop-s.step || s.step < 0 && v < s.stop-s.step {
			s.done = true
			break
		}
		s.next = v + s.step
	}
	mem := alloc(s.ctx)
	cols := make([]arrow.Array, 0, 2)
	switch s.t.Kind {
	case types.Int8:
		b := array.NewInt64Builder(mem)
		b.AppendValues(vals, nil)
		cols = append(cols, b.NewArray())
	case types.Int4:
		b := array.NewInt32Builder(mem)
		for _, v := range vals {
			b.Append(int32(v))
		}
		cols = append(cols, b.NewArray())
	default: // Int2
		b := array.NewInt16Builder(mem)
		for _, v := range vals {
			b.Append(int16(v))
		}
		cols = append(cols, b.NewArray())
	}
	if s.ord {
		b := array.NewInt64Builder(mem)
		for i := range vals {
			b.Append(s.n + int64(i) + 1)
		}
		cols = append(cols, b.NewArray())
	}
	s.n += int64(len(vals))
	return array.NewRecordBatch(s.schema, cols, int64(len(vals))), nil
}

func (s *intSeries) Close() error { s.done = true; return nil }
