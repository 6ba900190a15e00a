package expr

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/types"
)

// toCharTimestampKernel is to_char(timestamp, text) over a batch. A row's
// text depends on its timestamp's second only, unless the format prints
// fractions of a second (FF1-FF6, MS, US): consecutive rows of the same
// second and format (most rows of a batch of event times) reuse the
// previous row's text instead of formatting it again. NULL rows (the
// caller passes none: the function is strict) and infinities give NULL.
func toCharTimestampKernel(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
	ts, ok := args[0].(*array.Timestamp)
	fs, ok2 := args[1].(*array.String)
	if !ok || !ok2 {
		return RowKernel(types.TText, []types.T{types.TTimestamp, types.TText}, toCharTimestampRow)(ctx, args, n)
	}
	b := array.NewStringBuilder(ctx.Allocator())
	defer b.Release()
	b.Reserve(n)
	var (
		lastFmt   string
		lastFrac  bool
		lastSec   int64
		lastOut   string
		haveLast  bool
		built     int64
		fmtParsed bool
	)
	for i := 0; i < n; i++ {
		if ts.IsNull(i) || fs.IsNull(i) {
			b.AppendNull()
			continue
		}
		v, f := int64(ts.Value(i)), fs.Value(i)
		if types.TimestampValue(v) == types.TimestampInfinity || types.TimestampValue(v) == types.TimestampMinusInfinity {
			b.AppendNull()
			continue
		}
		if !fmtParsed || f != lastFmt {
			frac, err := formatPrintsFraction(f)
			if err != nil {
				return nil, err
			}
			lastFmt, lastFrac, fmtParsed, haveLast = f, frac, true, false
		}
		sec := floorDiv64(v, usPerSec)
		if !haveLast || lastFrac || sec != lastSec {
			out, err := toCharDT(tsParts(v), f)
			if err != nil {
				return nil, err
			}
			lastOut, lastSec, haveLast = out, sec, true
		}
		sz := int64(len(lastOut))
		if err := membudget.AllocRequest(sz + 4); err != nil {
			return nil, err
		}
		built += sz
		if err := checkBuild(ctx, 2*built); err != nil {
			return nil, err
		}
		b.Append(lastOut)
	}
	return b.NewArray(), nil
}

// formatPrintsFraction reports whether to_char format f prints a fraction
// of a second.
func formatPrintsFraction(f string) (bool, error) {
	nodes, err := dchCache.get(f, dchCompile)
	if err != nil {
		return false, err
	}
	for _, nd := range nodes {
		if nd.id == "MS" || nd.id == "US" || strings.HasPrefix(nd.id, "FF") {
			return true, nil
		}
	}
	return false, nil
}

// toCharTimestampRow is to_char(timestamp, text) for one row.
func toCharTimestampRow(_ *Context, a []types.Value) (types.Value, error) {
	v := a[0].(types.TimestampValue)
	if v == types.TimestampInfinity || v == types.TimestampMinusInfinity {
		return nil, nil
	}
	return toCharDT(tsParts(int64(v)), a[1].(string))
}
