package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// SQL-language functions (CREATE FUNCTION ... LANGUAGE sql). The catalog
// keeps each one's signature and body text; the planner inlines the body
// where the function is called (planner/bind_udf.go), so a function has no
// runtime of its own. Functions live in the snapshot like relations (same
// OID space, persisted in catalog.json) and are read without locks; DDL on
// them is serialized by Catalog.mu.

// SQLSTATEs of function DDL that pgerr does not name.
const (
	codeDuplicateFunction         pgerr.Code = "42723"
	codeInvalidFunctionDefinition pgerr.Code = "42P13"
)

// Function is a user-defined SQL-language function. Immutable once in a
// snapshot.
type Function struct {
	OID    uint32    `json:"oid"`
	Schema string    `json:"schema"`
	Name   string    `json:"name"`
	Args   []FuncArg `json:"args"`
	// Return is the declared result type; Body the text between the
	// dollar quotes (a single SELECT of one expression).
	Return types.T `json:"-"`
	Body   string  `json:"body"`
	// Language is "plpgsql" for a PL/pgSQL function (Body is then its
	// source, run by exec/plpgsql), "" for LANGUAGE sql.
	Language string `json:"language,omitempty"`
	// Volatility is PostgreSQL's provolatile: 'i', 's' or 'v'.
	Volatility byte `json:"-"`
	// Strict is RETURNS NULL ON NULL INPUT.
	Strict bool `json:"strict,omitempty"`
	// SetOf marks RETURNS SETOF t and RETURNS TABLE (...): the body is a
	// query whose rows the function returns, called in FROM.
	SetOf bool `json:"setof,omitempty"`
	// Out are the columns of RETURNS TABLE (...); Return is record then.
	Out []FuncArg `json:"out,omitempty"`
	// RowOf, for RETURNS SETOF t of a table or view t, is t's row type
	// (Relation.RowTypeOID): Out then holds t's columns as they were at
	// CREATE FUNCTION, and the function shows as returning SETOF t.
	RowOf uint32 `json:"row_of,omitempty"`
	Owner uint32 `json:"owner,omitempty"`
	// Parallel, Cost, Rows and Leakproof are PARALLEL SAFE | RESTRICTED |
	// UNSAFE ('s', 'r'; 0 is unsafe), COST (0: the default 100), ROWS (0:
	// the default 1000 of a set-returning function) and LEAKPROOF: kept
	// and shown in pg_proc and pg_get_functiondef, without effect on plans.
	Parallel  byte    `json:"parallel,omitempty"`
	Cost      float32 `json:"cost,omitempty"`
	Rows      float32 `json:"rows,omitempty"`
	Leakproof bool    `json:"leakproof,omitempty"`
}

// ParallelCode is proparallel: 's', 'r' or 'u'.
func (f *Function) ParallelCode() string {
	if f.Parallel == 0 {
		return "u"
	}
	return string(rune(f.Parallel))
}

// CostValue is procost (100 unless COST said otherwise).
func (f *Function) CostValue() float32 {
	if f.Cost == 0 {
		return 100
	}
	return f.Cost
}

// RowsValue is prorows: 0 for a scalar function, else ROWS or 1000.
func (f *Function) RowsValue() float32 {
	switch {
	case !f.SetOf:
		return 0
	case f.Rows == 0:
		return 1000
	}
	return f.Rows
}

// FuncArg is one parameter of a Function (Name may be empty). Default is
// the text of the parameter's DEFAULT expression ("" for none), as
// written (deparsed); the planner binds it at each call that leaves the
// parameter out (planner/bind_udf_args.go).
type FuncArg struct {
	Name    string  `json:"name,omitempty"`
	Type    types.T `json:"-"`
	Default string  `json:"default,omitempty"`
}

// NDefaults is the number of parameters with a DEFAULT (the last ones:
// pg_proc.pronargdefaults).
func (f *Function) NDefaults() int {
	n := 0
	for _, a := range f.Args {
		if a.Default != "" {
			n++
		}
	}
	return n
}

