package expr

import (
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Cast contexts, as pg_cast.castcontext: which casts happen implicitly (in
// expressions), on assignment (INSERT/UPDATE targets) or only explicitly.

type castCtx uint8

const (
	ctxImplicit castCtx = iota + 1
	ctxAssign
	ctxExplicit
)

var castTable = map[[2]types.Kind]castCtx{}

func init() {
	const i, a, e = ctxImplicit, ctxAssign, ctxExplicit
	k := func(from types.Kind, c castCtx, tos ...types.Kind) {
		for _, to := range tos {
			castTable[[2]types.Kind{from, to}] = c
		}
	}
	// From pg_cast (PostgreSQL 15) for the types streamsql has.
	k(types.Bool, e, types.Int4)
	k(types.Char, e, types.Int4)
	k(types.Char, i, types.Text)
	k(types.Name, i, types.Text)
	k(types.Int8, a, types.Int2, types.Int4)
	k(types.Int8, i, types.Float4, types.Float8, types.Numeric, types.Oid, types.RegClass, types.RegType, types.RegProc)
	k(types.Int2, i, types.Int4, types.Int8, types.Float4, types.Float8, types.Numeric, types.Oid, types.RegClass, types.RegType, types.RegProc)
	k(types.Int4, e, types.Bool, types.Char)
	k(types.Int4, i, types.Int8, types.Float4, types.Float8, types.Numeric, types.Oid, types.RegClass, types.RegType, types.RegProc)
	k(types.Int4, a, types.Int2)
	k(types.Text, a, types.Char)
	k(types.Text, i, types.Name, types.Bpchar, types.Varchar, types.RegClass)
	k(types.Varchar, a, types.Char)
	k(types.Varchar, i, types.Name, types.Text, types.Bpchar, types.RegClass)
	k(types.Bpchar, a, types.Char)
	k(types.Bpchar, i, types.Name, types.Text, types.Varchar)
	for _, r := range []types.Kind{types.Oid, types.RegClass, types.RegType, types.RegProc} {
		k(r, a, types.Int8, types.Int4)
		k(r, i, types.Oid, types.RegClass, types.RegType, types.RegProc)
	}
	k(types.JSON, a, types.JSONB)
	k(types.JSONB, a, types.JSON)
	k(types.JSONB, e, types.Bool, types.Int2, types.Int4, types.Int8, types.Float4, types.Float8, types.Numeric)
	k(types.Float4, a, types.Int2, types.Int4, types.Int8, types.Numeric)
	k(types.Float4, i, types.Float8)
	k(types.Float8, a, types.Int2, types.Int4, types.Int8, types.Float4, types.Numeric)
	k(types.Numeric, a, types.Int2, types.Int4, types.Int8)
	k(types.Numeric, i, types.Float4, types.Float8)
	k(types.Date, i, types.Timestamp, types.TimestampTZ)
	k(types.Time, i, types.Interval)
	k(types.Timestamp, a, types.Date, types.Time)
	k(types.Timestamp, i, types.TimestampTZ)
	k(types.TimestampTZ, a, types.Date, types.Time, types.Timestamp)
	k(types.Interval, a, types.Time)
}

// castContext returns the loosest context in which from can be cast to to,
// or 0 when no cast exists.
func castContext(from, to types.T) castCtx {
	if from.Kind == types.Unknown {
		return ctxImplicit
	}
	if from.Kind == types.Array || to.Kind == types.Array {
		if from.Kind == types.Array && to.Kind == types.Array {
			return castContext(*from.Elem, *to.Elem)
		}
		if to.IsString() && to.Kind != types.Char {
			return ctxAssign
		}
		if from.IsString() {
			return ctxExplicit
		}
		return 0
	}
	if from.Kind == types.Record && to.Kind == types.Record {
		return recordCastContext(from, to)
	}
	if from.Kind == types.Enum && to.Kind == types.Enum && !from.SameKind(to) {
		return 0 // one enum to another
	}
	if from.Kind == to.Kind {
		return ctxImplicit
	}
	if c, ok := castTable[[2]types.Kind{from.Kind, to.Kind}]; ok {
		return c
	}
	// Conversions through text I/O: to a string type on assignment, from a
	// string type explicitly.
	switch to.Kind {
	case types.Text, types.Varchar, types.Bpchar, types.Name:
		if from.Kind != types.Void {
			return ctxAssign
		}
	}
	if from.IsString() && to.Kind != types.Void {
		return ctxExplicit
	}
	return 0
}

// canCoerce reports whether from converts to to in context c.
func canCoerce(from, to types.T, c castCtx) bool {
	cc := castContext(from, to)
	return cc != 0 && cc <= c
}

// coerceImplicit converts e to t as function arguments are: an unknown
// parameter is re-typed, a constant is converted now, anything else gets a
// Cast node.
func coerceImplicit(e Expr, t types.T) (Expr, error) {
	return convert(e, t, false)
}

func convert(e Expr, t types.T, explicit bool) (Expr, error) {
	from := e.Type()
	if from.Equal(t) {
		return e, nil
	}
	if from.SameKind(t) && t.Typmod < 0 {
		return e, nil // dropping a modifier is free
	}
	if p, ok := e.(*Param); ok && from.Kind == types.Unknown {
		np := &Param{Idx: p.Idx, T: t.WithTypmod(-1)}
		if t.Typmod < 0 {
			return np, nil
		}
		e = np
	}
	c := &Cast{E: e, To: t, Explicit: explicit}
	if k, ok := e.(*Const); ok && k.V != nil && (sessionDependentInput(k.T, t) || intervalStyleInput(k, t)) {
		// Date/time input depends on DateStyle and TimeZone: parsed when
		// evaluated (Fold does it at plan time with the session's settings).
		return c, nil
	}
	if k, ok := e.(*Const); ok {
		if k.V != nil && k.T.IsString() && isRegKind(t.Kind) {
			return c, nil // a name: resolved at run time through the session's catalog
		}
		v, err := castConst(k.V, k.T, t, explicit)
		if err != nil {
			return nil, err
		}
		if zoneDependent(k.T, t) {
			return c, nil // checked now, converted in the session's zone at run time
		}
		return &Const{V: v, T: t}, nil
	}
	return c, nil
}

// isRegKind reports the OID alias types whose text input names catalog objects.
func isRegKind(k types.Kind) bool {
	return k == types.RegClass || k == types.RegType || k == types.RegProc
}

// NewCast converts e to t; explicit is true for CAST(e AS t) and e::t.
// Constants are cast at bind time so that bad literals fail early (22P02).
// An unknown-typed Param is re-typed to t instead of being wrapped.
func NewCast(e Expr, t types.T, explicit bool) (Expr, error) {
	c := ctxImplicit
	if explicit {
		c = ctxExplicit
	}
	if r, ok, err := rowToComposite(e, t, c); ok { // composite.go
		return r, err
	}
	if !canCoerce(e.Type(), t, c) {
		return nil, pgerr.New(pgerr.CannotCoerce, "cannot cast type %s to %s", e.Type(), t)
	}
	return convert(e, t, explicit)
}

// Coerce converts e to t if an implicit (assignment, when assign is true)
// cast exists, as INSERT and UNION do; otherwise 42804 datatype mismatch
// with the message `cannot cast type X to Y`: the binder, which knows the
// column name, may replace it with PostgreSQL's `column "c" is of type X but
// expression is of type Y` (and hint) for INSERT/UPDATE.
func Coerce(e Expr, t types.T, assign bool) (Expr, error) {
	c := ctxImplicit
	if assign {
		c = ctxAssign
	}
	if r, ok, err := rowToComposite(e, t, c); ok { // composite.go
		return r, err
	}
	if !canCoerce(e.Type(), t, c) {
		return nil, pgerr.New(pgerr.DatatypeMismatch, "cannot cast type %s to %s", e.Type(), t)
	}
	// The target's modifier applies as for an implicit cast: varchar(n)
	// length check, numeric(p,s) rounding.
	return convert(e, t, false)
}

// CommonType picks the result type of CASE, COALESCE, UNION, IN lists and
// VALUES columns from the candidate types, as PostgreSQL's
// select_common_type does; context names the construct for the error
// message ("CASE", "UNION", "COALESCE", "VALUES"). All-unknown inputs give
// text. The modifier is kept only when every input has the same one.
func CommonType(ts []types.T, context string) (types.T, error) {
	if t, ok, err := commonRecord(ts, context); ok || err != nil {
		return t, err
	}
	var p types.T
	found := false
	for _, t := range ts {
		if t.Kind == types.Unknown {
			continue
		}
		if !found {
			p, found = t, true
			continue
		}
		if t.SameKind(p) {
			continue
		}
		if t.Category() != p.Category() {
			return types.T{}, pgerr.New(pgerr.DatatypeMismatch, "%s types %s and %s cannot be matched", context, p.WithTypmod(-1), t.WithTypmod(-1))
		}
		if !isPreferred(p) && canCoerce(p, t, ctxImplicit) && !canCoerce(t, p, ctxImplicit) {
			p = t
		}
	}
	if !found {
		return types.TText, nil
	}
	mod := int32(-2)
	for _, t := range ts {
		if t.Kind == types.Unknown || !t.SameKind(p) {
			mod = -1
			break
		}
		if mod == -2 {
			mod = t.Typmod
		} else if mod != t.Typmod {
			mod = -1
		}
	}
	if mod < -1 {
		mod = -1
	}
	p = p.WithTypmod(mod)
	for _, t := range ts {
		if !canCoerce(t, p, ctxImplicit) {
			return types.T{}, pgerr.New(pgerr.CannotCoerce, "%s could not convert type %s to %s", context, t, p)
		}
	}
	return p, nil
}
