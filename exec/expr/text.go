package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/types"
)

// String concatenation: text || text, and PostgreSQL's anytextcat /
// textanycat (text || any non-array value, the other side cast to text).

func concatKernel(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
	x, y := args[0].(*array.String), args[1].(*array.String)
	b := array.NewStringBuilder(ctx.Allocator())
	defer b.Release()
	var total int64
	for i := 0; i < n; i++ {
		if !x.IsNull(i) && !y.IsNull(i) {
			l := int64(len(x.Value(i)) + len(y.Value(i)))
			if err := membudget.AllocRequest(l + 4); err != nil {
				return nil, err
			}
			total += l
		}
	}
	if err := checkBuild(ctx, total); err != nil {
		return nil, err
	}
	b.Reserve(n)
	b.ReserveData(int(total))
	var buf []byte
	for i := 0; i < n; i++ {
		if x.IsNull(i) || y.IsNull(i) {
			b.AppendNull()
			continue
		}
		buf = append(append(buf[:0], x.Value(i)...), y.Value(i)...)
		b.BinaryBuilder.Append(buf)
	}
	return b.NewArray(), nil
}

// textCat binds `l || r` when one side is a string and the other is not an
// array: the other side is converted to text. It returns nil, nil when the
// rule does not apply.
func textCat(l, r Expr) (Expr, error) {
	lt, rt := l.Type(), r.Type()
	str := func(t types.T) bool { return t.IsString() }
	if !(str(lt) || str(rt)) || lt.Kind == types.Array || rt.Kind == types.Array {
		return nil, nil
	}
	toText := func(e Expr) (Expr, error) {
		if e.Type().Kind == types.Text {
			return e, nil
		}
		if e.Type().Kind == types.Unknown {
			return coerceImplicit(e, types.TText)
		}
		return convert(e, types.TText, true)
	}
	a, err := toText(l)
	if err != nil {
		return nil, err
	}
	b, err := toText(r)
	if err != nil {
		return nil, err
	}
	f, err := resolve("||", []types.T{types.TText, types.TText}, true)
	if err != nil || f == nil {
		return nil, err
	}
	return &Call{Fn: f, Args: []Expr{a, b}}, nil
}

func init() {
	register(&Func{Name: "||", Args: []types.T{types.TText, types.TText}, Return: types.TText, Strict: true, Kernel: concatKernel})
}