// Signature renders the function as PostgreSQL names it in messages:
// name(type, type).
func (f *Function) Signature() string {
	ts := make([]string, len(f.Args))
	for i, a := range f.Args {
		ts[i] = a.Type.String()
	}
	return f.Name + "(" + strings.Join(ts, ",") + ")"
}

// sameArgs reports whether two functions have the same argument types
// (PostgreSQL's identity of an overload).
func (f *Function) sameArgs(ts []types.T) bool {
	if len(ts) != len(f.Args) {
		return false
	}
	for i, t := range ts {
		if t.OID() != f.Args[i].Type.OID() {
			return false
		}
	}
	return true
}

// CreateFunction adds fn (OID assigned here), or replaces the function of
// the same name and argument types when replace is set (keeping its OID;
// PostgreSQL refuses to change the return type that way, 42P13).
func (c *Catalog) CreateFunction(fn *Function, replace bool) (*Function, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snap().clone()
	if fn.Schema == "" {
		fn.Schema = "public"
	}
	if s.schemas[fn.Schema] == nil {
		return nil, pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", fn.Schema)
	}
	ts := make([]types.T, len(fn.Args))
	for i, a := range fn.Args {
		ts[i] = a.Type
	}
	n := *fn
	for _, old := range s.funcs {
		if old.Schema != fn.Schema || old.Name != fn.Name || !old.sameArgs(ts) {
			continue
		}
		if !replace {
			return nil, pgerr.New(codeDuplicateFunction, "function \"%s\" already exists with same argument types", fn.Name)
		}
		if old.Return.OID() != fn.Return.OID() || old.SetOf != fn.SetOf || old.RowOf != fn.RowOf || !sameOut(old.Out, fn.Out) {
			return nil, pgerr.New(codeInvalidFunctionDefinition, "cannot change return type of existing function").
				WithHint("Use DROP FUNCTION %s first.", old.Signature())
		}
		if err := checkParamsReplace(old, fn); err != nil {
			return nil, err
		}
		n.OID, n.Owner = old.OID, old.Owner
	}
	if n.OID == 0 {
		n.OID = s.allocOID()
	}
	s.funcs[n.OID] = &n
	if err := c.commit(s); err != nil {
		return nil, err
	}
	return &n, nil
}

// checkParamsReplace refuses, as PostgreSQL does, a CREATE OR REPLACE of
// old by fn that renames a named parameter or drops parameter defaults
// (42P13): calls that name the parameter or leave it out would no longer
// resolve.
func checkParamsReplace(old, fn *Function) error {
	for i, a := range old.Args {
		if a.Name != "" && fn.Args[i].Name != a.Name {
			return pgerr.New(codeInvalidFunctionDefinition, "cannot change name of input parameter \"%s\"", a.Name).
				WithHint("Use DROP FUNCTION %s first.", old.Signature())
		}
	}
	if fn.NDefaults() < old.NDefaults() {
		return pgerr.New(codeInvalidFunctionDefinition, "cannot remove parameter defaults from existing function").
			WithHint("Use DROP FUNCTION %s first.", old.Signature())
	}
	return nil
}

// Functions returns the functions named name: in schema, or (schema "") in
// the first schema of searchPath that has any, as PostgreSQL resolves an
// unqualified call among the overloads of one name. Sorted by OID.
func (c *Catalog) Functions(schema, name string, searchPath []string) []*Function {
	s := c.snap()
	if len(s.funcs) == 0 {
		return nil
	}
	path := searchPath
	if schema != "" {
		path = []string{schema}
	}
	for _, sc := range path {
		var out []*Function
		for _, f := range s.funcs {
			if f.Schema == sc && f.Name == name {
				out = append(out, f)
			}
		}
		if len(out) > 0 {
			slices.SortFunc(out, func(a, b *Function) int { return int(a.OID) - int(b.OID) })
			return out
		}
	}
	return nil
}

