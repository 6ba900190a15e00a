package expr

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// CASE, COALESCE and NULLIF. CASE and COALESCE evaluate each branch only on
// the rows that reach it, so an error in a branch (1/x) only counts for
// those rows, as in PostgreSQL.

// evalCompact evaluates e on rows of b and returns len(rows) values.
func evalCompact(ctx *Context, e Expr, b arrow.RecordBatch, rows []int) (arrow.Array, error) {
	if len(rows) == int(b.NumRows()) {
		return e.Eval(ctx, b)
	}
	sub := sliceBatch(ctx.Allocator(), b, rows, e)
	defer sub.Release()
	return e.Eval(ctx, sub)
}

// assemble builds the result from compact parts: row i takes element
// pick[i] of the concatenation of parts (-1: NULL).
func assemble(ctx *Context, t types.T, parts []arrow.Array, pick []int) (arrow.Array, error) {
	mem := ctx.Allocator()
	if len(parts) == 0 {
		return allNull(mem, t.ArrowType(), len(pick)), nil
	}
	var all arrow.Array
	if len(parts) == 1 {
		all = parts[0]
		all.Retain()
	} else {
		var err error
		if all, err = array.Concatenate(parts, mem); err != nil {
			return nil, err
		}
	}
	defer all.Release()
	return takeRows(mem, all, pick), nil
}

// Type returns the CASE result type.
func (e *Case) Type() types.T { return e.T }

// Eval evaluates each WHEN on the rows not yet matched and each THEN on the
// rows its WHEN matched. A CASE whose WHENs all compare one expression
// with constants goes through evalSimple (case_simple.go).
func (e *Case) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	if x, consts := e.simpleSubject(); x != nil {
		if out, ok, err := e.evalSimple(ctx, b, x, consts); ok || err != nil {
			return out, err
		}
	}
	n := int(b.NumRows())
	remaining := make([]int, n)
	for i := range remaining {
		remaining[i] = i
	}
	br := e.newBranches(ctx, b)
	defer br.release()
	for _, w := range e.Whens {
		if len(remaining) == 0 {
			break
		}
		c, err := evalCompact(ctx, w.Cond, b, remaining)
		if err != nil {
			return nil, err
		}
		v, m := boolBits(c)
		var hit, rest []int
		for k, r := range remaining {
			if bitutil.BitIsSet(m, k) && bitutil.BitIsSet(v, k) {
				hit = append(hit, r)
			} else {
				rest = append(rest, r)
			}
		}
		c.Release()
		if err := br.add(w.Result, hit); err != nil {
			return nil, err
		}
		remaining = rest
	}
	if e.Else != nil {
		if err := br.add(e.Else, remaining); err != nil {
			return nil, err
		}
	}
	return assemble(ctx, e.T, br.parts, br.pick)
}

// branches collects the results of a CASE's branches, each evaluated on
// its rows, and where each row's value is among them.
type branches struct {
	ctx   *Context
	b     arrow.RecordBatch
	t     types.T
	parts []arrow.Array
	pick  []int // row -> index into the concatenated parts (-1: NULL)
	base  int
}

func (e *Case) newBranches(ctx *Context, b arrow.RecordBatch) *branches {
	pick := make([]int, b.NumRows())
	for i := range pick {
		pick[i] = -1
	}
	return &branches{ctx: ctx, b: b, t: e.T, pick: pick}
}

// add evaluates res on rows.
func (br *branches) add(res Expr, rows []int) error {
	if len(rows) == 0 {
		return nil
	}
	a, err := evalCompact(br.ctx, res, br.b, rows)
	if err != nil {
		return err
	}
	a, err = castTo(br.ctx, a, res.Type(), br.t)
	if err != nil {
		return err
	}
	br.parts = append(br.parts, a)
	for k, r := range rows {
		br.pick[r] = br.base + k
	}
	br.base += len(rows)
	return nil
}

func (br *branches) release() { releaseAll(br.parts) }

// castTo converts a to type to when its SQL type differs (the binder
// normally coerces branches already).
func castTo(ctx *Context, a arrow.Array, from, to types.T) (arrow.Array, error) {
	if from.Equal(to) || (from.SameKind(to) && to.Typmod < 0) || from.Kind == types.Unknown && a.NullN() == a.Len() {
		if from.Kind == types.Unknown && !to.IsString() {
			defer a.Release()
			return allNull(ctx.Allocator(), to.ArrowType(), a.Len()), nil
		}
		return a, nil
	}
	defer a.Release()
	return castArray(ctx, a, from, to, false)
}

func (e *Case) String() string {
	var sb strings.Builder
	sb.WriteString("CASE")
	for _, w := range e.Whens {
		sb.WriteString(" WHEN " + w.Cond.String() + " THEN " + w.Result.String())
	}
	if e.Else != nil {
		sb.WriteString(" ELSE " + e.Else.String())
	}
	sb.WriteString(" END")
	return sb.String()
}

