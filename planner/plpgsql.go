package planner

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/plpgsql"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// PL/pgSQL functions (CREATE FUNCTION ... LANGUAGE plpgsql) are parsed by
// PostgreSQL's own PL/pgSQL grammar (pg_query's ParsePlPgSqlToJSON) and
// compiled here into an exec/plpgsql Program: each expression of the
// body is bound like a SQL function's body, its names the function's
// parameters and variables, and becomes an expr.Expr over a one-row batch
// of the variables. A call is an expr.Call whose kernel runs the program
// row by row, so a PL/pgSQL function works wherever a built-in one does,
// in queries and materialized views alike (it is not inlined). The body
// is compiled when the function is created (to report its errors then)
// and again where a call is bound. What the runtime does not cover is
// refused by name (exec/plpgsql's doc comment lists what it covers).

// plLang is the language name of PL/pgSQL functions in the catalog.
const plLang = "plpgsql"

// plNode is one node of the PL/pgSQL parse tree's JSON: {"Kind": {...}}.
type plNode map[string]any

// plCompiler holds a compilation's state.
type plCompiler struct {
	b     *binder
	fn    *catalog.Function
	prog  *plpgsql.Program
	ids   []int          // slot -> binder column id
	slot  map[int]int    // datum number -> slot
	names map[string]int // variable name -> slot, for the namespace
	datum []plNode       // the parse tree's datums
	check bool           // expressions parsed, not bound (compilePL)
	// loopVars are the FOR loops' variables; cursor the next datum to
	// assign to a declaring statement (see declared).
	loopVars map[loopVar]bool
	cursor   int
}

// compilePL compiles fn's body (fn.Language is plpgsql). With check set
// (CREATE FUNCTION) the expressions are only parsed, as PostgreSQL's
// validator does: what they name is resolved where a call is planned.
func compilePL(env *Env, fn *catalog.Function, check bool) (*plpgsql.Program, error) {
	tree, err := plParse(fn)
	if err != nil {
		return nil, err
	}
	c := &plCompiler{b: newBinder(env), fn: fn, prog: &plpgsql.Program{Name: fn.Signature(), NParams: len(fn.Args), Void: fn.Return.Kind == types.Void},
		slot: map[int]int{}, names: map[string]int{}, check: check}
	if err := c.compile(tree); err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(c.prog.Vars))
	for i, v := range c.prog.Vars {
		fields[i] = arrow.Field{Name: fmt.Sprintf("v%d", i), Type: v.T.ArrowType(), Nullable: true}
	}
	c.prog.Schema = arrow.NewSchema(fields, nil)
	return c.prog, nil
}

// plParse parses fn's body with PostgreSQL's PL/pgSQL grammar and returns
// the function's node.
func plParse(fn *catalog.Function) (plNode, error) {
	params := make([]string, len(fn.Args))
	for i, a := range fn.Args {
		params[i] = a.Type.String()
		if a.Name != "" {
			params[i] = pgQuoteIdent(a.Name) + " " + params[i]
		}
	}
	tag := "$plpgsql$"
	for strings.Contains(fn.Body, tag) {
		tag = "$p" + tag[1:]
	}
	src := "CREATE FUNCTION f(" + strings.Join(params, ", ") + ") RETURNS " + fn.Return.String() + " AS " + tag + fn.Body + tag + " LANGUAGE plpgsql"
	out, err := pg.ParsePlPgSqlToJSON(src)
	if err != nil {
		return nil, pgerr.New(pgerr.SyntaxError, "%s", err.Error()).WithWhere("compilation of PL/pgSQL function \"%s\"", fn.Name)
	}
	var fns []plNode
	if err := json.Unmarshal([]byte(out), &fns); err != nil || len(fns) != 1 {
		return nil, pgerr.Internal("plpgsql: unexpected parse tree for %s", fn.Name)
	}
	f, ok := fns[0]["PLpgSQL_function"].(map[string]any)
	if !ok {
		return nil, pgerr.Internal("plpgsql: unexpected parse tree for %s", fn.Name)
	}
	return f, nil
}

// pgQuoteIdent quotes a parameter name for the parser.
func pgQuoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// kindOf returns a node's kind and body ("PLpgSQL_stmt_if", {...}).
func kindOf(n any) (string, plNode) {
	m, _ := n.(map[string]any)
	for k, v := range m {
		body, _ := v.(map[string]any)
		return k, body
	}
	return "", nil
}

func (n plNode) str(k string) string   { s, _ := n[k].(string); return s }
func (n plNode) num(k string) float64  { f, _ := n[k].(float64); return f }
func (n plNode) flag(k string) bool    { b, _ := n[k].(bool); return b }
func (n plNode) list(k string) []any   { l, _ := n[k].([]any); return l }
func (n plNode) node(k string) plNode  { _, body := kindOf(n[k]); return body }
func (n plNode) query(k string) string { return n.node(k).str("query") }

