package catalog

import (
	"strings"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// The sequence functions: nextval, currval, setval, lastval,
// pg_sequence_last_value. They are volatile (never folded, evaluated per
// row) and reach the session's state of each sequence (currval, lastval,
// its preallocated CACHE values) through expr.Context.Session, which must
// implement SeqSession (the engine's session does); each checks the
// session's privileges on the sequence as PostgreSQL does.

// SeqSession is the per-session state of the sequence functions.
type SeqSession interface {
	// SeqLocal runs fn on the session's state of sequence oid (a zero
	// SeqLocal on first use), serialized with the session's other
	// sequence calls. nextval says fn is nextval: when it succeeds, oid
	// becomes lastval's sequence.
	SeqLocal(oid uint32, nextval bool, fn func(l *SeqLocal) error) error
	// SeqLast is lastval's sequence; ok false before any nextval.
	SeqLast() (oid uint32, ok bool)
	// SeqAccess checks that the session holds one of the privileges of
	// need on sequence rel: 42501 `permission denied for sequence s`.
	SeqAccess(rel *Relation, need Privilege) error
}

func seqSession(ctx *expr.Context) SeqSession {
	if ctx == nil {
		return nil
	}
	s, _ := ctx.Session.(SeqSession)
	return s
}

// withSeq resolves a sequence argument, checks that the session holds one
// of the privileges of need on it, and runs fn on the session's state of
// it. Without a session (the server's own evaluation) nothing is checked
// and the state is a throwaway one.
func withSeq(ctx *expr.Context, a types.Value, need Privilege, nextval bool, fn func(c *Catalog, r *Relation, l *SeqLocal) error) error {
	c := catalogOf(ctx)
	if c == nil {
		return pgerr.Unsupported("sequence functions need a catalog")
	}
	r, err := c.sequence(oidArg(a))
	if err != nil {
		return err
	}
	ss := seqSession(ctx)
	if ss == nil {
		return fn(c, r, &SeqLocal{})
	}
	if err := ss.SeqAccess(r, need); err != nil {
		return err
	}
	return ss.SeqLocal(r.OID, nextval, func(l *SeqLocal) error { return fn(c, r, l) })
}

// The privileges each function needs (one of them), as PostgreSQL checks.
const (
	needNextval = PrivUsage | PrivUpdate
	needCurrval = PrivUsage | PrivSelect
	needSetval  = PrivUpdate
)

func init() {
	i8, b, regclass := types.TInt8, types.TBool, types.TRegClass
	reg := func(n string, args []types.T, fn func(ctx *expr.Context, a []types.Value) (types.Value, error)) {
		expr.Register(&expr.Func{Name: n, Args: args, Return: i8, Strict: true, Volatile: true, Kernel: expr.RowKernel(i8, args, fn)})
	}
	reg("nextval", []types.T{regclass}, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		var v int64
		err := withSeq(ctx, a[0], needNextval, true, func(c *Catalog, r *Relation, l *SeqLocal) (err error) {
			v, err = c.NextVal(r.OID, l)
			return err
		})
		if err != nil {
			return nil, err
		}
		return v, nil
	})
	reg("currval", []types.T{regclass}, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		var v int64
		err := withSeq(ctx, a[0], needCurrval, false, func(c *Catalog, r *Relation, l *SeqLocal) error {
			if !l.LastValid {
				return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "currval of sequence \"%s\" is not yet defined in this session", r.Name)
			}
			v = l.Last
			return nil
		})
		if err != nil {
			return nil, err
		}
		return v, nil
	})
	setval := func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		v, called := a[1].(int64), true
		if len(a) > 2 {
			called = a[2].(bool)
		}
		err := withSeq(ctx, a[0], needSetval, false, func(c *Catalog, r *Relation, l *SeqLocal) error {
			return c.SetVal(r.OID, v, called, l)
		})
		if err != nil {
			return nil, err
		}
		return v, nil
	}
	reg("setval", []types.T{regclass, i8}, setval)
	reg("setval", []types.T{regclass, i8, b}, setval)
	// pg_sequence_last_value: the sequence's last value handed out to any
	// session (pg_sequences.last_value), NULL before the first.
	reg("pg_sequence_last_value", []types.T{regclass}, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		c := catalogOf(ctx)
		if c == nil {
			return nil, pgerr.Unsupported("sequence functions need a catalog")
		}
		r, err := c.sequence(oidArg(a[0]))
		if err != nil {
			return nil, err
		}
		if ss := seqSession(ctx); ss != nil {
			if err := ss.SeqAccess(r, needCurrval); err != nil {
				return nil, err
			}
		}
		if v, ok := c.SeqLastValue(r); ok {
			return v, nil
		}
		return nil, nil
	})
	text := types.TText
	serialArgs := []types.T{text, text}
	expr.Register(&expr.Func{Name: "pg_get_serial_sequence", Args: serialArgs, Return: text, Strict: true,
		Kernel: expr.RowKernel(text, serialArgs, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
			c := catalogOf(ctx)
			if c == nil {
				return nil, nil
			}
			oid, err := c.RelationOID(a[0].(string), searchPathOf(ctx))
			if err != nil {
				return nil, err
			}
			r := c.Relation(oid)
			col := a[1].(string)
			if len(col) >= 2 && col[0] == '"' && col[len(col)-1] == '"' {
				col = strings.ReplaceAll(col[1:len(col)-1], `""`, `"`)
			} else {
				col = strings.ToLower(col)
			}
			i := -1
			if r != nil {
				i = r.ColumnIndex(col)
			}
			if i < 0 {
				name := a[0].(string)
				if r != nil {
					name = r.Name
				}
				return nil, pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", col, name)
			}
			if name, ok := c.SerialSequence(oid, int16(i+1)); ok {
				return name, nil
			}
			return nil, nil
		})})
	reg("lastval", nil, func(ctx *expr.Context, _ []types.Value) (types.Value, error) {
		notYet := pgerr.New(pgerr.ObjectNotInPrerequisiteState, "lastval is not yet defined in this session")
		ss := seqSession(ctx)
		if ss == nil {
			return nil, notYet
		}
		oid, ok := ss.SeqLast()
		if !ok {
			return nil, notYet
		}
		if c := catalogOf(ctx); c == nil || c.snap().byOID[oid] == nil { // dropped since
			return nil, notYet
		}
		var v int64
		err := withSeq(ctx, int64(oid), needCurrval, false, func(_ *Catalog, _ *Relation, l *SeqLocal) error {
			if !l.LastValid {
				return notYet
			}
			v = l.Last
			return nil
		})
		if err != nil {
			return nil, err
		}
		return v, nil
	})
}
