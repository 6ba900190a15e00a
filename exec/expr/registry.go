package expr

import (
	"strings"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// The function and operator registry. Overloads are kept per name; binary
// operators are registered under their symbol with two arguments, prefix
// operators with one. Functions whose argument or result types depend on
// the call (polymorphic or variadic ones such as greatest, concat,
// array_length, pg_typeof) are "builders": they see the bound arguments and
// build a Func with concrete types. The registry is filled at init and read
// concurrently afterwards.

var (
	registry = map[string][]*Func{}
	builders = map[string]func(args []Expr) (Expr, error){}
)

// IsBuiltin reports whether name is a built-in scalar function (of any
// arguments).
func IsBuiltin(name string) bool {
	name = normName(name)
	return len(registry[name]) > 0 || builders[name] != nil
}

// register adds built-in overloads whose kernels handle NULL inputs
// themselves (so Call does not need to gather the non-NULL rows first).
func register(fs ...*Func) {
	for _, f := range fs {
		f.nullSafe = true
		registry[f.Name] = append(registry[f.Name], f)
	}
}

// define adds built-in overloads whose kernels expect Call to drop the
// rows with NULL arguments first (row kernels of Strict functions).
func define(fs ...*Func) {
	for _, f := range fs {
		registry[f.Name] = append(registry[f.Name], f)
	}
}

// registerBuilder adds a function resolved by a builder.
func registerBuilder(name string, b func(args []Expr) (Expr, error)) { builders[name] = b }

func normName(name string) string {
	return strings.TrimPrefix(strings.ToLower(name), "pg_catalog.")
}

// isPreferred reports PostgreSQL's typispreferred.
func isPreferred(t types.T) bool {
	switch t.Kind {
	case types.Bool, types.Text, types.Oid, types.Float8, types.TimestampTZ, types.Interval:
		return true
	}
	return false
}

// argTypesString renders argument types as PostgreSQL's error messages do.
func argTypesString(ts []types.T) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return strings.Join(parts, ", ")
}