// unsupported is the error for a construct the runtime does not run.
func (c *plCompiler) unsupported(what string) error {
	return pgerr.New(pgerr.FeatureNotSupported, "%s is not supported in PL/pgSQL functions", what).
		WithHint("PL/pgSQL functions here compute a value from their arguments: assignments, IF, loops, RAISE, RETURN and EXCEPTION blocks, without SQL statements on tables.")
}

func (c *plCompiler) compile(f plNode) error {
	ret := c.fn.Return
	if ret.Kind == types.Record || c.fn.SetOf {
		return c.unsupported("a function returning a set or a record")
	}
	if name := firstRefused(map[string]any(f.node("action"))); name != "" {
		return c.unsupported(name)
	}
	for _, d := range f.list("datums") {
		k, body := kindOf(d)
		if k != "PLpgSQL_var" {
			return c.unsupported("a record or row variable")
		}
		c.datum = append(c.datum, body)
	}
	action := f.node("action")
	c.loopVars = loopVarsOf(action)
	// a slot for every datum; the parameters and found are named here,
	// the others by the block, loop or handler that declares them
	for i, d := range c.datum {
		var t types.T
		switch {
		case i < len(c.fn.Args):
			t = c.fn.Args[i].Type
		case d.str("refname") == "found" && i == len(c.fn.Args):
			t = types.TBool
		default:
			var err error
			if t, err = c.varType(d); err != nil {
				return err
			}
		}
		c.addSlot(i, d.str("refname"), t, d.flag("notnull"), i <= len(c.fn.Args))
	}
	c.cursor = len(c.fn.Args) + 1
	top, err := c.stmt(map[string]any{"PLpgSQL_stmt_block": map[string]any(action)})
	if err != nil {
		return err
	}
	c.prog.Body = []plpgsql.Stmt{top}
	return nil
}

// The parse tree does not say which block declared a variable. The
// parser creates datums in source order, though: a block's DECLAREd
// variables, then those of the statements in its body (a FOR loop's
// variable, a CASE's subject, inner blocks'), then, at EXCEPTION, its
// SQLSTATE and SQLERRM. So the compiler walks the statements in source
// order with a cursor into the datums: at a block, the datums at the
// cursor that are DECLAREd variables on lines up to the block's BEGIN are
// the block's.

// declared reports whether datum d is a DECLAREd variable (not a loop
// variable, a CASE subject or a handler's SQLSTATE/SQLERRM).
func (c *plCompiler) declared(d plNode) bool {
	name := d.str("refname")
	return name != "sqlstate" && name != "sqlerrm" && !strings.HasPrefix(name, "__Case__Variable_") &&
		!c.loopVars[loopVar{name, d.num("lineno")}]
}

// scope names slots for the statements compiled until its restore runs.
func (c *plCompiler) scope(slots []int) (restore func()) {
	type saved struct {
		name string
		slot int
		had  bool
	}
	var old []saved
	for _, s := range slots {
		name := c.prog.Vars[s].Name
		o, had := c.names[name]
		old = append(old, saved{name, o, had})
		c.names[name] = s
	}
	return func() {
		for i := len(old) - 1; i >= 0; i-- {
			if old[i].had {
				c.names[old[i].name] = old[i].slot
			} else {
				delete(c.names, old[i].name)
			}
		}
	}
}

// blockDecls takes the block's DECLAREd variables at the cursor and
// compiles their initialization (the default, or NULL), run at each entry
// into the block. Each default may read the variables declared before it.
func (c *plCompiler) blockDecls(x plNode) (init []plpgsql.Stmt, restore func(), err error) {
	var restores []func()
	restore = func() {
		for i := len(restores) - 1; i >= 0; i-- {
			restores[i]()
		}
	}
	for c.cursor < len(c.datum) {
		d := c.datum[c.cursor]
		if !c.declared(d) || d.num("lineno") > x.num("lineno") {
			break
		}
		s := c.slot[c.cursor]
		c.cursor++
		v := c.prog.Vars[s]
		var e expr.Expr = &expr.Const{T: v.T}
		if dv := d.node("default_val"); dv != nil {
			if e, err = c.expr(dv.str("query"), v.T, "default value"); err != nil {
				restore()
				return nil, nil, err
			}
		} else if v.NotNull {
			restore()
			return nil, nil, pgerr.New("22004", "variable \"%s\" must have a default value, since it's declared NOT NULL", v.Name)
		}
		restores = append(restores, c.scope([]int{s}))
		init = append(init, &plpgsql.Assign{Var: s, E: e})
	}
	return init, restore, nil
}

// loopVarsOf returns the FOR loops' variables of a parse tree, by name
// and line (the datums a loop declares, not DECLARE).
func loopVarsOf(action plNode) map[loopVar]bool {
	out := map[loopVar]bool{}
	var walk func(n any)
	walk = func(n any) {
		switch x := n.(type) {
		case map[string]any:
			if v, ok := x["PLpgSQL_stmt_fori"].(map[string]any); ok {
				lv := plNode(v).node("var")
				out[loopVar{lv.str("refname"), lv.num("lineno")}] = true
			}
			for _, v := range x {
				walk(v)
			}
		case []any:
			for _, v := range x {
				walk(v)
			}
		}
	}
	walk(map[string]any(action))
	return out
}

