package planner

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// lowerJSON lowers json_agg, jsonb_agg, json_object_agg and
// jsonb_object_agg to an array_agg of each row's JSON text (to_json or
// to_jsonb of the value; for objects the key's JSON string, the separator
// and the value), kept in the call's ORDER BY or else in arrival order as
// array_agg keeps them, and finished into the array or the object as the
// batch engine builds it (exec/agg_json.go): the jsonb object normalized
// by a cast to jsonb (sorted keys, the last duplicate wins). ok is false
// for other calls.
func lowerJSON(call exec.AggCall) (specs []stream.AggSpec, final func([]expr.Expr) (expr.Expr, error), ok bool, err error) {
	name := call.Fn.Name
	switch name {
	case "json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg":
	default:
		return nil, nil, false, nil
	}
	object, jsonb := strings.Contains(name, "object"), strings.HasPrefix(name, "jsonb")
	if call.Distinct {
		return nil, nil, true, pgerr.Unsupported("%s(DISTINCT ...) is not supported in streaming queries", name)
	}
	if want := map[bool]int{false: 1, true: 2}[object]; len(call.Args) != want {
		return nil, nil, true, pgerr.Internal("planner: %s with %d arguments", name, len(call.Args))
	}
	conv := "to_json"
	if jsonb {
		conv = "to_jsonb"
	}
	asText := func(fn string, e expr.Expr) (expr.Expr, error) {
		c, err := expr.NewCall(fn, []expr.Expr{e})
		if err != nil {
			return nil, err
		}
		return expr.NewCast(c, types.TText, true)
	}
	v := call.Args[len(call.Args)-1]
	elem, err := asText(conv, v)
	if err != nil {
		return nil, nil, true, err
	}
	if object {
		k, err := expr.NewCast(call.Args[0], types.TText, true)
		if err != nil {
			return nil, nil, true, err
		}
		if k, err = asText("to_json", k); err != nil {
			return nil, nil, true, err
		}
		sep := " : "
		if jsonb {
			sep = ": "
		}
		val, err := expr.NewCoalesce([]expr.Expr{elem, &expr.Const{V: "null", T: types.TText}})
		if err != nil {
			return nil, nil, true, err
		}
		if elem, err = expr.NewBinary("||", k, &expr.Const{V: sep, T: types.TText}); err != nil {
			return nil, nil, true, err
		}
		if elem, err = expr.NewBinary("||", elem, val); err != nil { // NULL when the key is
			return nil, nil, true, err
		}
	}
	agg, err := exec.ResolveAggregate("array_agg", []types.T{types.TText}, false)
	if err != nil {
		return nil, nil, true, err
	}
	sp, err := stream.AggSpecFor(exec.AggCall{Fn: agg, Args: []expr.Expr{elem}, Filter: call.Filter, OrderBy: call.OrderBy})
	if err != nil {
		return nil, nil, true, err
	}
	k := v.Type().Kind
	fn := jsonFinish(name, object, jsonb, !object && !jsonb && (k == types.Array || k == types.Record))
	final = func(r []expr.Expr) (expr.Expr, error) {
		var e expr.Expr = &expr.Call{Fn: fn, Args: r}
		if object && jsonb {
			return expr.NewCast(e, types.TJSONB, true)
		}
		return e, nil
	}
	return []stream.AggSpec{sp}, final, true, nil
}

// jsonFinish builds the JSON array or object from the array of the rows'
// JSON texts (NULL over no rows). A NULL element is a JSON null in an
// array, and a NULL key in an object (22023, as PostgreSQL). structured
// is json_agg over arrays or rows, where PostgreSQL puts "\n " before
// each value after the first (NULLs excepted).
func jsonFinish(name string, object, jsonb, structured bool) *expr.Func {
	ret := types.TJSON
	switch {
	case object && jsonb:
		ret = types.TText // normalized by a cast to jsonb
	case jsonb:
		ret = types.TJSONB
	}
	open, sep, close := "[", ", ", "]"
	if object {
		open, close = "{ ", " }"
		if jsonb {
			open, close = "{", "}"
		}
	}
	return &expr.Func{
		Name:   name,
		Args:   []types.T{types.ArrayOf(types.TText)},
		Return: ret,
		Strict: true,
		Kernel: func(ctx *expr.Context, args []arrow.Array, n int) (arrow.Array, error) {
			l, ok := args[0].(*array.List)
			if !ok {
				return nil, pgerr.Internal("planner: %s's finish over %s", name, args[0].DataType())
			}
			vals, ok := l.ListValues().(*array.String)
			if !ok {
				return nil, pgerr.Internal("planner: %s's finish over %s", name, l.ListValues().DataType())
			}
			b := array.NewStringBuilder(ctx.Allocator())
			defer b.Release()
			var sb strings.Builder
			for i := range n {
				if l.IsNull(i) {
					b.AppendNull()
					continue
				}
				start, end := l.ValueOffsets(i)
				sb.Reset()
				sb.WriteString(open)
				for j := start; j < end; j++ {
					if j > start {
						sb.WriteString(sep)
					}
					if vals.IsNull(int(j)) {
						if object {
							return nil, pgerr.New(pgerr.InvalidParameterValue, "field name must not be null")
						}
						sb.WriteString("null")
						continue
					}
					if structured && j > start {
						sb.WriteString("\n ")
					}
					sb.WriteString(vals.Value(int(j)))
				}
				sb.WriteString(close)
				b.Append(sb.String())
			}
			return b.NewArray(), nil
		},
	}
}