// Function returns the function of that OID, or nil.
func (c *Catalog) Function(oid uint32) *Function { return c.snap().funcs[oid] }

// DropFunction removes the function schema.name(args). A function that a
// view or materialized view calls (its OID is in the view's DependsOn,
// recorded when the planner inlined it) cannot be dropped (2BP01): the
// view would not plan again at the next start.
func (c *Catalog) DropFunction(schema, name string, args []types.T, searchPath []string, missingOK bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snap().clone()
	fn, err := c.lookupFunction(schema, name, args, searchPath)
	if err != nil {
		if missingOK && pgerr.As(err) != nil && pgerr.As(err).Code == pgerr.UndefinedFunction {
			return nil
		}
		return err
	}
	for _, r := range s.byOID {
		if slices.Contains(r.DependsOn, fn.OID) {
			return pgerr.New(pgerr.DependentObjectsStillExist, "cannot drop function %s because other objects depend on it", fn.Signature()).
				WithDetail("%s %s depends on function %s", kindNoun(r.Kind), r.Name, fn.Signature()).
				WithHint("Drop the dependent objects first.")
		}
	}
	delete(s.funcs, fn.OID)
	delete(s.comments, objKey{fn.OID, 0})
	return c.commit(s)
}

// lookupFunction finds schema.name(args) (args nil: the only function of
// that name): 42883 when there is none, 42725 when args is nil and there
// are several.
func (c *Catalog) lookupFunction(schema, name string, args []types.T, searchPath []string) (*Function, error) {
	var fn *Function
	for _, f := range c.Functions(schema, name, searchPath) {
		if args == nil || f.sameArgs(args) {
			if fn != nil {
				return nil, pgerr.New(pgerr.AmbiguousFunction, "function name \"%s\" is not unique", name).
					WithHint("Specify the argument list to select the function unambiguously.")
			}
			fn = f
		}
	}
	if fn == nil {
		if args == nil {
			return nil, pgerr.New(pgerr.UndefinedFunction, "could not find a function named \"%s\"", name)
		}
		ts := make([]string, len(args))
		for i, t := range args {
			ts[i] = t.String()
		}
		return nil, pgerr.New(pgerr.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(ts, ", "))
	}
	return fn, nil
}

// AlterFunction changes schema.name(args) (ALTER FUNCTION): change gets a
// copy and may refuse (it checks the owner). A new name or schema must be
// free for the function's arguments, and no view may call the function
// (views keep the call's text).
func (c *Catalog) AlterFunction(schema, name string, args []types.T, searchPath []string, change func(*Function) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	fn, err := c.lookupFunction(schema, name, args, searchPath)
	if err != nil {
		return err
	}
	n := *fn
	if err := change(&n); err != nil {
		return err
	}
	s := c.snap().clone()
	if n.Name != fn.Name || n.Schema != fn.Schema { // RENAME TO, SET SCHEMA
		if s.schemas[n.Schema] == nil {
			return pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", n.Schema)
		}
		ts := make([]types.T, len(fn.Args))
		for i, a := range fn.Args {
			ts[i] = a.Type
		}
		for _, o := range s.funcs {
			if o.OID != fn.OID && o.Schema == n.Schema && o.Name == n.Name && o.sameArgs(ts) {
				return pgerr.New(codeDuplicateFunction, "function %s already exists in schema \"%s\"", n.Signature(), n.Schema)
			}
		}
		for _, r := range s.byOID {
			if slices.Contains(r.DependsOn, fn.OID) {
				return pgerr.New(pgerr.FeatureNotSupported, "cannot rename or move function %s because %s %s depends on it", fn.Signature(), kindNoun(r.Kind), r.Name).
					WithHint("Views keep the text of their query: drop the view, alter the function, and create the view again.")
			}
		}
	}
	s.funcs[n.OID] = &n
	return c.commit(s)
}