// NewCase builds a searched CASE: the conditions are coerced to boolean and
// the results to their common type (42804 `CASE types integer and text
// cannot be matched`). els may be nil.
func NewCase(whens []When, els Expr) (*Case, error) {
	// The ELSE comes first, as in PostgreSQL's transformCaseExpr: it wins
	// between types that convert both ways (char(n) and text).
	ts := make([]types.T, 0, len(whens)+1)
	if els != nil {
		ts = append(ts, els.Type())
	}
	for _, w := range whens {
		ts = append(ts, w.Result.Type())
	}
	t, err := CommonType(ts, "CASE")
	if err != nil {
		return nil, err
	}
	out := &Case{T: t, Whens: make([]When, len(whens))}
	for i, w := range whens {
		c, err := coerceBool(w.Cond, "CASE/WHEN")
		if err != nil {
			return nil, err
		}
		r, err := coerceImplicit(w.Result, t)
		if err != nil {
			return nil, err
		}
		out.Whens[i] = When{Cond: c, Result: r}
	}
	if els != nil {
		if out.Else, err = coerceImplicit(els, t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// coerceBool converts a condition to boolean (unknown literals parse as
// boolean); other types fail with PostgreSQL's 42804 message.
func coerceBool(e Expr, construct string) (Expr, error) {
	t := e.Type()
	if t.Kind == types.Bool {
		return e, nil
	}
	if t.Kind == types.Unknown {
		return coerceImplicit(e, types.TBool)
	}
	return nil, pgerr.New(pgerr.DatatypeMismatch, "argument of %s must be type boolean, not type %s", construct, t)
}

// Type returns the COALESCE result type.
func (e *Coalesce) Type() types.T { return e.T }

// Eval evaluates each argument only on the rows still NULL.
func (e *Coalesce) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	remaining := make([]int, n)
	pick := make([]int, n)
	for i := range remaining {
		remaining[i], pick[i] = i, -1
	}
	var parts []arrow.Array
	defer func() { releaseAll(parts) }()
	base := 0
	for _, arg := range e.Args {
		if len(remaining) == 0 {
			break
		}
		a, err := evalCompact(ctx, arg, b, remaining)
		if err != nil {
			return nil, err
		}
		if a, err = castTo(ctx, a, arg.Type(), e.T); err != nil {
			return nil, err
		}
		parts = append(parts, a)
		var rest []int
		for k, r := range remaining {
			if a.IsValid(k) {
				pick[r] = base + k
			} else {
				rest = append(rest, r)
			}
		}
		base += a.Len()
		remaining = rest
	}
	return assemble(ctx, e.T, parts, pick)
}

func (e *Coalesce) String() string {
	return "COALESCE" + joinExprs(e.Args, ", ")
}

// NewCoalesce coerces the arguments to their common type.
func NewCoalesce(args []Expr) (*Coalesce, error) {
	t, err := CommonType(typesOf(args), "COALESCE")
	if err != nil {
		return nil, err
	}
	out := &Coalesce{T: t, Args: make([]Expr, len(args))}
	for i, a := range args {
		if out.Args[i], err = coerceImplicit(a, t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Type is the type of the first argument.
func (e *NullIf) Type() types.T { return e.L.Type() }

// Eval returns L, or NULL where L = R.
func (e *NullIf) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	l, err := e.L.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	eq, err := evalEq(ctx, e.Eq, l, e.L.Type(), e.R, b)
	if err != nil {
		return nil, err
	}
	defer eq.Release()
	v, m := boolBits(eq)
	pick := make([]int, l.Len())
	for i := range pick {
		pick[i] = i
		if bitutil.BitIsSet(m, i) && bitutil.BitIsSet(v, i) {
			pick[i] = -1
		}
	}
	return takeRows(ctx.Allocator(), l, pick), nil
}

// evalEq evaluates r and applies eq to (l, r), casting both to eq's types.
func evalEq(ctx *Context, eq *Func, l arrow.Array, lt types.T, r Expr, b arrow.RecordBatch) (arrow.Array, error) {
	ra, err := r.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer ra.Release()
	return eqArrays(ctx, eq, l, lt, ra, r.Type())
}

// eqArrays applies eq to l and r after casting them to eq's argument types.
func eqArrays(ctx *Context, eq *Func, l arrow.Array, lt types.T, r arrow.Array, rt types.T) (arrow.Array, error) {
	l.Retain()
	la, err := castTo(ctx, l, lt, eq.Args[0])
	if err != nil {
		return nil, err
	}
	defer la.Release()
	r.Retain()
	ra, err := castTo(ctx, r, rt, eq.Args[1])
	if err != nil {
		return nil, err
	}
	defer ra.Release()
	return callKernel(ctx, eq, []arrow.Array{la, ra}, la.Len())
}

func (e *NullIf) String() string { return "NULLIF(" + e.L.String() + ", " + e.R.String() + ")" }

// NewNullIf resolves the equality of NULLIF(l, r).
func NewNullIf(l, r Expr) (*NullIf, error) {
	f, err := resolveEq(l, r)
	if err != nil {
		return nil, err
	}
	return &NullIf{L: l, R: r, Eq: f}, nil
}

// NewIsDistinct resolves the equality of `l IS [NOT] DISTINCT FROM r`.
func NewIsDistinct(l, r Expr, not bool) (*IsDistinct, error) {
	f, err := resolveEq(l, r)
	if err != nil {
		return nil, err
	}
	lc, err := coerceImplicit(l, f.Args[0])
	if err != nil {
		return nil, err
	}
	rc, err := coerceImplicit(r, f.Args[1])
	if err != nil {
		return nil, err
	}
	return &IsDistinct{L: lc, R: rc, Not: not, Eq: f}, nil
}

// resolveEq finds the "=" operator for l and r.
func resolveEq(l, r Expr) (*Func, error) {
	e, err := NewBinary("=", l, r)
	if err != nil {
		return nil, err
	}
	c, ok := e.(*Call)
	if !ok {
		return nil, pgerr.Internal("= did not resolve to a function")
	}
	return c.Fn, nil
}
