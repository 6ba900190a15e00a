package expr

import (
	"github.com/streamsql/streamsql/types"
)

// Named notation: f(a => 1, b => 2). PostgreSQL resolves it against the
// parameter names in pg_proc; we keep names only for the functions whose
// parameters all have defaults, which is where named notation is used
// (make_interval(days => 2)).

type namedParams struct {
	names    []string
	defaults []*Const
}

var paramNames = map[string]namedParams{}

// defineParamNames records a function's parameter names and defaults.
// Called from init only.
func defineParamNames(fn string, names []string, defaults []*Const) {
	paramNames[fn] = namedParams{names: names, defaults: defaults}
}

// ParamNames returns the parameter names of a function that accepts named
// notation, with each parameter's default; ok is false for other functions.
// The slices are shared: callers must not modify them.
func ParamNames(fn string) (names []string, defaults []Expr, ok bool) {
	p, ok := paramNames[fn]
	if !ok {
		return nil, nil, false
	}
	defaults = make([]Expr, len(p.defaults))
	for i, d := range p.defaults {
		defaults[i] = d
	}
	return p.names, defaults, true
}

func init() {
	zero := &Const{V: int64(0), T: types.TInt4}
	defineParamNames("make_interval",
		[]string{"years", "months", "weeks", "days", "hours", "mins", "secs"},
		[]*Const{zero, zero, zero, zero, zero, zero, {V: float64(0), T: types.TFloat8}})
}
