package catalog

import (
	"strings"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// The sequence functions: nextval, currval, setval, lastval. They are
// volatile (never folded, evaluated per row) and reach the session's
// currval/lastval state through expr.Context.Session, which must implement
// SeqSession (the engine's session does).

// SeqSession is the per-session state of the sequence functions. Used by one
// statement at a time (a session runs one statement at a time).
type SeqSession interface {
	// SeqRecord remembers v as sequence oid's currval; nextval also makes
	// it lastval.
	SeqRecord(oid uint32, v int64, last bool)
	// SeqCurr is currval's value; ok false before nextval in this session.
	SeqCurr(oid uint32) (v int64, ok bool)
	// SeqLast is lastval's sequence and value.
	SeqLast() (oid uint32, v int64, ok bool)
	// SeqAccess checks that the session may use sequence rel.
	SeqAccess(rel *Relation) error
}

func seqSession(ctx *expr.Context) SeqSession {
	if ctx == nil {
		return nil
	}
	s, _ := ctx.Session.(SeqSession)
	return s
}

// seqFor resolves a sequence argument and checks the session's access.
func seqFor(ctx *expr.Context, a types.Value) (*Catalog, *Relation, SeqSession, error) {
	c := catalogOf(ctx)
	if c == nil {
		return nil, nil, nil, pgerr.Unsupported("sequence functions need a catalog")
	}
	r, err := c.sequence(oidArg(a))
	if err != nil {
		return nil, nil, nil, err
	}
	ss := seqSession(ctx)
	if ss != nil {
		if err := ss.SeqAccess(r); err != nil {
			return nil, nil, nil, err
		}
	}
	return c, r, ss, nil
}

func init() {
	i8, b, regclass := types.TInt8, types.TBool, types.TRegClass
	reg := func(n string, args []types.T, fn func(ctx *expr.Context, a []types.Value) (types.Value, error)) {
		expr.Register(&expr.Func{Name: n, Args: args, Return: i8, Strict: true, Volatile: true, Kernel: expr.RowKernel(i8, args, fn)})
	}
	reg("nextval", []types.T{regclass}, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		c, r, ss, err := seqFor(ctx, a[0])
		if err != nil {
			return nil, err
		}
		v, err := c.NextVal(r.OID)
		if err != nil {
			return nil, err
		}
		if ss != nil {
			ss.SeqRecord(r.OID, v, true)
		}
		return v, nil
	})
	reg("currval", []types.T{regclass}, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		_, r, ss, err := seqFor(ctx, a[0])
		if err != nil {
			return nil, err
		}
		if ss != nil {
			if v, ok := ss.SeqCurr(r.OID); ok {
				return v, nil
			}
		}
		return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "currval of sequence \"%s\" is not yet defined in this session", r.Name)
	})
	setval := func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		c, r, ss, err := seqFor(ctx, a[0])
		if err != nil {
			return nil, err
		}
		v, called := a[1].(int64), true
		if len(a) > 2 {
			called = a[2].(bool)
		}
		if err := c.SetVal(r.OID, v, called); err != nil {
			return nil, err
		}
		if ss != nil && called {
			ss.SeqRecord(r.OID, v, false)
		}
		return v, nil
	}
	reg("setval", []types.T{regclass, i8}, setval)
	reg("setval", []types.T{regclass, i8, b}, setval)
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
		ss := seqSession(ctx)
		if ss != nil {
			if oid, v, ok := ss.SeqLast(); ok {
				if c := catalogOf(ctx); c != nil {
					if r, err := c.sequence(oid); err == nil {
						if err := ss.SeqAccess(r); err != nil {
							return nil, err
						}
						return v, nil
					}
				}
			}
		}
		return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "lastval is not yet defined in this session")
	})
}
