package expr

import (
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// A CASE whose WHENs all test one expression for equality with constants
// (`CASE lower(channel) WHEN 'apple' THEN ... WHEN 'google' ...`, or the
// same written as searched WHENs) evaluates that expression once over the
// batch and picks each row's branch by looking its value up, instead of
// evaluating every WHEN on the rows the previous ones left. The subject
// must not be volatile: it is then the same value in every WHEN, and
// evaluating it on all rows is what the first WHEN does anyway (so an
// error it raises is raised either way). Text (not bpchar: its equality
// ignores trailing spaces) and integer subjects compare by value, as
// their "=" does.

// simpleSubject returns the expression every WHEN compares and the
// constant of each WHEN, or nil when the CASE is not of that form.
func (e *Case) simpleSubject() (Expr, []types.Value) {
	if len(e.Whens) < 2 {
		return nil, nil
	}
	var x Expr
	consts := make([]types.Value, len(e.Whens))
	for i, w := range e.Whens {
		c, ok := w.Cond.(*Call)
		if !ok || c.Fn.Name != "=" || len(c.Args) != 2 || len(c.Fn.Args) != 2 {
			return nil, nil
		}
		sub, k := c.Args[0], c.Args[1]
		if _, ok := sub.(*Const); ok {
			sub, k = k, sub
		}
		kc, ok := k.(*Const)
		if !ok {
			return nil, nil
		}
		t0, t1 := c.Fn.Args[0], c.Fn.Args[1]
		switch {
		case isPlainText(t0) && isPlainText(t1):
			if _, ok := kc.V.(string); !ok && kc.V != nil {
				return nil, nil
			}
		case t0.IsInteger() && t1.IsInteger():
			if _, ok := kc.V.(int64); !ok && kc.V != nil {
				return nil, nil
			}
		default:
			return nil, nil
		}
		if x == nil {
			if !stableScalar(sub) {
				return nil, nil
			}
			x = sub
		} else if !sameExpr(x, sub) {
			return nil, nil
		}
		consts[i] = kc.V
	}
	return x, consts
}

func isPlainText(t types.T) bool {
	return t.Kind == types.Text || t.Kind == types.Varchar || t.Kind == types.Name
}

// stableScalar reports whether e is built of column references,
// constants, casts and calls of functions that are not volatile.
func stableScalar(e Expr) bool {
	switch x := e.(type) {
	case *ColRef, *Const:
		return true
	case *Cast:
		return stableScalar(x.E)
	case *Call:
		if x.Fn.Volatile {
			return false
		}
		for _, a := range x.Args {
			if !stableScalar(a) {
				return false
			}
		}
		return true
	}
	return false
}

// sameExpr reports whether a and b (built by stableScalar's nodes) are
// the same computation.
func sameExpr(a, b Expr) bool {
	switch x := a.(type) {
	case *ColRef:
		y, ok := b.(*ColRef)
		return ok && x.Idx == y.Idx && x.T.Equal(y.T)
	case *Const:
		y, ok := b.(*Const)
		return ok && x.T.Equal(y.T) && reflect.DeepEqual(x.V, y.V)
	case *Cast:
		y, ok := b.(*Cast)
		return ok && x.To.Equal(y.To) && x.Explicit == y.Explicit && sameExpr(x.E, y.E)
	case *Call:
		y, ok := b.(*Call)
		if !ok || x.Fn != y.Fn || len(x.Args) != len(y.Args) {
			return false
		}
		for i := range x.Args {
			if !sameExpr(x.Args[i], y.Args[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// evalSimple evaluates x once and sends each row to the first WHEN whose
// constant equals its value (no WHEN for NULL), the others to ELSE. ok
// is false, with nothing evaluated, when x's values are not text or
// integers as expected.
func (e *Case) evalSimple(ctx *Context, b arrow.RecordBatch, x Expr, consts []types.Value) (out arrow.Array, ok bool, err error) {
	switch x.Type().ArrowType().ID() {
	case arrow.STRING, arrow.INT64, arrow.INT32, arrow.INT16:
	default:
		return nil, false, nil
	}
	xv, err := x.Eval(ctx, b)
	if err != nil {
		return nil, true, err
	}
	defer xv.Release()
	n := int(b.NumRows())
	branch := make([]int32, n) // WHEN index, or -1
	for i := range branch {
		branch[i] = -1
	}
	switch a := xv.(type) {
	case *array.String:
		first := make(map[string]int32, len(consts))
		for i := len(consts) - 1; i >= 0; i-- {
			if s, ok := consts[i].(string); ok {
				first[s] = int32(i)
			}
		}
		for r := 0; r < n; r++ {
			if a.IsValid(r) {
				if w, ok := first[a.Value(r)]; ok {
					branch[r] = w
				}
			}
		}
	case *array.Int64, *array.Int32, *array.Int16:
		first := make(map[int64]int32, len(consts))
		for i := len(consts) - 1; i >= 0; i-- {
			if v, ok := consts[i].(int64); ok {
				first[v] = int32(i)
			}
		}
		vals := make([]int64, n)
		readInt(xv, vals)
		for r := 0; r < n; r++ {
			if xv.IsValid(r) {
				if w, ok := first[vals[r]]; ok {
					branch[r] = w
				}
			}
		}
	default:
		return nil, true, pgerr.Internal("CASE subject evaluated to %s, not %s", xv.DataType(), x.Type())
	}
	rows := make([][]int, len(e.Whens)+1) // the last: ELSE
	for r, w := range branch {
		if w < 0 {
			rows[len(e.Whens)] = append(rows[len(e.Whens)], r)
		} else {
			rows[w] = append(rows[w], r)
		}
	}
	br := e.newBranches(ctx, b)
	defer br.release()
	for i, w := range e.Whens {
		if err := br.add(w.Result, rows[i]); err != nil {
			return nil, true, err
		}
	}
	if e.Else != nil {
		if err := br.add(e.Else, rows[len(e.Whens)]); err != nil {
			return nil, true, err
		}
	}
	out, err = assemble(ctx, e.T, br.parts, br.pick)
	return out, true, err
}
