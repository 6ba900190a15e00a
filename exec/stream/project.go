package stream

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Project computes Exprs over each chunk; ops are unchanged.
type Project struct {
	Input Node
	Exprs []expr.Expr
	Cols  []types.Column
}

// Columns implements Node.
func (p *Project) Columns() []types.Column { return p.Cols }

// Inputs implements Node.
func (p *Project) Inputs() []Node { return []Node{p.Input} }

// Explain implements Node.
func (p *Project) Explain() string {
	parts := make([]string, len(p.Exprs))
	for i, e := range p.Exprs {
		parts[i] = e.String()
	}
	return "StreamProject: " + strings.Join(parts, ", ")
}

// Start implements Node.
func (p *Project) Start(env *Env, inputs []<-chan Message) <-chan Message {
	ectx := env.evalContext()
	schema := types.ArrowSchema(p.Cols)
	return runMapMarks(env, inputs[0], func(c *Chunk) (*Chunk, error) {
		cols := make([]arrow.Array, len(p.Exprs))
		for i, e := range p.Exprs {
			a, err := e.Eval(ectx, c.Rec)
			if err != nil && env.OnRowError != nil {
				a, err = evalRows(env, ectx, e, c.Rec)
			}
			if err != nil {
				return nil, err
			}
			cols[i] = a
		}
		return &Chunk{Rec: array.NewRecordBatch(schema, cols, c.Rec.NumRows()), Ops: c.Ops}, nil
	}, p.markMap())
}

// markMap maps a watermark on an input column to every output column that
// is a plain reference to it; a watermark on a column no output passes on
// unchanged is dropped (a computed column has no watermark).
func (p *Project) markMap() func(Watermark) []Watermark {
	outs := map[int][]Watermark{}
	for i, e := range p.Exprs {
		if c, ok := e.(*expr.ColRef); ok {
			outs[c.Idx] = append(outs[c.Idx], Watermark{Col: i})
		}
	}
	return func(w Watermark) []Watermark {
		ws := outs[w.Col]
		res := make([]Watermark, len(ws))
		for i, o := range ws {
			res[i] = Watermark{Col: o.Col, Value: w.Value}
		}
		return res
	}
}
