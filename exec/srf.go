package exec

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// ProjectSet evaluates the set-returning functions (generate_series,
// unnest...) of a select list for each input row and emits that row once
// per value, with one column per function appended (PostgreSQL's
// ProjectSet): the functions run in lockstep, and one that runs out of
// values gives NULL while the others continue. Built by planner/, which
// owns this file.
type ProjectSet struct {
	Input Node
	Funcs []SetFunc
	Cols  []types.Column // input columns, then each function's columns (SetFunc.Width)
	// Outer keeps an input row that every function gives nothing for,
	// once, the functions' columns NULL (LEFT JOIN LATERAL f(...) ON true).
	Outer bool
	// Ordinality appends a last column (int8) numbering each input row's
	// values from 1 (f(...) WITH ORDINALITY; NULL on an Outer row).
	Ordinality bool
}

// SetFunc is one set-returning function of a ProjectSet.
type SetFunc struct {
	Name string      // for EXPLAIN
	Args []expr.Expr // over the input columns
	// Expand returns the function's values for one row's arguments (in the
	// Go form of types.Value; nil is NULL). It must be safe for concurrent use.
	Expand func(args []types.Value) ([]types.Value, error)
	// Stream, when set, is used instead of Expand: it returns a generator
	// of the values, pulled one at a time, so that a LIMIT above stops an
	// endless series (generate_series up to infinity). It must be safe for
	// concurrent use; each generator is used by one goroutine.
	Stream func(args []types.Value) (func() (types.Value, bool, error), error)
	// StreamCtx, when set, is used instead of both, with the statement's
	// evaluation context (its session's TimeZone: a series of timestamptz
	// steps days and months on the session's clock).
	StreamCtx func(ec *expr.Context, args []types.Value) (func() (types.Value, bool, error), error)
	// Rows, when set, is used instead of all three by a function of
	// several columns (jsonb_each: key, value): its rows, each of Width
	// values. A ProjectSet hands each row on as one []types.Value.
	Rows  func(args []types.Value) ([][]types.Value, error)
	Width int
}

// Columns is the number of columns fn adds to a ProjectSet's rows.
func (fn SetFunc) Columns() int {
	if fn.Rows != nil {
		return fn.Width
	}
	return 1
}

// Generator returns a generator of fn's values for one row's arguments
// (a function of several columns: each value a []types.Value).
func (fn SetFunc) Generator(ec *expr.Context, args []types.Value) (func() (types.Value, bool, error), error) {
	var out []types.Value
	switch {
	case fn.Rows != nil:
		rows, err := fn.Rows(args)
		if err != nil {
			return nil, err
		}
		out = make([]types.Value, len(rows))
		for i, r := range rows {
			out[i] = r
		}
	case fn.StreamCtx != nil:
		return fn.StreamCtx(ec, args)
	case fn.Stream != nil:
		return fn.Stream(args)
	default:
		var err error
		if out, err = fn.Expand(args); err != nil {
			return nil, err
		}
	}
	k := 0
	return func() (types.Value, bool, error) {
		if k >= len(out) {
			return nil, false, nil
		}
		k++
		return out[k-1], true, nil
	}, nil
}

// AppendValue appends one of fn's values (Generator's; nil: NULL in every
// column) to the builders of its columns, of types ts.
func (fn SetFunc) AppendValue(blds []array.Builder, ts []types.T, v types.Value) error {
	if fn.Rows == nil {
		return types.AppendValue(blds[0], v, ts[0])
	}
	row, _ := v.([]types.Value)
	for c := range blds {
		var x types.Value
		if row != nil {
			x = row[c]
		}
		if err := types.AppendValue(blds[c], x, ts[c]); err != nil {
			return err
		}
	}
	return nil
}

// Columns returns the input columns and the function's column.
func (p *ProjectSet) Columns() []types.Column { return p.Cols }

// Children returns the input.
func (p *ProjectSet) Children() []Node { return []Node{p.Input} }

// Explain renders "ProjectSet: f(args), ...".
func (p *ProjectSet) Explain() string {
	return "ProjectSet" + ExplainSetFuncs(p.Funcs, p.Outer, p.Ordinality)
}

// ExplainSetFuncs renders a ProjectSet's functions after its name, for
// EXPLAIN: " [(outer)] [(with ordinality)]: f(args), ...".
func ExplainSetFuncs(funcs []SetFunc, outer, ordinality bool) string {
	fs := make([]string, len(funcs))
	for i, f := range funcs {
		parts := make([]string, len(f.Args))
		for j, a := range f.Args {
			parts[j] = a.String()
		}
		fs[i] = f.Name + "(" + strings.Join(parts, ", ") + ")"
	}
	var head string
	if outer {
		head += " (outer)"
	}
	if ordinality {
		head += " (with ordinality)"
	}
	return head + ": " + strings.Join(fs, ", ")
}

// Open starts the input.
func (p *ProjectSet) Open(ctx *Context) (Iterator, error) {
	in, err := OpenNode(ctx, p.Input)
	if err != nil {
		return nil, err
	}
	return &projectSetIter{p: p, ctx: ctx, in: in, schema: types.ArrowSchema(p.Cols)}, nil
}

type projectSetIter struct {
	p      *ProjectSet
	ctx    *Context
	in     Iterator
	schema *arrow.Schema

	b       arrow.RecordBatch // the input batch being expanded, nil between batches
	args    [][]arrow.Array   // each function's arguments over b
	row     int               // the row of b being expanded
	started bool              // gens holds row's generators
	yielded bool              // row has given a row (Outer)
	k       int64             // the values row has given (Ordinality)
	gens    []func() (types.Value, bool, error)
}

