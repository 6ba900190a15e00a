package engine

import (
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
		parts := strs(ow.Objname)
		schema, name := "", parts[len(parts)-1]
		if len(parts) == 2 {
			schema = parts[0]
		}
		var args []types.T
		if !ow.ArgsUnspecified {
			args = []types.T{}
			for _, a := range ow.Objargs {
				t, err := planner.BindType(a.GetTypeName())
				if err != nil {
					return nil, err
				}
				args = append(args, t)
			}
		}
		if err := fc.DropFunction(schema, name, args, s.set.searchPath(), d.MissingOk); err != nil {
			return nil, err
		}
	}
	return &Result{Tag: "DROP FUNCTION"}, nil
}

func strs(ns []*pg.Node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.GetString_().GetSval()
	}
	return out
}