// loopVar names a FOR loop's variable: its name and line.
type loopVar struct {
	name string
	line float64
}

func (c *plCompiler) addSlot(datum int, name string, t types.T, notNull, named bool) {
	s := len(c.prog.Vars)
	c.prog.Vars = append(c.prog.Vars, plpgsql.Var{Name: name, T: t, NotNull: notNull})
	c.ids = append(c.ids, c.b.newCol(name, c.fn.Name, t))
	c.slot[datum] = s
	if named {
		c.names[name] = s
	}
}

// varType resolves a declared variable's type name.
func (c *plCompiler) varType(d plNode) (types.T, error) {
	name := strings.TrimSpace(d.node("datatype").str("typname"))
	if strings.Contains(name, "%") {
		return types.T{}, c.unsupported("%TYPE and %ROWTYPE")
	}
	tree, err := pg.Parse("SELECT NULL::" + name)
	if err != nil {
		return types.T{}, pgerr.New(pgerr.SyntaxError, "invalid type name \"%s\"", name)
	}
	e, err := c.b.expr(&level{clause: inSelect}, tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val)
	if err != nil {
		return types.T{}, err
	}
	t := e.Type()
	if t.Kind == types.Record {
		return types.T{}, c.unsupported("a record or row variable")
	}
	return t, nil
}

// expr binds one expression of the body (its text as the parse tree has
// it) and coerces it to want (as an assignment; Unknown: as it is).
func (c *plCompiler) expr(text string, want types.T, what string) (expr.Expr, error) {
	tree, err := pg.Parse("SELECT " + text)
	if err != nil {
		return nil, pgerr.New(pgerr.SyntaxError, "syntax error in PL/pgSQL expression \"%s\": %s", text, err.Error())
	}
	var target *pg.Node
	if len(tree.Stmts) == 1 {
		if sel := tree.Stmts[0].Stmt.GetSelectStmt(); sel != nil && len(sel.TargetList) == 1 && len(sel.FromClause) == 0 &&
			sel.WhereClause == nil && len(sel.GroupClause) == 0 && sel.Op == pg.SetOperation_SETOP_NONE && sel.WithClause == nil &&
			len(sel.SortClause) == 0 && sel.LimitCount == nil && sel.IntoClause == nil {
			target = sel.TargetList[0].GetResTarget().Val
		}
	}
	if target == nil {
		return nil, c.unsupported("a query (\"" + text + "\")")
	}
	if c.check {
		if want.Kind == types.Unknown {
			want = types.TText
		}
		return &expr.Const{T: want}, nil
	}
	it := &nsItem{alias: c.fn.Name, relVisible: true, colsVisible: true}
	for name, s := range c.names {
		it.cols = append(it.cols, nsCol{name: name, id: c.ids[s]})
	}
	l := &level{clause: inSelect, ns: []*nsItem{it}}
	src, params := c.b.src, c.b.udfParams
	c.b.src, c.b.udfParams = "", c.ids[:len(c.fn.Args)]
	defer func() { c.b.src, c.b.udfParams = src, params }()
	e, err := c.b.expr(l, target)
	if err != nil {
		return nil, err
	}
	if len(l.aggs) > 0 || len(l.wins) > 0 || len(l.srfs) > 0 || hasSubquery(e) {
		return nil, c.unsupported("an aggregate, window function, set-returning function or subquery in an expression (\"" + text + "\")")
	}
	if want.Kind != types.Unknown {
		ce, err := expr.Coerce(e, want, true)
		if err != nil {
			if want.Kind == types.Bool {
				return nil, pgerr.New(pgerr.DatatypeMismatch, "argument of %s must be type boolean, not type %s", what, e.Type())
			}
			return nil, err
		}
		e = ce
	}
	return transform(e, func(x expr.Expr) (expr.Expr, bool, error) {
		if r, ok := x.(*expr.ColRef); ok {
			for s, id := range c.ids {
				if r.Idx == id {
					return &expr.ColRef{Idx: s, T: r.T, Name: r.Name}, true, nil
				}
			}
			return nil, false, pgerr.Internal("plpgsql: a column outside the function in \"%s\"", text)
		}
		return x, false, nil
	})
}

// textExpr binds an expression as text (RAISE's parameters and options).
func (c *plCompiler) textExpr(text string) (expr.Expr, error) {
	e, err := c.expr(text, types.TUnknown, "RAISE")
	if err != nil {
		return nil, err
	}
	if e.Type().Kind == types.Text {
		return e, nil
	}
	return expr.NewCast(e, types.TText, true)
}

// firstRefused names the first statement of the tree the runtime does not
// run ("" if none), so that a SELECT INTO is refused as such rather than
// for the row variable it made.
func firstRefused(n any) string {
	switch x := n.(type) {
	case map[string]any:
		for k, v := range x {
			if name, ok := plStatementNames[k]; ok {
				return name
			}
			if name := firstRefused(v); name != "" {
				return name
			}
		}
	case []any:
		for _, v := range x {
			if name := firstRefused(v); name != "" {
				return name
			}
		}
	}
	return ""
}
