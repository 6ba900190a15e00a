package stream

import (
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Filter keeps the rows where Cond is true. An update whose before-row
// passes and after-row does not becomes a delete (and the reverse an
// insert), so downstream state stays exact. Cond's ANDed parts are applied
// as the batch engine applies them (exec.QualList: cheapest first), a part
// being evaluated again row by row, on the rows the parts before it kept,
// when it fails for the chunk: a row that an earlier part drops is not a
// row error of a later one.
type Filter struct {
	Input Node
	Cond  expr.Expr
}

// Columns implements Node.
func (f *Filter) Columns() []types.Column { return f.Input.Columns() }

// Inputs implements Node.
func (f *Filter) Inputs() []Node { return []Node{f.Input} }

// Explain implements Node.
func (f *Filter) Explain() string { return "StreamFilter: " + f.Cond.String() }

// Start implements Node.
func (f *Filter) Start(env *Env, inputs []<-chan Message) <-chan Message {
	ectx := env.evalContext()
	parts := exec.QualList(f.Cond)
	return runMap(env, inputs[0], func(c *Chunk) (*Chunk, error) {
		keep := make([]bool, c.Len())
		for i := range keep {
			keep[i] = true
		}
		for k, q := range parts {
			a, err := q.Eval(ectx, c.Rec)
			if err != nil && (k > 0 || env.OnRowError != nil) {
				a, err = evalKept(env, ectx, q, c.Rec, keep) // failing rows: NULL, so dropped
			}
			if err != nil {
				return nil, err
			}
			m := a.(*array.Boolean)
			for i := range keep {
				keep[i] = keep[i] && m.IsValid(i) && m.Value(i)
			}
			a.Release()
		}
		return filterKeep(c, keep, ectx), nil
	})
}

// filterChunk keeps the rows whose mask is true (NULL is false), fixing up
// update pairs that the mask splits.
func filterChunk(ectx *expr.Context, c *Chunk, mask *array.Boolean) (*Chunk, error) {
	keep := make([]bool, c.Len())
	for i := range keep {
		keep[i] = mask.IsValid(i) && mask.Value(i)
	}
	return filterKeep(c, keep, ectx), nil
}

// filterKeep keeps the rows keep marks, fixing up update pairs it splits.
func filterKeep(c *Chunk, keep []bool, ectx *expr.Context) *Chunk {
	n := len(keep)
	all := true
	for _, k := range keep {
		all = all && k
	}
	if all {
		return c
	}
	var ops []Op
	if c.Ops != nil {
		ops = make([]Op, 0, n)
	}
	for i := 0; i < n; i++ {
		if !keep[i] || c.Ops == nil {
			continue
		}
		op := c.Ops[i]
		switch {
		case op == UpdateBefore && (i+1 >= n || !keep[i+1]):
			op = Delete
		case op == UpdateAfter && (i == 0 || !keep[i-1]):
			op = Insert
		}
		ops = append(ops, op)
	}
	out := exec.SelectRows(ectx.Allocator(), c.Rec, keep, true) // Arrow's filter takes no intervals
	return &Chunk{Rec: out, Ops: ops, Part: c.Part}             // some of its rows: its Part stays true (route.go)
}
