package plpgsql

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Program is a compiled PL/pgSQL function. Immutable.
type Program struct {
	Name string
	// Vars are the frame's slots: the parameters first (NParams of them),
	// then FOUND, the declared variables, loop variables and the handlers'
	// SQLSTATE and SQLERRM. Expressions read slot i as ColRef{Idx: i}.
	Vars    []Var
	NParams int
	Body    []Stmt
	// Schema has one column per slot, the batches expressions read.
	Schema *arrow.Schema
	// Void marks a function RETURNS void: it may end without RETURN.
	Void bool
}

// Var is one slot of a frame.
type Var struct {
	Name    string
	T       types.T
	NotNull bool
}

// Stmt is one statement.
type Stmt interface{ stmt() }

// Assign sets Var to E (of the variable's type).
type Assign struct {
	Var int
	E   expr.Expr
}

// If runs the first Bodies[i] whose Conds[i] is true, else Else.
type If struct {
	Conds  []expr.Expr
	Bodies [][]Stmt
	Else   []Stmt
}

// Loop is LOOP (Cond nil) or WHILE Cond LOOP.
type Loop struct {
	Label string
	Cond  expr.Expr
	Body  []Stmt
}

// ForInt is FOR Var IN [REVERSE] Lower .. Upper [BY Step] LOOP (integers).
type ForInt struct {
	Label              string
	Var                int
	Lower, Upper, Step expr.Expr // Step nil: 1
	Reverse            bool
	Body               []Stmt
}

// ForEach is FOREACH var IN ARRAY Array LOOP: each element in storage
// order (a multidimensional array's too) is stored in Elem, then Set
// (Var := Elem, cast to the variable's type) runs, then Body.
type ForEach struct {
	Label string
	Elem  int
	Set   *Assign
	Array expr.Expr
	Body  []Stmt
}

// Assert is ASSERT Cond [, Message]: P0004 unless Cond is true.
type Assert struct {
	Cond    expr.Expr
	Message expr.Expr // text; nil: "assertion failed"
}

// Exit is EXIT or CONTINUE [Label] [WHEN Cond].
type Exit struct {
	Continue bool
	Label    string
	Cond     expr.Expr
}

// Return ends the call with E's value.
type Return struct{ E expr.Expr }

// Raise is RAISE: a message at Level (an error when Level is SevError),
// or the handled error again (Rethrow).
type Raise struct {
	Level   pgerr.Severity // "" for DEBUG and LOG levels: not sent
	Code    pgerr.Code     // "": P0001 for an error
	Message string         // with % for Params
	Params  []expr.Expr    // text
	// The USING options, text; nil when absent.
	MessageE, Detail, Hint, Errcode expr.Expr
	Rethrow                         bool
}

// Block is [DECLARE ...] BEGIN ... [EXCEPTION ...] END.
type Block struct {
	Label string
	// Init sets the block's declared variables at each entry, in
	// declaration order (a default may read those declared before it).
	Init     []Stmt
	Body     []Stmt
	Handlers []Handler
	// State and Errm are the slots of SQLSTATE and SQLERRM (-1: none).
	State, Errm int
}

// Handler is WHEN conditions THEN body. A code ending in "000" is a
// class; "others" matches every error but a cancel.
type Handler struct {
	Codes []string
	Body  []Stmt
}

// At is a statement with its place in the source, named in the CONTEXT
// of an error it raises ("PL/pgSQL function f(integer) line 3 at RAISE").
type At struct {
	Line int
	What string // PostgreSQL's name of the statement: "RAISE", "assignment", ...
	S    Stmt
}

func (At) stmt()      {}
func (Assign) stmt()  {}
func (If) stmt()      {}
func (Loop) stmt()    {}
func (ForInt) stmt()  {}
func (ForEach) stmt() {}
func (Assert) stmt()  {}
func (Exit) stmt()    {}
func (Return) stmt()  {}
func (Raise) stmt()   {}
func (Block) stmt()   {}

// Call runs the function for one call's arguments (of the parameters'
// types; nil is NULL).
func (p *Program) Call(ctx *expr.Context, args []types.Value) (types.Value, error) {
	f := &frame{p: p, ctx: ctx, vals: make([]types.Value, len(p.Vars)), arrs: make([]arrow.Array, len(p.Vars))}
	defer f.release()
	copy(f.vals, args)
	if p.NParams < len(p.Vars) && p.Vars[p.NParams].Name == "found" {
		f.vals[p.NParams] = false
	}
	s, err := f.run(p.Body)
	if err != nil {
		return nil, err
	}
	switch {
	case s.kind == sigReturn:
		return s.val, nil
	case s.kind == sigNone && p.Void:
		return nil, nil
	case s.kind == sigExit || s.kind == sigContinue:
		if s.label != "" {
			return nil, pgerr.New(pgerr.SyntaxError, "label \"%s\" does not exist", s.label)
		}
		return nil, pgerr.New(pgerr.SyntaxError, "%s cannot be used outside a loop", strings.ToUpper(s.word()))
	}
	return nil, pgerr.New("2F005", "control reached end of function without RETURN").
		WithWhere("PL/pgSQL function %s", p.Name)
}

// signal is how a statement ended: normally, or by EXIT, CONTINUE or
// RETURN (with its label or value).
type signal struct {
	kind  int
	label string
	val   types.Value
}

const (
	sigNone = iota
	sigExit
	sigContinue
	sigReturn
)

func (s signal) word() string {
	if s.kind == sigContinue {
		return "continue"
	}
	return "exit"
}
