package expr

import (
	"os"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Session and system information functions: version(), current_user,
// current_schema, current_setting, pg_backend_pid, pg_typeof...

// Version is what version() returns. Drivers parse the "PostgreSQL 15.0"
// prefix to decide which features the server has.
const Version = "PostgreSQL 15.0 (streamsql) on x86_64-pc-linux-gnu, compiled by go, 64-bit"

// fn0 registers a zero-argument function computed once per call.
func fn0(name string, ret types.T, volatile bool, f func(ctx *Context) (types.Value, error)) *Func {
	return &Func{Name: name, Return: ret, Volatile: volatile,
		Kernel: RowKernel(ret, nil, func(ctx *Context, _ []types.Value) (types.Value, error) { return f(ctx) })}
}

// rowFn registers a strict row-at-a-time function.
func rowFn(name string, ret types.T, args []types.T, f func(ctx *Context, a []types.Value) (types.Value, error)) *Func {
	return &Func{Name: name, Args: args, Return: ret, Strict: true, Kernel: RowKernel(ret, args, f)}
}

func (c *Context) user() string {
	if c == nil || c.Session == nil {
		return "postgres"
	}
	return c.Session.User()
}

// sessionUser is session_user: the SET SESSION AUTHORIZATION user when the
// session tells it apart from current_user.
func (c *Context) sessionUser() string {
	if c != nil && c.Session != nil {
		if s, ok := c.Session.(interface{ SessionUser() string }); ok {
			return s.SessionUser()
		}
	}
	return c.user()
}

func init() {
	str := func(s string) func(*Context) (types.Value, error) {
		return func(*Context) (types.Value, error) { return s, nil }
	}
	user := func(ctx *Context) (types.Value, error) { return ctx.user(), nil }
	db := func(ctx *Context) (types.Value, error) {
		if ctx.Session == nil {
			return "postgres", nil
		}
		return ctx.Session.Database(), nil
	}
	define(
		fn0("version", types.TText, false, str(Version)),
		fn0("current_user", types.TName, false, user),
		fn0("session_user", types.TName, false, func(ctx *Context) (types.Value, error) { return ctx.sessionUser(), nil }),
		fn0("user", types.TName, false, user),
		fn0("current_role", types.TName, false, user),
		fn0("current_database", types.TName, false, db),
		fn0("current_catalog", types.TName, false, db),
		fn0("current_schema", types.TName, false, func(ctx *Context) (types.Value, error) {
			for _, s := range ctx.searchPath() {
				if s != "$user" && s != "pg_catalog" {
					return s, nil
				}
			}
			return nil, nil
		}),
		fn0("pg_backend_pid", types.TInt4, false, func(ctx *Context) (types.Value, error) {
			if ctx.Session == nil {
				return int64(os.Getpid()), nil
			}
			return int64(ctx.Session.BackendPID()), nil
		}),
		fn0("pg_postmaster_start_time", types.TTimestampTZ, false, func(ctx *Context) (types.Value, error) {
			return types.TimestampValue(startTime.UnixMicro()), nil
		}),
		rowFn("current_schemas", types.ArrayOf(types.TName), []types.T{types.TBool}, func(ctx *Context, a []types.Value) (types.Value, error) {
			var out []types.Value
			if a[0].(bool) {
				out = append(out, "pg_catalog")
			}
			for _, s := range ctx.searchPath() {
				if s != "$user" && s != "pg_catalog" {
					out = append(out, s)
				}
			}
			if out == nil {
				out = []types.Value{}
			}
			return out, nil
		}),
		rowFn("current_setting", types.TText, []types.T{types.TText}, func(ctx *Context, a []types.Value) (types.Value, error) {
			return currentSetting(ctx, a[0].(string), false)
		}),
		rowFn("current_setting", types.TText, []types.T{types.TText, types.TBool}, func(ctx *Context, a []types.Value) (types.Value, error) {
			return currentSetting(ctx, a[0].(string), a[1].(bool))
		}),
	)
	registerBuilder("pg_typeof", func(args []Expr) (Expr, error) {
		if len(args) != 1 {
			return nil, noFunction("pg_typeof", typesOf(args))
		}
		oid := int64(args[0].Type().OID())
		f := &Func{Name: "pg_typeof", Args: []types.T{args[0].Type()}, Return: types.TRegType,
			Kernel: RowKernel(types.TRegType, []types.T{args[0].Type()}, func(*Context, []types.Value) (types.Value, error) { return oid, nil })}
		return &Call{Fn: f, Args: args}, nil
	})
}

func currentSetting(ctx *Context, name string, missingOK bool) (types.Value, error) {
	if ctx.Session != nil {
		if v, ok := ctx.Session.Setting(name); ok {
			return v, nil
		}
	}
	if missingOK {
		return nil, nil
	}
	return nil, pgerr.New(pgerr.UndefinedObject, "unrecognized configuration parameter \"%s\"", name)
}
