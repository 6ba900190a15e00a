package engine

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// funcCatalog is the part of the catalog that stores SQL-language
// functions (*catalog.Catalog; catalog/function.go).
type funcCatalog interface {
	CreateFunction(fn *catalog.Function, replace bool) (*catalog.Function, error)
	DropFunction(schema, name string, args []types.T, searchPath []string, missingOK bool) error
}

func (s *Session) funcCatalog() (funcCatalog, error) {
	fc, ok := s.eng.cat.(funcCatalog)
	if !ok {
		return nil, pgerr.Unsupported("functions are not supported by this catalog")
	}
	return fc, nil
}

// execCreateFunction runs CREATE [OR REPLACE] FUNCTION ... LANGUAGE sql:
// the planner checks the definition and binds the body
// (planner.FunctionDef), the catalog stores it, and calls inline it.
func (s *Session) execCreateFunction(env *planner.Env, n *pg.CreateFunctionStmt) (*Result, error) {
	fc, err := s.funcCatalog()
	if err != nil {
		return nil, err
	}
	fn, err := planner.FunctionDef(env, n)
	if err != nil {
		return nil, err
	}
	if fn.Schema == "" {
		fn.Schema = "public"
		if path := s.set.searchPath(); len(path) > 0 {
			fn.Schema = path[0]
		}
	}
	fn.Owner = s.sessionOwner()
	if _, err := fc.CreateFunction(fn, n.Replace); err != nil {
		return nil, err
	}
	return &Result{Tag: "CREATE FUNCTION"}, nil
}

// execDropFunction runs DROP FUNCTION [IF EXISTS] f[(types)], ... A
// function that a view calls is not dropped (2BP01); CASCADE is refused.
func (s *Session) execDropFunction(d *pg.DropStmt) (*Result, error) {
	fc, err := s.funcCatalog()
	if err != nil {
		return nil, err
	}
	if d.Behavior == pg.DropBehavior_DROP_CASCADE {
		return nil, pgerr.Unsupported("DROP FUNCTION ... CASCADE is not supported").
			WithHint("Drop the views that call the function first.")
	}
	for _, o := range d.Objects {
		ow := o.GetObjectWithArgs()
		if ow == nil {
			return nil, pgerr.Internal("malformed DROP FUNCTION")
		}
		schema, name, args, err := funcTarget(ow)
		if err != nil {
			return nil, err
		}
		if err := fc.DropFunction(schema, name, args, s.set.searchPath(), d.MissingOk); err != nil {
			return nil, err
		}
	}
	return &Result{Tag: "DROP FUNCTION"}, nil
}

// funcTarget is the function an ObjectWithArgs names: its schema ("" for
// the search path), name and argument types (nil: not given).
func funcTarget(ow *pg.ObjectWithArgs) (schema, name string, args []types.T, err error) {
	parts := strs(ow.Objname)
	name = parts[len(parts)-1]
	if len(parts) == 2 {
		schema = parts[0]
	}
	if !ow.ArgsUnspecified {
		args = []types.T{}
		for _, a := range ow.Objargs {
			t, err := planner.BindSignatureType(a.GetTypeName())
			if err != nil {
				return "", "", nil, err
			}
			args = append(args, t)
		}
	}
	return schema, name, args, nil
}

// execAlterFunction runs ALTER FUNCTION f[(types)] with the attributes
// CREATE FUNCTION takes (volatility, STRICT, PARALLEL, COST, ROWS,
// LEAKPROOF), by the function's owner or a superuser.
func (s *Session) execAlterFunction(env *planner.Env, n *pg.AlterFunctionStmt) (*Result, error) {
	if n.Objtype != pg.ObjectType_OBJECT_FUNCTION {
		return nil, pgerr.Unsupported("ALTER PROCEDURE and ALTER ROUTINE are not supported")
	}
	return s.alterFunction(n.Func, func(fn *catalog.Function) error {
		return planner.AlterFunctionOptions(env, fn, n.Actions)
	})
}

// alterFunction runs an ALTER FUNCTION: it finds ow's function and
// applies change to a copy, after checking that the session may alter it
// (it acts as the owner).
func (s *Session) alterFunction(ow *pg.ObjectWithArgs, change func(*catalog.Function) error) (*Result, error) {
	ac, ok := s.eng.cat.(interface {
		AlterFunction(schema, name string, args []types.T, searchPath []string, change func(*catalog.Function) error) error
	})
	if !ok {
		return nil, pgerr.Unsupported("functions are not supported by this catalog")
	}
	schema, name, args, err := funcTarget(ow)
	if err != nil {
		return nil, err
	}
	err = ac.AlterFunction(schema, name, args, s.set.searchPath(), func(fn *catalog.Function) error {
		if !s.actsAs(fn.OwnerOID()) {
			return pgerr.New(pgerr.InsufficientPrivilege, "must be owner of function %s", fn.Name)
		}
		return change(fn)
	})
	if err != nil {
		return nil, err
	}
	return &Result{Tag: "ALTER FUNCTION"}, nil
}

// execAlterFunctionOwner runs ALTER FUNCTION f[(types)] OWNER TO r: the
// owner (a member of r) or a superuser gives the function to r.
func (s *Session) execAlterFunctionOwner(n *pg.AlterOwnerStmt) (*Result, error) {
	if n.ObjectType != pg.ObjectType_OBJECT_FUNCTION {
		return nil, pgerr.Unsupported("ALTER %s ... OWNER TO is not supported", strings.TrimPrefix(n.ObjectType.String(), "OBJECT_"))
	}
	if n.Newowner.GetRoletype() == pg.RoleSpecType_ROLESPEC_PUBLIC {
		return nil, pgerr.New(pgerr.UndefinedObject, "role \"public\" does not exist")
	}
	owner, err := s.grantee(n.Newowner)
	if err != nil {
		return nil, err
	}
	roleName, _ := s.roleSpecName(n.Newowner)
	return s.alterFunction(n.Object.GetObjectWithArgs(), func(fn *catalog.Function) error {
		if !s.actsAs(owner) {
			return pgerr.New(pgerr.InsufficientPrivilege, "must be member of role \"%s\"", roleName)
		}
		fn.Owner = owner
		return nil
	})
}

// execRenameFunction runs ALTER FUNCTION f[(types)] RENAME TO g.
func (s *Session) execRenameFunction(n *pg.RenameStmt) (*Result, error) {
	return s.alterFunction(n.Object.GetObjectWithArgs(), func(fn *catalog.Function) error {
		fn.Name = n.Newname
		return nil
	})
}

// execFunctionSchema runs ALTER FUNCTION f[(types)] SET SCHEMA s.
func (s *Session) execFunctionSchema(n *pg.AlterObjectSchemaStmt) (*Result, error) {
	return s.alterFunction(n.Object.GetObjectWithArgs(), func(fn *catalog.Function) error {
		fn.Schema = n.Newschema
		return nil
	})
}

func strs(ns []*pg.Node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.GetString_().GetSval()
	}
	return out
}
