package stream

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// ProjectSet repeats each row of its input once per value of its
// set-returning functions (unnest, generate_series, jsonb_array_elements,
// jsonb_each...), with each function's columns appended after the input's
// columns: the batch engine's exec.ProjectSet (PostgreSQL's), the
// functions in lockstep, one that has run out giving NULL while the others
// go on.
//
// A row's values depend on the row alone (the planner admits no volatile
// function), so a retraction retracts the very rows its insert made: each
// output row carries its input row's op, the halves of an update pair
// becoming a delete and an insert (the row before and the row after may
// expand to different numbers of rows). A row whose function fails is
// counted by Env.OnRowError and gives no row, at its insert and at its
// delete alike. Stateless. A watermark on an input column passes on
// unchanged (rows are only repeated); the functions' columns have none.
type ProjectSet struct {
	Input Node
	Funcs []exec.SetFunc
	Cols  []types.Column // the input's columns, then each function's (exec.SetFunc.Columns)
	// Outer keeps a row every function gives nothing for, once, the
	// functions' columns NULL (LEFT JOIN LATERAL f(...) ON true).
	Outer bool
	// Ordinality appends a last column (int8) numbering each row's values
	// from 1 (f(...) WITH ORDINALITY; NULL on an Outer row).
	Ordinality bool
	// Keep, when not nil, is a condition over Cols that each output row
	// must meet (NULL or a row error: not met); with Outer, a row none of
	// whose values meets it is kept once with the functions' columns NULL
	// (LEFT JOIN LATERAL f(...) ON cond, or over a filter of f). Like the
	// values, it depends on the row alone.
	Keep expr.Expr
}

// maxSetValues bounds the values one function may give for one row: a
// series to infinity (generate_series over timestamps with an infinite
// end) would otherwise never end. It is a row error.
const maxSetValues = 10_000_000

// Columns implements Node.
func (p *ProjectSet) Columns() []types.Column { return p.Cols }

// Inputs implements Node.
func (p *ProjectSet) Inputs() []Node { return []Node{p.Input} }

// Explain implements Node.
func (p *ProjectSet) Explain() string {
	s := "StreamProjectSet" + exec.ExplainSetFuncs(p.Funcs, p.Outer, p.Ordinality)
	if p.Keep != nil {
		s += " keeping " + p.Keep.String()
	}
	return s
}

// Start implements Node. The goroutine owns its evaluation context.
func (p *ProjectSet) Start(env *Env, inputs []<-chan Message) <-chan Message {
	ectx := env.evalContext()
	lay := p.layout()
	schema := types.ArrowSchema(p.Cols)
	inSchema := types.ArrowSchema(p.Cols[:lay.InputCols()])
	return runMapMarks(env, inputs[0], func(c *Chunk) (*Chunk, error) {
		return p.expand(env, ectx, lay, schema, inSchema, c)
	}, func(w Watermark) []Watermark { return []Watermark{w} })
}