func typesOf(args []Expr) []types.T {
	ts := make([]types.T, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	return ts
}

func opSignature(op string, ts []types.T) string {
	if len(ts) == 1 {
		return op + " " + ts[0].String()
	}
	return ts[0].String() + " " + op + " " + ts[1].String()
}

func noOperator(op string, ts []types.T) error {
	e := pgerr.New(pgerr.UndefinedFunction, "operator does not exist: %s", opSignature(op, ts))
	if len(ts) == 1 {
		return e.WithHint("No operator matches the given name and argument type. You might need to add an explicit type cast.")
	}
	return e.WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
}

func noFunction(name string, ts []types.T) error {
	return pgerr.New(pgerr.UndefinedFunction, "function %s(%s) does not exist", name, argTypesString(ts)).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

// resolve picks the overload of name for argument types ts as PostgreSQL's
// func_select_candidate / oper_select_candidate do. It returns nil, nil
// when nothing matches and an ambiguity error when several do.
func resolve(name string, ts []types.T, op bool) (*Func, error) {
	var cands []*Func
	for _, f := range registry[name] {
		if len(f.Args) == len(ts) {
			cands = append(cands, f)
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	known := func(i int) bool { return ts[i].Kind != types.Unknown }
	// Exact match on every argument.
	for _, f := range cands {
		exact := true
		for i, t := range ts {
			if !t.SameKind(f.Args[i]) {
				exact = false
				break
			}
		}
		if exact {
			return f, nil
		}
	}
	// A binary operator with one unknown side: try the other side's type.
	if op && len(ts) == 2 && known(0) != known(1) {
		k := ts[0]
		if !known(0) {
			k = ts[1]
		}
		for _, f := range cands {
			if f.Args[0].SameKind(k) && f.Args[1].SameKind(k) {
				return f, nil
			}
		}
	}
	// Candidates reachable by implicit casts.
	var ok []*Func
	for _, f := range cands {
		fits := true
		for i, t := range ts {
			if !canCoerce(t, f.Args[i], ctxImplicit) {
				fits = false
				break
			}
		}
		if fits {
			ok = append(ok, f)
		}
	}
	if len(ok) <= 1 {
		if len(ok) == 1 {
			return ok[0], nil
		}
		return nil, nil
	}
	// Most exact matches, then most preferred types where casts are needed.
	ok = keepMax(ok, func(f *Func) int {
		n := 0
		for i, t := range ts {
			if known(i) && t.SameKind(f.Args[i]) {
				n++
			}
		}
		return n
	})
	if len(ok) == 1 {
		return ok[0], nil
	}
	ok = keepMax(ok, func(f *Func) int {
		n := 0
		for i, t := range ts {
			if known(i) && (t.SameKind(f.Args[i]) || isPreferred(f.Args[i])) {
				n++
			}
		}
		return n
	})
	if len(ok) == 1 {
		return ok[0], nil
	}
	// Unknown arguments: prefer the string category, else the one category
	// every candidate agrees on, and within it the preferred type.
	anyUnknown, sameKnown, first := false, true, types.TUnknown
	for i, t := range ts {
		if !known(i) {
			anyUnknown = true
			continue
		}
		if first.Kind == types.Unknown {
			first = t
		} else if !first.SameKind(t) {
			sameKnown = false
		}
	}
	if anyUnknown {
		filtered := ok
		for i := range ts {
			if known(i) {
				continue
			}
			cat, conflict, hasS := byte(0), false, false
			for _, f := range filtered {
				c := f.Args[i].Category()
				if c == 'S' {
					hasS = true
				}
				if cat == 0 {
					cat = c
				} else if cat != c {
					conflict = true
				}
			}
			if hasS {
				cat = 'S'
			} else if conflict {
				filtered = nil
				break
			}
			pref := false
			for _, f := range filtered {
				if f.Args[i].Category() == cat && isPreferred(f.Args[i]) {
					pref = true
				}
			}
			var next []*Func
			for _, f := range filtered {
				if f.Args[i].Category() == cat && (!pref || isPreferred(f.Args[i])) {
					next = append(next, f)
				}
			}
			filtered = next
		}
		if len(filtered) == 1 {
			return filtered[0], nil
		}
		if len(filtered) > 1 {
			ok = filtered
		}
		// All known inputs share a type: assume the unknowns have it too.
		if sameKnown && first.Kind != types.Unknown {
			var last []*Func
			for _, f := range ok {
				fits := true
				for i := range ts {
					if !known(i) && !canCoerce(first, f.Args[i], ctxImplicit) {
						fits = false
					}
				}
				if fits {
					last = append(last, f)
				}
			}
			if len(last) == 1 {
				return last[0], nil
			}
		}
	}
	if op {
		return nil, pgerr.New(pgerr.AmbiguousFunction, "operator is not unique: %s", opSignature(name, ts)).
			WithHint("Could not choose a best candidate operator. You might need to add explicit type casts.")
	}
	return nil, pgerr.New(pgerr.AmbiguousFunction, "function %s(%s) is not unique", name, argTypesString(ts)).
		WithHint("Could not choose a best candidate function. You might need to add explicit type casts.")
}

func keepMax(fs []*Func, score func(*Func) int) []*Func {
	best := -1
	var out []*Func
	for _, f := range fs {
		s := score(f)
		if s > best {
			best, out = s, out[:0]
		}
		if s == best {
			out = append(out, f)
		}
	}
	return out
}

// bindCall coerces args to f's parameter types and builds the Call.
func bindCall(f *Func, args []Expr) (Expr, error) {
	out := make([]Expr, len(args))
	for i, a := range args {
		c, err := coerceImplicit(a, f.Args[i])
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return &Call{Fn: f, Args: out}, nil
}

// NewCall resolves a scalar function call by name (lower-case, unqualified or
// "pg_catalog."-qualified) over bound arguments. Polymorphic and variadic
// functions (greatest, least, concat, concat_ws, format, array_length,
// cardinality, array_to_string, pg_typeof, to_jsonb, jsonb_build_object,
// jsonb_build_array, ...) are resolved here too: the binder passes every
// argument as written and needs no special case for them.
func NewCall(name string, args []Expr) (Expr, error) {
	name = normName(name)
	f, err := resolve(name, typesOf(args), false)
	if err != nil {
		return nil, err
	}
	if f != nil {
		return bindCall(f, args)
	}
	if b := builders[name]; b != nil {
		return b(args)
	}
	return nil, noFunction(name, typesOf(args))
}

// NewBinary resolves a binary operator: arithmetic (+ - * / % ^), comparison
// (= <> < <= > >=), string concatenation (||), jsonb access (-> ->> #> #>>),
// containment (@> <@), and the other operators in the registry. "!=" is "<>".
func NewBinary(op string, l, r Expr) (Expr, error) {
	if op == "!=" {
		op = "<>"
	}
	ts := []types.T{l.Type(), r.Type()}
	if e, err := userTypeBinary(op, l, r); e != nil || err != nil { // enum.go
		return e, err
	}
	f, err := resolve(op, ts, true)
	if err != nil {
		return nil, err
	}
	if f == nil {
		if e, err := arrayBinary(op, l, r); e != nil || err != nil {
			return e, err
		}
		if e, err := recordBinary(op, l, r); e != nil || err != nil {
			return e, err
		}
		if op == "||" {
			if e, err := textCat(l, r); e != nil || err != nil {
				return e, err
			}
		}
		return nil, noOperator(op, ts)
	}
	if op == "+" && commutedPlus(f.Args) {
		return NewBinary(op, r, l)
	}
	return bindCall(f, []Expr{l, r})
}

// commutedPlus reports the `+` operators PostgreSQL implements as SQL
// functions that add their operands the other way round (integer_pl_date,
// interval_pl_timestamp...: RETURN $2 + $1, inlined by its planner): the
// right operand is evaluated first, which decides the error of a sum whose
// operands both fail. NewBinary binds them swapped, as PostgreSQL's EXPLAIN
// shows them.
func commutedPlus(args []types.T) bool {
	if len(args) != 2 {
		return false
	}
	switch l, r := args[0].Kind, args[1].Kind; {
	case l == types.Int4 || l == types.Time:
		return r == types.Date
	case l == types.Interval:
		return r == types.Date || r == types.Time || r == types.Timestamp || r == types.TimestampTZ
	}
	return false
}

// NewUnary resolves a prefix operator (-, +, ~, @, |/, ||/; NOT is Not).
func NewUnary(op string, e Expr) (Expr, error) {
	ts := []types.T{e.Type()}
	f, err := resolve(op, ts, true)
	if err != nil {
		return nil, err
	}
	if f == nil {
		return nil, noOperator(op, ts)
	}
	return bindCall(f, []Expr{e})
}

// Register adds a scalar function overload to the registry (used at init by
// this package and by catalog/ for the pg_catalog functions). Overloads with
// the same name are chosen between by argument types, as PostgreSQL does.
// A Strict function's Kernel only ever sees rows without NULL arguments.
// Register is not safe to call concurrently with resolution: call it from init.
func Register(f *Func) {
	f.Name = normName(f.Name)
	registry[f.Name] = append(registry[f.Name], f)
}
