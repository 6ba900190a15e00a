package plpgsql

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// frame is one call's state: the slots' values, and their one-row arrays
// (built when an expression reads them after a change). Owned by the
// call's goroutine.
type frame struct {
	p      *Program
	ctx    *expr.Context
	vals   []types.Value
	arrs   []arrow.Array // nil: to build from vals
	caught *pgerr.Error  // the error a handler runs for (RAISE;)
}

func (f *frame) release() {
	for _, a := range f.arrs {
		if a != nil {
			a.Release()
		}
	}
}

// set stores v in slot i.
func (f *frame) set(i int, v types.Value) error {
	if v == nil && f.p.Vars[i].NotNull {
		return pgerr.New("22004", "null value cannot be assigned to variable \"%s\" declared NOT NULL", f.p.Vars[i].Name)
	}
	f.vals[i] = v
	if f.arrs[i] != nil {
		f.arrs[i].Release()
		f.arrs[i] = nil
	}
	return nil
}

// eval computes e over the frame's values.
func (f *frame) eval(e expr.Expr) (types.Value, error) {
	for i, a := range f.arrs {
		if a == nil {
			built, err := types.MakeArray(f.ctx.Allocator(), f.p.Vars[i].T, []types.Value{f.vals[i]})
			if err != nil {
				return nil, err
			}
			f.arrs[i] = built
		}
	}
	rec := array.NewRecordBatch(f.p.Schema, f.arrs, 1)
	defer rec.Release()
	out, err := e.Eval(f.ctx, rec)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	return types.ValueAt(out, 0, e.Type()), nil
}

// cond evaluates a boolean condition (NULL is false).
func (f *frame) cond(e expr.Expr) (bool, error) {
	v, err := f.eval(e)
	if err != nil {
		return false, err
	}
	b, _ := v.(bool)
	return b, nil
}

// canceled reports the statement's cancel, checked in loops.
func (f *frame) canceled() error {
	if f.ctx.Ctx != nil {
		if err := f.ctx.Ctx.Err(); err != nil {
			return pgerr.Canceled(err)
		}
	}
	return nil
}

// run runs statements until one signals.
func (f *frame) run(stmts []Stmt) (signal, error) {
	for _, st := range stmts {
		s, err := f.exec(st)
		if err != nil || s.kind != sigNone {
			return s, err
		}
	}
	return signal{}, nil
}

func (f *frame) exec(st Stmt) (signal, error) {
	switch x := st.(type) {
	case *At:
		s, err := f.exec(x.S)
		if pe := pgerr.As(err); pe != nil && pe.Where == "" && pe.Code != pgerr.QueryCanceled {
			e := *pe
			e.Where = fmt.Sprintf("PL/pgSQL function %s line %d at %s", f.p.Name, x.Line, x.What)
			err = &e
		}
		return s, err
	case *Assign:
		v, err := f.eval(x.E)
		if err != nil {
			return signal{}, err
		}
		return signal{}, f.set(x.Var, v)
	case *If:
		for i, c := range x.Conds {
			ok, err := f.cond(c)
			if err != nil {
				return signal{}, err
			}
			if ok {
				return f.run(x.Bodies[i])
			}
		}
		return f.run(x.Else)
	case *Loop:
		return f.loop(x)
	case *ForInt:
		return f.forInt(x)
	case *ForEach:
		return f.forEach(x)
	case *Assert:
		ok, err := f.cond(x.Cond)
		if err != nil || ok {
			return signal{}, err
		}
		msg := "assertion failed"
		if x.Message != nil {
			v, err := f.eval(x.Message)
			if err != nil {
				return signal{}, err
			}
			if v != nil {
				msg = v.(string)
			}
		}
		return signal{}, pgerr.New("P0004", "%s", msg)
	case *Exit:
		if x.Cond != nil {
			ok, err := f.cond(x.Cond)
			if err != nil || !ok {
				return signal{}, err
			}
		}
		k := sigExit
		if x.Continue {
			k = sigContinue
		}
		return signal{kind: k, label: x.Label}, nil
	case *Return:
		if x.E == nil {
			return signal{kind: sigReturn}, nil
		}
		v, err := f.eval(x.E)
		return signal{kind: sigReturn, val: v}, err
	case *Raise:
		return signal{}, f.raise(x)
	case *Block:
		return f.block(x)
	}
	return signal{}, pgerr.Internal("plpgsql: unknown statement %T", st)
}