// Next expands input rows until a batch of BatchSize rows is full, keeping
// the generators of a row across calls: a series is read only as far as
// the consumer asks. The statement's cancellation is checked per batch.
func (it *projectSetIter) Next() (arrow.RecordBatch, error) {
	for {
		if it.ctx != nil && it.ctx.Eval != nil && it.ctx.Eval.Ctx != nil {
			if err := it.ctx.Eval.Ctx.Err(); err != nil {
				return nil, pgerr.Canceled(err)
			}
		}
		if it.b == nil {
			b, err := it.in.Next()
			if err != nil || b == nil {
				return nil, err
			}
			if err := it.startBatch(b); err != nil {
				return nil, err
			}
		}
		out, err := it.fill()
		if err != nil {
			return nil, err
		}
		if !it.started && it.row >= int(it.b.NumRows()) {
			it.releaseBatch()
		}
		if out != nil {
			return out, nil
		}
	}
}

func (it *projectSetIter) evalCtx() *expr.Context {
	if it.ctx != nil {
		return it.ctx.Eval
	}
	return nil
}

func (it *projectSetIter) startBatch(b arrow.RecordBatch) error {
	ec := it.evalCtx()
	it.b, it.row, it.started = b, 0, false
	it.args = make([][]arrow.Array, len(it.p.Funcs))
	for f, fn := range it.p.Funcs {
		for _, a := range fn.Args {
			arr, err := a.Eval(ec, b)
			if err != nil {
				it.releaseBatch()
				return err
			}
			it.args[f] = append(it.args[f], arr)
		}
	}
	return nil
}

func (it *projectSetIter) releaseBatch() {
	for _, as := range it.args {
		for _, a := range as {
			a.Release()
		}
	}
	if it.b != nil {
		it.b.Release()
	}
	it.b, it.args, it.started, it.gens = nil, nil, false, nil
}

// startRow makes the generators of it.row's functions.
func (it *projectSetIter) startRow() error {
	it.gens = make([]func() (types.Value, bool, error), len(it.p.Funcs))
	for f, fn := range it.p.Funcs {
		vals := make([]types.Value, len(fn.Args))
		for i, a := range it.args[f] {
			vals[i] = types.ValueAt(a, it.row, fn.Args[i].Type())
		}
		g, err := fn.Generator(it.evalCtx(), vals)
		if err != nil {
			return err
		}
		it.gens[f] = g
	}
	it.started, it.yielded, it.k = true, false, 0
	return nil
}

// InputCols is the number of the input's columns (Cols' first).
func (p *ProjectSet) InputCols() int {
	n := len(p.Cols)
	for _, fn := range p.Funcs {
		n -= fn.Columns()
	}
	if p.Ordinality {
		n--
	}
	return n
}

// FuncBuilders makes the builders of each function's columns and their
// types; the caller releases them.
func (p *ProjectSet) FuncBuilders(mem memory.Allocator) ([][]array.Builder, [][]types.T) {
	c := p.InputCols()
	blds, ts := make([][]array.Builder, len(p.Funcs)), make([][]types.T, len(p.Funcs))
	for f, fn := range p.Funcs {
		for range fn.Columns() {
			blds[f] = append(blds[f], types.NewBuilder(mem, p.Cols[c].Type))
			ts[f] = append(ts[f], p.Cols[c].Type)
			c++
		}
	}
	return blds, ts
}

// fill pulls up to one batch of output rows; nil when none.
func (it *projectSetIter) fill() (arrow.RecordBatch, error) {
	p, ec := it.p, it.evalCtx()
	blds, ts := p.FuncBuilders(ec.Allocator())
	defer func() {
		for _, bs := range blds {
			for _, b := range bs {
				b.Release()
			}
		}
	}()
	var ord *array.Int64Builder
	if p.Ordinality {
		ord = array.NewInt64Builder(ec.Allocator())
		defer ord.Release()
	}
	var idx []int32
	vals := make([]types.Value, len(p.Funcs))
	size := it.ctx.Size()
	for len(idx) < size && it.row < int(it.b.NumRows()) {
		if !it.started {
			if err := it.startRow(); err != nil {
				return nil, err
			}
		}
		any := false
		for f, g := range it.gens {
			vals[f] = nil
			if g == nil {
				continue
			}
			v, ok, err := g()
			if err != nil {
				return nil, err
			}
			if !ok {
				it.gens[f] = nil
				continue
			}
			vals[f], any = v, true
		}
		if !any {
			keep := p.Outer && !it.yielded
			it.started, it.gens = false, nil
			if !keep {
				it.row++
				continue
			}
			for f := range vals {
				vals[f] = nil // the row once, its functions' columns NULL
			}
			if ord != nil {
				ord.AppendNull()
			}
		} else if ord != nil {
			it.k++
			ord.Append(it.k)
		}
		it.yielded = true
		for f, fn := range p.Funcs {
			if err := fn.AppendValue(blds[f], ts[f], vals[f]); err != nil {
				return nil, err
			}
		}
		idx = append(idx, int32(it.row))
		if !it.started { // the outer row: the next input row
			it.row++
		}
	}
	if len(idx) == 0 {
		return nil, nil
	}
	cols := make([]arrow.Array, 0, len(p.Cols))
	for c := 0; c < int(it.b.NumCols()); c++ {
		cols = append(cols, takeArray(ec.Allocator(), it.b.Column(c), idx))
	}
	for _, bs := range blds {
		for _, bld := range bs {
			cols = append(cols, bld.NewArray())
		}
	}
	if ord != nil {
		cols = append(cols, ord.NewArray())
	}
	return array.NewRecordBatch(it.schema, cols, int64(len(idx))), nil
}

func (it *projectSetIter) Close() error {
	it.releaseBatch()
	return it.in.Close()
}