// expand returns c's rows repeated per value, with their ops (nil: none);
// lay is p's column layout (layout).
func (p *ProjectSet) expand(env *Env, ec *expr.Context, lay *exec.ProjectSet, schema, inSchema *arrow.Schema, c *Chunk) (*Chunk, error) {
	rec := c.Rec
	n := int(rec.NumRows())
	args := make([][]arrow.Array, len(p.Funcs))
	defer func() {
		for _, as := range args {
			for _, a := range as {
				a.Release()
			}
		}
	}()
	for f, fn := range p.Funcs {
		for _, e := range fn.Args {
			a, err := e.Eval(ec, rec)
			if err != nil && env.OnRowError != nil {
				a, err = evalRows(env, ec, e, rec) // the failing rows' argument is NULL
			}
			if err != nil {
				return nil, err
			}
			args[f] = append(args[f], a)
		}
	}
	var take []int32 // per output row, its input row
	var ords []int64 // per output row, its ordinality (0: NULL)
	var cand []bool  // with Keep and Outer: per output row, whether it is the row's NULL row, kept only if none of its values is
	vals := make([][]types.Value, len(p.Funcs))
	per := make([][]types.Value, len(p.Funcs))
	argvs := make([][]types.Value, len(p.Funcs)) // a row's arguments, per function (drained before the next row)
	for f, fn := range p.Funcs {
		argvs[f] = make([]types.Value, len(fn.Args))
	}
	for row := 0; row < n; row++ {
		most, failed := 0, false
		for f, fn := range p.Funcs {
			argv := argvs[f]
			for i, a := range args[f] {
				argv[i] = types.ValueAt(a, row, fn.Args[i].Type())
			}
			vs, err := setValues(ec, fn, argv)
			if err != nil {
				if env.OnRowError == nil {
					return nil, err
				}
				env.OnRowError(err)
				failed = true
				break
			}
			per[f] = vs
			most = max(most, len(vs))
		}
		if failed {
			continue
		}
		// rows: the row's values; with Outer and Keep, then its NULL row,
		// chosen after Keep (cand); with Outer alone, its NULL row when it
		// has no value
		rows := most
		switch {
		case p.Outer && p.Keep != nil:
			rows = most + 1
		case p.Outer && most == 0:
			rows = 1
		}
		for k := 0; k < rows; k++ {
			null := k >= most // the row's NULL row
			take = append(take, int32(row))
			if p.Outer && p.Keep != nil {
				cand = append(cand, null)
			}
			if p.Ordinality {
				ord := int64(k + 1)
				if null {
					ord = 0 // NULL
				}
				ords = append(ords, ord)
			}
			for f := range p.Funcs {
				var v types.Value
				if !null && k < len(per[f]) {
					v = per[f][k]
				}
				vals[f] = append(vals[f], v)
			}
		}
	}
	if len(take) == 0 {
		return nil, nil
	}
	in := exec.TakeRowsFrom(ec.Allocator(), inSchema, []arrow.RecordBatch{rec}, [][]int32{take})
	defer in.Release()
	cols := make([]arrow.Array, 0, len(p.Cols))
	for i := 0; i < int(in.NumCols()); i++ {
		a := in.Column(i)
		a.Retain()
		cols = append(cols, a)
	}
	blds, ts := lay.FuncBuilders(ec.Allocator())
	defer func() {
		for _, bs := range blds {
			for _, b := range bs {
				b.Release()
			}
		}
	}()
	for f, fn := range p.Funcs {
		for _, v := range vals[f] {
			if err := fn.AppendValue(blds[f], ts[f], v); err != nil {
				for _, a := range cols {
					a.Release()
				}
				return nil, err
			}
		}
		for _, b := range blds[f] {
			cols = append(cols, b.NewArray())
		}
	}
	if p.Ordinality {
		b := array.NewInt64Builder(ec.Allocator())
		for _, o := range ords {
			if o == 0 {
				b.AppendNull()
			} else {
				b.Append(o)
			}
		}
		cols = append(cols, b.NewArray())
		b.Release()
	}
	out := &Chunk{Rec: array.NewRecordBatch(schema, cols, int64(len(take)))}
	for _, a := range cols {
		a.Release()
	}
	if c.Ops != nil {
		out.Ops = make([]Op, len(take))
		for i, r := range take {
			if c.Ops[r].Sign() < 0 {
				out.Ops[i] = Delete
			} else {
				out.Ops[i] = Insert
			}
		}
	}
	if p.Keep == nil {
		return out, nil
	}
	return p.keep(env, ec, out, take, cand)
}

// keep selects the rows of out (expand's, take and cand as it made them)
// that meet Keep, and, with Outer, each input row's NULL row when none
// of its values does. The ops are each row's own (no update pairs), so
// any selection of them is a well-formed changelog.
func (p *ProjectSet) keep(env *Env, ec *expr.Context, out *Chunk, take []int32, cand []bool) (*Chunk, error) {
	a, err := p.Keep.Eval(ec, out.Rec)
	if err != nil && env.OnRowError != nil {
		a, err = evalRows(env, ec, p.Keep, out.Rec) // failing rows: NULL, so not kept
	}
	if err != nil {
		return nil, err
	}
	defer a.Release()
	mask := a.(*array.Boolean)
	sel := make([]bool, len(take))
	var ops []Op
	n := 0
	met := false // the current input row has a value that meets Keep
	for i := range take {
		if i == 0 || take[i] != take[i-1] {
			met = false
		}
		if cand != nil && cand[i] {
			sel[i] = !met
		} else {
			sel[i] = mask.IsValid(i) && mask.Value(i)
			met = met || sel[i]
		}
		if sel[i] {
			n++
			if out.Ops != nil {
				ops = append(ops, out.Ops[i])
			}
		}
	}
	if n == 0 {
		return nil, nil
	}
	return &Chunk{Rec: exec.SelectRows(ec.Allocator(), out.Rec, sel, true), Ops: ops}, nil
}

// layout is p as the batch engine's ProjectSet, for its column layout
// (InputCols, FuncBuilders).
func (p *ProjectSet) layout() *exec.ProjectSet {
	return &exec.ProjectSet{Funcs: p.Funcs, Cols: p.Cols, Outer: p.Outer, Ordinality: p.Ordinality}
}

// setValues is all of fn's values for one row's arguments (a function
// of several columns: each a []types.Value).
func setValues(ec *expr.Context, fn exec.SetFunc, args []types.Value) ([]types.Value, error) {
	gen, err := fn.Generator(ec, args)
	if err != nil {
		return nil, err
	}
	var vs []types.Value
	for {
		v, ok, err := gen()
		if err != nil || !ok {
			return vs, err
		}
		if len(vs) == maxSetValues {
			return nil, tooManyValues(fn.Name)
		}
		vs = append(vs, v)
	}
}

func tooManyValues(name string) error {
	return pgerr.New(pgerr.ProgramLimitExceeded, "%s gives more than %d rows for one row of a materialized view's input", name, maxSetValues)
}