// loopEnd decides what a loop does with its body's signal: stop (with
// the signal to pass on, or none), or go on.
func loopEnd(label string, s signal) (stop bool, out signal) {
	switch s.kind {
	case sigExit:
		if s.label == "" || s.label == label {
			return true, signal{}
		}
		return true, s
	case sigContinue:
		if s.label == "" || s.label == label {
			return false, signal{}
		}
		return true, s
	case sigReturn:
		return true, s
	}
	return false, signal{}
}

// iterate runs a loop's body once: stop is set when the loop ends (out
// is then the signal to pass on) or fails.
func (f *frame) iterate(label string, body []Stmt) (stop bool, out signal, err error) {
	s, err := f.run(body)
	if err != nil {
		return true, signal{}, err
	}
	stop, out = loopEnd(label, s)
	return stop, out, nil
}

func (f *frame) loop(x *Loop) (signal, error) {
	for {
		if err := f.canceled(); err != nil {
			return signal{}, err
		}
		if x.Cond != nil {
			ok, err := f.cond(x.Cond)
			if err != nil || !ok {
				return signal{}, err
			}
		}
		if stop, out, err := f.iterate(x.Label, x.Body); stop || err != nil {
			return out, err
		}
	}
}

func (f *frame) forInt(x *ForInt) (signal, error) {
	bound := func(e expr.Expr, what string) (int64, error) {
		v, err := f.eval(e)
		if err != nil {
			return 0, err
		}
		if v == nil {
			return 0, pgerr.New(pgerr.NullValueNotAllowed, "%s bound of FOR loop cannot be null", what)
		}
		return v.(int64), nil
	}
	lo, err := bound(x.Lower, "lower")
	if err != nil {
		return signal{}, err
	}
	hi, err := bound(x.Upper, "upper")
	if err != nil {
		return signal{}, err
	}
	step := int64(1)
	if x.Step != nil {
		v, err := f.eval(x.Step)
		if err != nil {
			return signal{}, err
		}
		if v == nil {
			return signal{}, pgerr.New(pgerr.NullValueNotAllowed, "BY value of FOR loop cannot be null")
		}
		if step = v.(int64); step <= 0 {
			return signal{}, pgerr.New(pgerr.InvalidParameterValue, "BY value of FOR loop must be greater than zero")
		}
	}
	for i := lo; x.Reverse && i >= hi || !x.Reverse && i <= hi; {
		if err := f.canceled(); err != nil {
			return signal{}, err
		}
		if err := f.set(x.Var, i); err != nil {
			return signal{}, err
		}
		if stop, out, err := f.iterate(x.Label, x.Body); stop || err != nil {
			return out, err
		}
		// the next value, stopping before it overflows (as PostgreSQL)
		if x.Reverse {
			if i < -(1<<31)+step {
				break
			}
			i -= step
		} else {
			if i > (1<<31)-1-step {
				break
			}
			i += step
		}
	}
	return signal{}, nil
}

func (f *frame) forEach(x *ForEach) (signal, error) {
	v, err := f.eval(x.Array)
	if err != nil {
		return signal{}, err
	}
	if v == nil {
		return signal{}, pgerr.New(pgerr.NullValueNotAllowed, "FOREACH expression must not be null")
	}
	var elems []types.Value
	var flatten func(a []types.Value)
	flatten = func(a []types.Value) {
		for _, e := range a {
			if sub, ok := e.([]types.Value); ok {
				flatten(sub)
			} else {
				elems = append(elems, e)
			}
		}
	}
	flatten(v.([]types.Value))
	for _, e := range elems {
		if err := f.canceled(); err != nil {
			return signal{}, err
		}
		if err := f.set(x.Elem, e); err != nil {
			return signal{}, err
		}
		if _, err := f.exec(x.Set); err != nil {
			return signal{}, err
		}
		if stop, out, err := f.iterate(x.Label, x.Body); stop || err != nil {
			return out, err
		}
	}
	return signal{}, nil
}

