package expr

import (
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Type returns the function's result type.
func (e *Call) Type() types.T { return e.Fn.Return }

// String renders operators infix ((a + b)) and functions as name(args).
func (e *Call) String() string {
	if isOperatorName(e.Fn.Name) {
		if len(e.Args) == 1 {
			return "(" + e.Fn.Name + " " + e.Args[0].String() + ")"
		}
		if len(e.Args) == 2 {
			return "(" + e.Args[0].String() + " " + e.Fn.Name + " " + e.Args[1].String() + ")"
		}
	}
	parts := make([]string, len(e.Args))
	for i, a := range e.Args {
		parts[i] = a.String()
	}
	return e.Fn.Name + "(" + strings.Join(parts, ", ") + ")"
}

func isOperatorName(name string) bool {
	return name != "" && strings.IndexAny(name[:1], "+-*/<>=~!@#%^&|`?") == 0
}

// Eval evaluates the arguments and applies the kernel. For a Strict function
// whose kernel does not handle NULLs itself, the kernel sees only the rows
// where every argument is non-NULL and the other rows are NULL.
func (e *Call) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	args := make([]arrow.Array, len(e.Args))
	defer func() {
		for _, a := range args {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, a := range e.Args {
		v, err := a.Eval(ctx, b)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	return callKernel(ctx, e.Fn, args, n)
}

// evalElement evaluates e(args)[k] with the function's Element kernel.
func (e *Call) evalElement(ctx *Context, b arrow.RecordBatch, k int64) (arrow.Array, error) {
	args := make([]arrow.Array, len(e.Args))
	defer releaseAll(args)
	for i, a := range e.Args {
		v, err := a.Eval(ctx, b)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	return e.Fn.Element(ctx, args, int(b.NumRows()), k)
}

func callKernel(ctx *Context, f *Func, args []arrow.Array, n int) (arrow.Array, error) {
	if f.Kernel == nil {
		return nil, pgerr.Unsupported("function %s is not implemented", f.Name)
	}
	mem := ctx.Allocator()
	if !f.Strict || f.nullSafe || len(args) == 0 {
		return f.Kernel(ctx, args, n)
	}
	bm := andValidity(n, args...)
	if bm == nil {
		return f.Kernel(ctx, args, n)
	}
	var rows []int
	scatter := make([]int, n)
	for i := 0; i < n; i++ {
		if isValid(bm, i) {
			scatter[i] = len(rows)
			rows = append(rows, i)
		} else {
			scatter[i] = -1
		}
	}
	if len(rows) == 0 {
		return allNull(mem, f.Return.ArrowType(), n), nil
	}
	sub := make([]arrow.Array, len(args))
	for i, a := range args {
		sub[i] = takeRows(mem, a, rows)
	}
	defer releaseAll(sub)
	res, err := f.Kernel(ctx, sub, len(rows))
	if err != nil {
		return nil, err
	}
	defer res.Release()
	return takeRows(mem, res, scatter), nil
}

func releaseAll(as []arrow.Array) {
	for _, a := range as {
		if a != nil {
			a.Release()
		}
	}
}

// RowKernel adapts a row-at-a-time function to a Kernel, for functions that
// are not on hot paths (catalog functions, rarely used string functions).
// fn sees each row's arguments as Values (nil is NULL; a Strict Func never
// sees NULLs) and returns a Value of type ret.
func RowKernel(ret types.T, argTypes []types.T, fn func(ctx *Context, args []types.Value) (types.Value, error)) func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
	return func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		return rowKernel(ctx.Allocator(), ctx, ret, argTypes, fn, args, n)
	}
}

// checkBuild checks, before building it, an array of text or bytea values
// of n bytes in all: against the statement's memory budget, and against
// Arrow's 32-bit offsets (2 GB per array) even without a budget.
func checkBuild(ctx *Context, n int64) error {
	if n > math.MaxInt32 {
		return membudget.OutOfMemory(n)
	}
	return ctx.MemBudget().Check(n)
}

// valueBytes is the length of a text or bytea value (0 for others).
func valueBytes(v types.Value) int64 {
	switch x := v.(type) {
	case string:
		return int64(len(x))
	case []byte:
		return int64(len(x))
	}
	return 0
}

func rowKernel(mem memory.Allocator, ctx *Context, ret types.T, argTypes []types.T, fn func(ctx *Context, args []types.Value) (types.Value, error), args []arrow.Array, n int) (arrow.Array, error) {
	out := make([]types.Value, n)
	row := make([]types.Value, len(args))
	ts := make([]types.T, len(args))
	for j, a := range args {
		t := types.TUnknown
		if j < len(argTypes) {
			t = argTypes[j]
		}
		ts[j] = fitType(a, t)
	}
	var built int64 // bytes of text and bytea values built so far
	for i := 0; i < n; i++ {
		for j, a := range args {
			row[j] = valueAt(a, i, ts[j])
		}
		v, err := fn(ctx, row)
		if err != nil {
			return nil, err
		}
		if sz := valueBytes(v); sz > 0 {
			if err := membudget.AllocRequest(sz + 4); err != nil {
				return nil, err
			}
			// The batch's values live together until the array is built
			// (twice: once as Go strings, once in the Arrow buffer).
			built += sz
			if err := checkBuild(ctx, 2*built); err != nil {
				return nil, err
			}
		}
		out[i] = v
	}
	return buildValues(mem, out, ret)
}