func kindNoun(k RelKind) string {
	switch k {
	case KindView:
		return "view"
	case KindMatView:
		return "materialized view"
	}
	return "relation"
}

// fileFunction is a Function on disk (types by OID and typmod).
type fileFunction struct {
	Function
	ArgTypes   []fileType `json:"arg_types"`
	OutTypes   []fileType `json:"out_types,omitempty"`
	ReturnType fileType   `json:"return_type"`
	Volatility string     `json:"volatility"`
}

type fileType struct {
	OID    uint32 `json:"oid"`
	Typmod int32  `json:"typmod,omitempty"`
}

func toFileType(t types.T) fileType { return fileType{t.OID(), t.Typmod} }

func fromFileType(ft fileType) (types.T, error) {
	t, ok := types.FromOID(ft.OID)
	if !ok {
		return types.T{}, fmt.Errorf("unknown type oid %d", ft.OID)
	}
	t.Typmod = ft.Typmod
	return t, nil
}

func toFileFunction(f *Function) fileFunction {
	ff := fileFunction{Function: *f, ReturnType: toFileType(f.Return), Volatility: string(rune(f.Volatility))}
	ff.Args = slices.Clone(f.Args)
	for _, a := range f.Args {
		ff.ArgTypes = append(ff.ArgTypes, toFileType(a.Type))
	}
	ff.Out = slices.Clone(f.Out)
	for _, a := range f.Out {
		ff.OutTypes = append(ff.OutTypes, toFileType(a.Type))
	}
	return ff
}

func fromFileFunction(ff fileFunction) (*Function, error) {
	f := ff.Function
	var err error
	if f.Return, err = fromFileType(ff.ReturnType); err != nil {
		return nil, fmt.Errorf("function %s: %w", f.Name, err)
	}
	if len(ff.ArgTypes) != len(f.Args) || len(ff.Volatility) != 1 {
		return nil, fmt.Errorf("function %s is malformed", f.Name)
	}
	f.Volatility = ff.Volatility[0]
	f.Args = slices.Clone(f.Args)
	for i := range f.Args {
		if f.Args[i].Type, err = fromFileType(ff.ArgTypes[i]); err != nil {
			return nil, fmt.Errorf("function %s: %w", f.Name, err)
		}
	}
	if len(ff.OutTypes) != len(f.Out) {
		return nil, fmt.Errorf("function %s is malformed", f.Name)
	}
	f.Out = slices.Clone(f.Out)
	for i := range f.Out {
		if f.Out[i].Type, err = fromFileType(ff.OutTypes[i]); err != nil {
			return nil, fmt.Errorf("function %s: %w", f.Name, err)
		}
	}
	return &f, nil
}

// sameOut reports whether two RETURNS TABLE column lists have the same
// types (PostgreSQL's return type of the function).
func sameOut(a, b []FuncArg) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type.OID() != b[i].Type.OID() {
			return false
		}
	}
	return true
}

// rowFunction is a function that returns the rows of the relation whose
// row type is oid (RETURNS SETOF t: Function.RowOf), or nil.
func (s *snapshot) rowFunction(oid uint32) *Function {
	if oid == 0 {
		return nil
	}
	for _, f := range s.funcs {
		if f.RowOf == oid {
			return f
		}
	}
	return nil
}

// checkRowFunction refuses new columns for rel while a function returns
// its rows: the function keeps the columns it was created with.
func (s *snapshot) checkRowFunction(rel *Relation, cols []Column) error {
	f := s.rowFunction(rel.RowTypeOID)
	if f == nil || sameColumns(rel.Columns, cols) {
		return nil
	}
	return pgerr.Unsupported("cannot change the columns of %s \"%s\" while function %s returns its rows (RETURNS SETOF %s)", kindWord(rel.Kind), rel.Name, f.Signature(), rel.Name).
		WithHint("Drop the function first, or create it again afterwards.")
}
