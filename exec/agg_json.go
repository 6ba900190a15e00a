package exec

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// jsonAgg is json_agg / jsonb_agg (values into an array) and
// json_object_agg / jsonb_object_agg (key/value pairs into an object). Each
// value is converted by the to_json / to_jsonb function of the expression
// engine, a batch at a time; the jsonb object is normalized by a cast to
// jsonb (sorted keys, the last duplicate wins).
type jsonAgg struct {
	object bool
	jsonb  bool
	ectx   *expr.Context
	conv   expr.Expr // value -> json(b) text, over column 0 (1 for objects)
	key    expr.Expr // object key -> json string, over column 0
	norm   expr.Expr // text -> jsonb, over column 0
	// structured is json_agg of arrays or rows: PostgreSQL puts "\n "
	// before each such value but the first (a NULL excepted).
	structured bool
	parts      [][]string
	has        []bool
}

func (j *jsonAgg) init(ctx *Context, f *AggFunc) error {
	j.ectx = evalCtx(ctx)
	fn := "to_json"
	if j.jsonb {
		fn = "to_jsonb"
	}
	vi := 0
	if j.object {
		vi = 1
		kt, err := expr.NewCast(&expr.ColRef{Idx: 0, T: f.Args[0]}, types.TText, true)
		if err != nil {
			return err
		}
		if j.key, err = expr.NewCall("to_json", []expr.Expr{kt}); err != nil {
			return err
		}
	}
	if k := f.Args[vi].Kind; !j.object && !j.jsonb && (k == types.Array || k == types.Record) {
		j.structured = true
	}
	var err error
	if j.conv, err = expr.NewCall(fn, []expr.Expr{&expr.ColRef{Idx: vi, T: f.Args[vi]}}); err != nil {
		return err
	}
	if j.object && j.jsonb {
		if j.norm, err = expr.NewCast(&expr.ColRef{Idx: 0, T: types.TText}, types.TJSONB, true); err != nil {
			return err
		}
	}
	return nil
}

func (j *jsonAgg) grow(n int) { j.parts = growSlice(j.parts, n); j.has = growSlice(j.has, n) }

// evalOver evaluates e over the argument columns.
func (j *jsonAgg) evalOver(e expr.Expr, args []arrow.Array, n int) (*array.String, error) {
	fields := make([]arrow.Field, len(args))
	for i, a := range args {
		fields[i] = arrow.Field{Name: "a", Type: a.DataType(), Nullable: true}
	}
	b := array.NewRecordBatch(arrow.NewSchema(fields, nil), args, int64(n))
	a, err := e.Eval(j.ectx, b)
	if err != nil {
		return nil, err
	}
	s, ok := a.(*array.String)
	if !ok {
		return nil, pgerr.Internal("exec: json conversion returned %s", a.DataType())
	}
	return s, nil
}

func (j *jsonAgg) update(args []arrow.Array, gids []int32) error {
	n := len(gids)
	vals, err := j.evalOver(j.conv, args, n)
	if err != nil {
		return err
	}
	var keys *array.String
	if j.object {
		if keys, err = j.evalOver(j.key, args, n); err != nil {
			return err
		}
	}
	sep := ": "
	if !j.jsonb {
		sep = " : "
	}
	for i, g := range gids {
		if g < 0 {
			continue
		}
		v := "null"
		if vals.IsValid(i) {
			v = vals.Value(i)
			if j.structured && len(j.parts[g]) > 0 {
				v = "\n " + v
			}
		}
		if j.object {
			if args[0].IsNull(i) {
				return pgerr.New(pgerr.InvalidParameterValue, "field name must not be null")
			}
			v = keys.Value(i) + sep + v
		}
		j.parts[g] = append(j.parts[g], v)
		j.has[g] = true
	}
	return nil
}

func (j *jsonAgg) appendResult(b array.Builder, g int) error {
	sb := b.(*array.StringBuilder)
	if !j.has[g] {
		sb.AppendNull()
		return nil
	}
	switch {
	case !j.object:
		sb.Append("[" + strings.Join(j.parts[g], ", ") + "]")
	case !j.jsonb:
		sb.Append("{ " + strings.Join(j.parts[g], ", ") + " }")
	default:
		raw := array.NewStringBuilder(memory.DefaultAllocator)
		raw.Append("{" + strings.Join(j.parts[g], ", ") + "}")
		out, err := j.evalOver(j.norm, []arrow.Array{raw.NewArray()}, 1)
		if err != nil {
			return err
		}
		sb.Append(out.Value(0))
	}
	return nil
}
