package stream

import (
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Filter keeps the rows where Cond is true. An update whose before-row
// passes and after-row does not becomes a delete (and the reverse an
// insert), so downstream state stays exact.
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
	return runMap(env, inputs[0], func(c *Chunk) (*Chunk, error) {
		a, err := f.Cond.Eval(ectx, c.Rec)
		if err != nil && env.OnRowError != nil {
			a, err = evalRows(env, ectx, f.Cond, c.Rec) // failing rows: NULL, so dropped
		}
		if err != nil {
			return nil, err
		}
		return filterChunk(ectx, c, a.(*array.Boolean))
	})
}

// filterChunk keeps the rows whose mask is true (NULL is false), fixing up
// update pairs that the mask splits.
func filterChunk(ectx *expr.Context, c *Chunk, mask *array.Boolean) (*Chunk, error) {
	n := c.Len()
	keep := make([]bool, n)
	all := true
	for i := 0; i < n; i++ {
		keep[i] = mask.IsValid(i) && mask.Value(i)
		all = all && keep[i]
	}
	if all {
		return c, nil
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
	return &Chunk{Rec: out, Ops: ops, Part: c.Part}, nil        // some of its rows: its Part stays true (route.go)
}
