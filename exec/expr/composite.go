package expr

import (
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// rowToComposite converts ROW(...) to a composite type of the catalog
// field by field, as PostgreSQL's coerce_record_to_complex does: each
// argument (an untyped literal as written) takes its field's type with a
// cast allowed in context c, so that ROW(1, 'ok') fills a (int, mood)
// column. ok is false when e is no ROW(...) or t no composite type.
func rowToComposite(e Expr, t types.T, c castCtx) (Expr, bool, error) {
	r, isRow := e.(*RowExpr)
	if !isRow || t.Kind != types.Record || !t.IsUserDefined() {
		return nil, false, nil
	}
	fs := t.Rec.Types
	if len(r.Args) != len(fs) {
		detail := "Input has too few columns."
		if len(r.Args) > len(fs) {
			detail = "Input has too many columns."
		}
		return nil, true, pgerr.New(pgerr.CannotCoerce, "cannot cast type %s to %s", r.T, t).WithDetail("%s", detail)
	}
	args := make([]Expr, len(fs))
	for i, a := range r.Args {
		if i < len(r.Untyped) && r.Untyped[i] != nil {
			a = r.Untyped[i]
		}
		if x, ok, err := rowToComposite(a, fs[i], c); ok {
			if err != nil {
				return nil, true, err
			}
			args[i] = x
			continue
		}
		if !canCoerce(a.Type(), fs[i], c) {
			return nil, true, pgerr.New(pgerr.CannotCoerce, "cannot cast type %s to %s", r.T, t).
				WithDetail("Cannot cast type %s to %s in column %d.", a.Type(), fs[i], i+1)
		}
		x, err := convert(a, fs[i], c == ctxExplicit)
		if err != nil {
			return nil, true, err
		}
		args[i] = x
	}
	return &RowExpr{Args: args, T: t}, true, nil
}