func (f *frame) block(x *Block) (signal, error) {
	if _, err := f.run(x.Init); err != nil {
		return signal{}, err
	}
	s, err := f.run(x.Body)
	if s.kind == sigExit && s.label != "" && s.label == x.Label {
		s = signal{} // EXIT label leaves the labeled block
	}
	if err == nil || len(x.Handlers) == 0 {
		return s, err
	}
	pe := pgerr.As(err)
	if pe == nil || pe.Code == pgerr.QueryCanceled {
		return signal{}, err
	}
	for _, h := range x.Handlers {
		if !matches(h.Codes, pe.Code) {
			continue
		}
		if x.State >= 0 {
			_ = f.set(x.State, string(pe.Code)) // (never NULL, so never refused)
		}
		if x.Errm >= 0 {
			_ = f.set(x.Errm, pe.Message)
		}
		outer := f.caught
		f.caught = pe
		s, err := f.run(h.Body)
		f.caught = outer
		return s, err
	}
	return signal{}, err
}

// matches reports whether an error of code c is one of codes.
func matches(codes []string, c pgerr.Code) bool {
	for _, k := range codes {
		switch {
		case k == "others":
			return true
		case strings.HasSuffix(k, "000") && len(c) == 5 && k[:2] == string(c[:2]):
			return true
		case k == string(c):
			return true
		}
	}
	return false
}

// raise runs RAISE: an error is returned, a notice queued.
func (f *frame) raise(x *Raise) error {
	if x.Rethrow {
		if f.caught == nil {
			return pgerr.New("0Z002", "RAISE without parameters cannot be used outside an exception handler")
		}
		return f.caught
	}
	msg, err := f.format(x.Message, x.Params)
	if err != nil {
		return err
	}
	text := func(e expr.Expr) (string, bool, error) {
		if e == nil {
			return "", false, nil
		}
		v, err := f.eval(e)
		if err != nil || v == nil {
			return "", false, err
		}
		return v.(string), true, nil
	}
	code := x.Code
	if s, ok, err := text(x.Errcode); err != nil {
		return err
	} else if ok {
		c, cerr := conditionCode(s)
		if cerr != nil {
			return cerr
		}
		code = pgerr.Code(c)
	}
	if s, ok, err := text(x.MessageE); err != nil {
		return err
	} else if ok {
		msg = s
	}
	e := &pgerr.Error{Code: code, Severity: x.Level, Message: msg}
	if e.Detail, _, err = text(x.Detail); err != nil {
		return err
	}
	if e.Hint, _, err = text(x.Hint); err != nil {
		return err
	}
	switch x.Level {
	case pgerr.SevError:
		if e.Code == "" {
			e.Code = "P0001"
		}
		e.Severity = ""
		return e
	case "":
		return nil // DEBUG, LOG: not sent to the client
	}
	if e.Code == "" {
		e.Code = "00000"
		if x.Level == pgerr.SevWarning {
			e.Code = "01000"
		}
	}
	if q := pgerr.NoticeQueueOf(f.ctx.Ctx); q != nil {
		q.Add(e)
	}
	return nil
}

// format replaces each % of msg by the next parameter's text (NULL as
// <NULL>), %% by %.
func (f *frame) format(msg string, params []expr.Expr) (string, error) {
	var sb strings.Builder
	next := 0
	for i := 0; i < len(msg); i++ {
		if msg[i] != '%' {
			sb.WriteByte(msg[i])
			continue
		}
		if i+1 < len(msg) && msg[i+1] == '%' {
			sb.WriteByte('%')
			i++
			continue
		}
		if next >= len(params) {
			return "", pgerr.New(pgerr.SyntaxError, "too few parameters specified for RAISE")
		}
		v, err := f.eval(params[next])
		if err != nil {
			return "", err
		}
		next++
		if v == nil {
			sb.WriteString("<NULL>")
		} else {
			sb.WriteString(v.(string))
		}
	}
	if next < len(params) {
		return "", pgerr.New(pgerr.SyntaxError, "too many parameters specified for RAISE")
	}
	return sb.String(), nil
}

// conditionCode is the SQLSTATE of a condition name or of a five-character
// code (RAISE ... USING ERRCODE, EXCEPTION WHEN).
func conditionCode(name string) (string, error) {
	if c, ok := conditions[strings.ToLower(name)]; ok {
		return c, nil
	}
	if len(name) == 5 && strings.IndexFunc(name, func(r rune) bool { return !(r >= '0' && r <= '9' || r >= 'A' && r <= 'Z') }) < 0 {
		return name, nil
	}
	return "", pgerr.New(pgerr.UndefinedObject, "unrecognized exception condition \"%s\"", name)
}

// ConditionCode is conditionCode for the compiler: "others" stays a name.
func ConditionCode(name string) (string, error) {
	if strings.EqualFold(name, "others") {
		return "others", nil
	}
	return conditionCode(name)
}
