package expr

import "github.com/streamsql/streamsql/types"

// booleq and boolne are the functions behind boolean = and <>.
func init() {
	B := types.TBool
	define(
		rowFn("booleq", B, []types.T{B, B}, func(_ *Context, a []types.Value) (types.Value, error) {
			return a[0].(bool) == a[1].(bool), nil
		}),
		rowFn("boolne", B, []types.T{B, B}, func(_ *Context, a []types.Value) (types.Value, error) {
			return a[0].(bool) != a[1].(bool), nil
		}),
	)
}
