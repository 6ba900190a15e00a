package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/plpgsql"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// plStatementNames names the PL/pgSQL statements the runtime does not run,
// for their refusal.
var plStatementNames = map[string]string{
	"PLpgSQL_stmt_fors":         "FOR over a query",
	"PLpgSQL_stmt_forc":         "FOR over a cursor",
	"PLpgSQL_stmt_dynfors":      "FOR over EXECUTE",
	"PLpgSQL_stmt_return_next":  "RETURN NEXT",
	"PLpgSQL_stmt_return_query": "RETURN QUERY",
	"PLpgSQL_stmt_execsql":      "a SQL statement",
	"PLpgSQL_stmt_dynexecute":   "EXECUTE",
	"PLpgSQL_stmt_perform":      "PERFORM",
	"PLpgSQL_stmt_call":         "CALL",
	"PLpgSQL_stmt_commit":       "COMMIT",
	"PLpgSQL_stmt_rollback":     "ROLLBACK",
	"PLpgSQL_stmt_getdiag":      "GET DIAGNOSTICS",
	"PLpgSQL_stmt_open":         "OPEN",
	"PLpgSQL_stmt_fetch":        "FETCH",
	"PLpgSQL_stmt_close":        "CLOSE",
	"PLpgSQL_stmt_set":          "SET",
}

