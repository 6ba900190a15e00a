package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
)

// subPlan runs a nested plan for expr.Subquery. It is immutable; each Run
// opens a fresh execution.
type subPlan struct {
	n Node
}

// Run executes the plan with ctx (ctx.Outer already holds the outer rows)
// and returns the first column's arrays, at most limit rows when limit > 0.
// A plan without columns (EXISTS (SELECT FROM ...)) yields NULL arrays of
// the right lengths, so that rows can still be counted.
func (s *subPlan) Run(ctx *expr.Context, limit int) (_ []arrow.Array, err error) {
	defer recoverErr(&err)
	ectx := &Context{Eval: ctx, Views: ctx.Views} // the statement's view snapshots
	it, err := s.n.Open(ectx)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []arrow.Array
	rows := 0
	for limit <= 0 || rows < limit {
		if err := canceled(ectx); err != nil {
			return nil, err
		}
		b, err := it.Next()
		if err != nil {
			return nil, err
		}
		if b == nil {
			break
		}
		n := int(b.NumRows())
		if limit > 0 && rows+n > limit {
			n = limit - rows
			b = b.NewSlice(0, int64(n))
		}
		rows += n
		if b.NumCols() == 0 {
			out = append(out, array.NewNull(n))
		} else {
			out = append(out, b.Column(0))
		}
	}
	return out, nil
}

// Explain renders the nested plan.
func (s *subPlan) Explain() string { return Explain(s.n) }