func (c *plCompiler) stmts(list []any) ([]plpgsql.Stmt, error) {
	out := make([]plpgsql.Stmt, 0, len(list))
	for _, n := range list {
		s, err := c.stmt(n)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// plStatementWhat is PostgreSQL's name of a statement in an error's
// CONTEXT.
var plStatementWhat = map[string]string{
	"PLpgSQL_stmt_block": "statement block", "PLpgSQL_stmt_assign": "assignment", "PLpgSQL_stmt_if": "IF",
	"PLpgSQL_stmt_loop": "LOOP", "PLpgSQL_stmt_while": "WHILE", "PLpgSQL_stmt_fori": "FOR with integer loop variable",
	"PLpgSQL_stmt_return": "RETURN", "PLpgSQL_stmt_raise": "RAISE", "PLpgSQL_stmt_case": "CASE",
	"PLpgSQL_stmt_foreach_a": "FOREACH over array", "PLpgSQL_stmt_assert": "ASSERT",
}

func (c *plCompiler) stmt(n any) (plpgsql.Stmt, error) {
	s, err := c.stmt1(n)
	if err != nil {
		return nil, err
	}
	kind, x := kindOf(n)
	if what, ok := plStatementWhat[kind]; ok && x.num("lineno") > 0 {
		return &plpgsql.At{Line: int(x.num("lineno")), What: what, S: s}, nil
	}
	return s, nil
}

func (c *plCompiler) stmt1(n any) (plpgsql.Stmt, error) {
	kind, x := kindOf(n)
	switch kind {
	case "PLpgSQL_stmt_block":
		return c.block(x)
	case "PLpgSQL_stmt_assign":
		return c.assign(x)
	case "PLpgSQL_stmt_if":
		return c.ifStmt(x)
	case "PLpgSQL_stmt_loop":
		body, err := c.stmts(x.list("body"))
		return &plpgsql.Loop{Label: x.str("label"), Body: body}, err
	case "PLpgSQL_stmt_while":
		cond, err := c.expr(x.query("cond"), types.TBool, "WHILE")
		if err != nil {
			return nil, err
		}
		body, err := c.stmts(x.list("body"))
		return &plpgsql.Loop{Label: x.str("label"), Cond: cond, Body: body}, err
	case "PLpgSQL_stmt_fori":
		return c.forInt(x)
	case "PLpgSQL_stmt_exit":
		s := &plpgsql.Exit{Continue: !x.flag("is_exit"), Label: x.str("label")}
		if q := x.query("cond"); q != "" {
			what := "EXIT"
			if s.Continue {
				what = "CONTINUE"
			}
			cond, err := c.expr(q, types.TBool, what)
			if err != nil {
				return nil, err
			}
			s.Cond = cond
		}
		return s, nil
	case "PLpgSQL_stmt_return":
		q := x.query("expr")
		void := c.fn.Return.Kind == types.Void
		switch {
		case q == "" && void:
			return &plpgsql.Return{}, nil
		case q == "" && x.num("lineno") == 0:
			// The parser's closing RETURN after a body that does not end
			// in one: reaching it is falling off the end (2F005).
			return &plpgsql.Block{State: -1, Errm: -1}, nil
		case q == "":
			return nil, pgerr.New(pgerr.SyntaxError, "missing expression at or near \";\"")
		case void:
			return nil, pgerr.New(pgerr.DatatypeMismatch, "RETURN cannot have a parameter in function returning void")
		}
		e, err := c.expr(q, c.fn.Return, "RETURN")
		return &plpgsql.Return{E: e}, err
	case "PLpgSQL_stmt_raise":
		return c.raise(x)
	case "PLpgSQL_stmt_case":
		return c.caseStmt(x)
	case "PLpgSQL_stmt_foreach_a":
		return c.forEach(x)
	case "PLpgSQL_stmt_assert":
		cond, err := c.expr(x.query("cond"), types.TBool, "ASSERT")
		if err != nil {
			return nil, err
		}
		a := &plpgsql.Assert{Cond: cond}
		if q := x.query("message"); q != "" {
			if a.Message, err = c.textExpr(q); err != nil {
				return nil, err
			}
		}
		return a, nil
	}
	if name, ok := plStatementNames[kind]; ok {
		return nil, c.unsupported(name)
	}
	return nil, c.unsupported("statement " + strings.TrimPrefix(kind, "PLpgSQL_stmt_"))
}

func (c *plCompiler) block(x plNode) (plpgsql.Stmt, error) {
	init, restore, err := c.blockDecls(x)
	if err != nil {
		return nil, err
	}
	defer restore()
	body, err := c.stmts(x.list("body"))
	if err != nil {
		return nil, err
	}
	b := &plpgsql.Block{Label: x.str("label"), Init: init, Body: body, State: -1, Errm: -1}
	excs := x.node("exceptions").list("exc_list")
	if len(excs) == 0 {
		return b, nil
	}
	// EXCEPTION made this block's SQLSTATE and SQLERRM, named in its handlers
	var handlerVars []int
	for _, name := range []string{"sqlstate", "sqlerrm"} {
		if c.cursor < len(c.datum) && c.datum[c.cursor].str("refname") == name {
			s := c.slot[c.cursor]
			c.cursor++
			handlerVars = append(handlerVars, s)
			if name == "sqlstate" {
				b.State = s
			} else {
				b.Errm = s
			}
		}
	}
	unscope := c.scope(handlerVars)
	defer unscope()
	for _, e := range excs {
		_, h := kindOf(e)
		var codes []string
		for _, cond := range h.list("conditions") {
			_, cn := kindOf(cond)
			code, err := plpgsql.ConditionCode(cn.str("condname"))
			if err != nil {
				return nil, err
			}
			codes = append(codes, code)
		}
		hb, err := c.stmts(h.list("action"))
		if err != nil {
			return nil, err
		}
		b.Handlers = append(b.Handlers, plpgsql.Handler{Codes: codes, Body: hb})
	}
	return b, nil
}

func (c *plCompiler) assign(x plNode) (plpgsql.Stmt, error) {
	s, ok := c.slot[int(x.num("varno"))]
	if !ok {
		return nil, c.unsupported("assigning to a field or an array element")
	}
	d := c.datum[int(x.num("varno"))]
	if d.flag("isconst") {
		return nil, pgerr.New("22005", "variable \"%s\" is declared CONSTANT", d.str("refname"))
	}
	q := x.query("expr")
	i := strings.Index(q, ":=")
	w := 2
	if j := strings.Index(q, "="); i < 0 || j >= 0 && j < i {
		i, w = j, 1
	}
	if i < 0 || strings.TrimSpace(q[:i]) == "" || strings.ContainsAny(strings.TrimSpace(q[:i]), "[.") {
		return nil, c.unsupported("assigning to a field or an array element")
	}
	e, err := c.expr(q[i+w:], c.prog.Vars[s].T, "assignment")
	return &plpgsql.Assign{Var: s, E: e}, err
}

func (c *plCompiler) ifStmt(x plNode) (plpgsql.Stmt, error) {
	s := &plpgsql.If{}
	add := func(cond string, body []any) error {
		e, err := c.expr(cond, types.TBool, "IF")
		if err != nil {
			return err
		}
		b, err := c.stmts(body)
		if err != nil {
			return err
		}
		s.Conds, s.Bodies = append(s.Conds, e), append(s.Bodies, b)
		return nil
	}
	if err := add(x.query("cond"), x.list("then_body")); err != nil {
		return nil, err
	}
	for _, ei := range x.list("elsif_list") {
		_, b := kindOf(ei)
		if err := add(b.query("cond"), b.list("stmts")); err != nil {
			return nil, err
		}
	}
	var err error
	s.Else, err = c.stmts(x.list("else_body"))
	return s, err
}

// caseStmt compiles CASE [subject] WHEN ... THEN ... [ELSE ...] END CASE
// as an IF chain; the parser has written each WHEN of a subject as
// "subject_variable IN (values)", the variable taking the subject's type.
// Without ELSE, no match is PostgreSQL's case_not_found (20000).
func (c *plCompiler) caseStmt(x plNode) (plpgsql.Stmt, error) {
	var pre plpgsql.Stmt
	if q := x.query("t_expr"); q != "" {
		s, ok := c.slot[int(x.num("t_varno"))]
		if !ok {
			return nil, pgerr.Internal("plpgsql: CASE variable not found")
		}
		e, err := c.expr(q, types.TUnknown, "CASE")
		if err != nil {
			return nil, err
		}
		t := e.Type()
		if t.Kind == types.Unknown {
			t = types.TText
			if e, err = expr.Coerce(e, t, true); err != nil {
				return nil, err
			}
		}
		c.prog.Vars[s].T, c.b.cols[c.ids[s]].t = t, t
		c.names[c.datum[int(x.num("t_varno"))].str("refname")] = s
		c.cursor = max(c.cursor, int(x.num("t_varno"))+1)
		pre = &plpgsql.Assign{Var: s, E: e}
	}
	ifs := &plpgsql.If{}
	for _, w := range x.list("case_when_list") {
		_, cw := kindOf(w)
		cond, err := c.expr(cw.query("expr"), types.TBool, "CASE")
		if err != nil {
			return nil, err
		}
		body, err := c.stmts(cw.list("stmts"))
		if err != nil {
			return nil, err
		}
		ifs.Conds, ifs.Bodies = append(ifs.Conds, cond), append(ifs.Bodies, body)
	}
	if x.flag("have_else") {
		var err error
		if ifs.Else, err = c.stmts(x.list("else_stmts")); err != nil {
			return nil, err
		}
	} else {
		ifs.Else = []plpgsql.Stmt{&plpgsql.Raise{Level: pgerr.SevError, Code: "20000", Message: "case not found",
			Hint: &expr.Const{V: "CASE statement is missing ELSE part.", T: types.TText}}}
	}
	if pre == nil {
		return ifs, nil
	}
	return &plpgsql.Block{Body: []plpgsql.Stmt{pre, ifs}, State: -1, Errm: -1}, nil
}

// forEach compiles FOREACH var IN ARRAY expr LOOP (without SLICE): each
// element goes to a hidden slot of the element type, then to the
// variable by an assignment (a cast when their types differ).
func (c *plCompiler) forEach(x plNode) (plpgsql.Stmt, error) {
	if x.num("slice") > 0 {
		return nil, c.unsupported("FOREACH with SLICE")
	}
	s, ok := c.slot[int(x.num("varno"))]
	if !ok {
		return nil, c.unsupported("FOREACH into a record or row variable")
	}
	arr, err := c.expr(x.query("expr"), types.TUnknown, "FOREACH")
	if err != nil {
		return nil, err
	}
	elemT := c.prog.Vars[s].T
	if t := arr.Type(); t.Kind == types.Array {
		elemT = *t.Elem
	} else if !c.check {
		return nil, pgerr.New(pgerr.DatatypeMismatch, "FOREACH expression must yield an array, not type %s", t)
	}
	elem := len(c.prog.Vars)
	c.addSlot(-1-elem, fmt.Sprintf("__foreach_%d", elem), elemT, false, false)
	var set expr.Expr = &expr.ColRef{Idx: elem, T: elemT}
	if !c.check {
		if set, err = expr.Coerce(set, c.prog.Vars[s].T, true); err != nil {
			return nil, err
		}
	}
	body, err := c.stmts(x.list("body"))
	if err != nil {
		return nil, err
	}
	return &plpgsql.ForEach{Label: x.str("label"), Elem: elem, Set: &plpgsql.Assign{Var: s, E: set}, Array: arr, Body: body}, nil
}

func (c *plCompiler) forInt(x plNode) (plpgsql.Stmt, error) {
	v := x.node("var")
	s := -1
	for i := c.cursor; i < len(c.datum); i++ { // the loop's datum comes next
		if d := c.datum[i]; d.str("refname") == v.str("refname") && d.num("lineno") == v.num("lineno") {
			s, c.cursor = c.slot[i], i+1
			break
		}
	}
	if s < 0 {
		return nil, pgerr.Internal("plpgsql: loop variable %s not found", v.str("refname"))
	}
	bound := func(k string) (expr.Expr, error) {
		if x.query(k) == "" {
			return nil, nil
		}
		return c.expr(x.query(k), types.TInt4, "FOR")
	}
	f := &plpgsql.ForInt{Label: x.str("label"), Var: s, Reverse: x.flag("reverse")}
	var err error
	if f.Lower, err = bound("lower"); err != nil {
		return nil, err
	}
	if f.Upper, err = bound("upper"); err != nil {
		return nil, err
	}
	if f.Step, err = bound("step"); err != nil {
		return nil, err
	}
	// the loop's variable is its name inside the body only (two loops may
	// each declare an i)
	name := v.str("refname")
	outer, had := c.names[name]
	c.names[name] = s
	f.Body, err = c.stmts(x.list("body"))
	if had {
		c.names[name] = outer
	} else {
		delete(c.names, name)
	}
	return f, err
}

// raise levels: PostgreSQL's elog levels as the parse tree gives them.
const (
	elogInfo    = 17
	elogNotice  = 18
	elogWarning = 19
	elogError   = 21
)

func (c *plCompiler) raise(x plNode) (plpgsql.Stmt, error) {
	r := &plpgsql.Raise{Message: x.str("message")}
	switch lv := int(x.num("elog_level")); {
	case lv == elogInfo:
		r.Level = pgerr.SevInfo
	case lv == elogNotice:
		r.Level = pgerr.SevNotice
	case lv == elogWarning:
		r.Level = pgerr.SevWarning
	case lv >= elogError:
		r.Level = pgerr.SevError
	}
	if name := x.str("condname"); name != "" {
		code, err := plpgsql.ConditionCode(name)
		if err != nil {
			return nil, err
		}
		r.Code, r.Message = pgerr.Code(code), name
	} else if r.Message == "" && len(x.list("options")) == 0 {
		r.Rethrow = true
		return r, nil
	}
	for _, p := range x.list("params") {
		_, e := kindOf(p)
		te, err := c.textExpr(e.str("query"))
		if err != nil {
			return nil, err
		}
		r.Params = append(r.Params, te)
	}
	if n := strings.Count(strings.ReplaceAll(r.Message, "%%", ""), "%"); n != len(r.Params) {
		word := "few"
		if n < len(r.Params) {
			word = "many"
		}
		return nil, pgerr.New(pgerr.SyntaxError, "too %s parameters specified for RAISE", word)
	}
	for _, o := range x.list("options") {
		_, opt := kindOf(o)
		e, err := c.textExpr(opt.query("expr"))
		if err != nil {
			return nil, err
		}
		switch int(opt.num("opt_type")) {
		case 0:
			r.Errcode = e
		case 1:
			r.MessageE = e
		case 2:
			r.Detail = e
		case 3:
			r.Hint = e
		default:
			return nil, c.unsupported("RAISE USING COLUMN, CONSTRAINT, DATATYPE, TABLE or SCHEMA")
		}
	}
	return r, nil
}

// plCall is the expression of a call of PL/pgSQL function fn with args
// (of its parameter types): a Call whose kernel runs the compiled body
// row by row.
func (b *binder) plCall(fn *catalog.Function, args []expr.Expr) (expr.Expr, error) {
	prog, err := compilePL(b.env, fn, false)
	if err != nil {
		return nil, err
	}
	ts := make([]types.T, len(fn.Args))
	for i, a := range fn.Args {
		ts[i] = a.Type
	}
	f := &expr.Func{Name: fn.Name, Args: ts, Return: fn.Return, Strict: fn.Strict, Volatile: fn.Volatility == 'v',
		UserDefined: true, Kernel: expr.RowKernel(fn.Return, ts, prog.Call)}
	return &expr.Call{Fn: f, Args: args}, nil
}
