package exec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Columns returns the input's columns then one per window call.
func (w *Window) Columns() []types.Column { return w.Cols }

// Children returns the input.
func (w *Window) Children() []Node { return []Node{w.Input} }

// Explain returns "WindowAgg: f(x) OVER (PARTITION BY ... ORDER BY ...)".
func (w *Window) Explain() string {
	parts := make([]string, len(w.Calls))
	for i, c := range w.Calls {
		s := c.Fn.Name + "(" + exprList(c.Args) + ") OVER ("
		var over []string
		if len(c.PartitionBy) > 0 {
			over = append(over, "PARTITION BY "+exprList(c.PartitionBy))
		}
		if len(c.OrderBy) > 0 {
			over = append(over, "ORDER BY "+sortKeyList(c.OrderBy))
		}
		if c.Frame.Mode == FrameSession {
			over = append(over, "SESSION WITH GAP "+c.Frame.Gap.String())
		}
		parts[i] = s + strings.Join(over, " ") + ")"
	}
	return "WindowAgg: " + strings.Join(parts, ", ")
}

// Open opens the input; everything is computed on the first Next.
func (w *Window) Open(ctx *Context) (Iterator, error) {
	in, err := OpenNode(ctx, w.Input)
	if err != nil {
		return nil, err
	}
	acct := membudget.NewAccount(budgetOf(ctx))
	return &blocking{acct: acct, in: in, run: (&windowIter{ctx: ctx, w: w, in: in, acct: acct}).run}, nil
}

type windowIter struct {
	ctx  *Context
	w    *Window
	in   Iterator
	acct *membudget.Account // the input kept; released by blocking.Close
}

// run materializes the input, computes each call over its partitions in
// its own sort order, and emits rows in the last call's order.
func (it *windowIter) run() ([]arrow.RecordBatch, error) {
	ctx, w := it.ctx, it.w
	mem := alloc(ctx)
	inCols := w.Input.Columns()
	bs, err := drainInto(ctx, it.in, it.acct)
	if err != nil {
		return nil, err
	}
	if err := it.acct.Grow(it.acct.Used()); err != nil { // materialize's copy
		return nil, err
	}
	arrs, n, err := materialize(mem, inCols, bs)
	if err != nil || n == 0 {
		return nil, err
	}
	if len(inCols)+len(w.Calls) != len(w.Cols) {
		return nil, fmt.Errorf("exec: Window has %d columns, want %d", len(w.Cols), len(inCols)+len(w.Calls))
	}
	var perm []int32
	results := make([]arrow.Array, len(w.Calls))
	for ci := range w.Calls {
		call := &w.Calls[ci]
		wc, err := newWindowCall(ctx, call, bs, n)
		if err != nil {
			return nil, err
		}
		res, err := wc.compute(w.Cols[len(inCols)+ci].Type)
		if err != nil {
			return nil, err
		}
		// res is in wc.perm order; store it in input row order.
		inv := make([]int32, n)
		for pos, row := range wc.perm {
			inv[row] = int32(pos)
		}
		results[ci] = takeArray(mem, res, inv)
		perm = wc.perm
	}
	all := append(append([]arrow.Array(nil), arrs...), results...)
	schema := types.ArrowSchema(w.Cols)
	var out []arrow.RecordBatch
	size := ctx.Size()
	for i := 0; i < n; i += size {
		out = append(out, takeBatch(mem, schema, all, perm[i:min(i+size, n)]))
	}
	return out, nil
}

// windowCall is one call's evaluation state: its inputs in sorted order and
// the partition and peer boundaries.
type windowCall struct {
	ctx    *Context
	call   *WindowCall
	n      int
	perm   []int32       // sorted position -> input row
	args   []arrow.Array // argument values in sorted order
	mask   []bool        // FILTER result in sorted order (nil: none)
	order  []arrow.Array // ORDER BY values in sorted order
	parts  []int         // partition start positions, then n
	peerHi []int32       // per position: end (exclusive) of its peer group
	peerLo []int32       // per position: start of its peer group
}

func newWindowCall(ctx *Context, call *WindowCall, bs []arrow.RecordBatch, n int) (*windowCall, error) {
	if call.Distinct {
		return nil, pgerr.Unsupported("DISTINCT is not implemented for window functions")
	}
	mem := alloc(ctx)
	wc := &windowCall{ctx: ctx, call: call, n: n}
	var keys []SortKey
	for _, p := range call.PartitionBy {
		keys = append(keys, SortKey{E: p})
	}
	keys = append(keys, call.OrderBy...)
	es := make([]expr.Expr, len(keys))
	for i, k := range keys {
		es[i] = k.E
	}
	keyArrs, err := evalOverBatches(ctx, es, bs)
	if err != nil {
		return nil, err
	}
	if len(keys) > 0 {
		wc.perm = sortPerm(keyArrs, keys, n)
	} else {
		wc.perm = make([]int32, n)
		for i := range wc.perm {
			wc.perm[i] = int32(i)
		}
	}
	sorted := make([]arrow.Array, len(keyArrs))
	for i, a := range keyArrs {
		sorted[i] = takeArray(mem, a, wc.perm)
	}
	np := len(call.PartitionBy)
	wc.order = sorted[np:]
	// Partition and peer boundaries.
	partCmp := newRowCmp(sorted[:np], exprTypes(call.PartitionBy), make([]bool, np), make([]bool, np))
	ot := make([]types.T, len(call.OrderBy))
	od := make([]bool, len(call.OrderBy))
	onf := make([]bool, len(call.OrderBy))
	for i, k := range call.OrderBy {
		ot[i], od[i], onf[i] = k.E.Type(), k.Desc, k.NullsFirst
	}
	peerCmp := newRowCmp(wc.order, ot, od, onf)
	wc.peerLo = make([]int32, n)
	wc.peerHi = make([]int32, n)
	start, peer := 0, 0
	for p := 0; p <= n; p++ {
		newPart := p == n || (p > 0 && np > 0 && partCmp.compare(p-1, p) != 0)
		newPeer := newPart || (p > 0 && peerCmp.compare(p-1, p) != 0)
		if p > 0 && newPeer {
			for q := peer; q < p; q++ {
				wc.peerLo[q], wc.peerHi[q] = int32(peer), int32(p)
			}
			peer = p
		}
		if p == 0 || newPart {
			if p > 0 {
				start = p
			}
			wc.parts = append(wc.parts, start)
		}
	}
	args, err := evalOverBatches(ctx, call.Args, bs)
	if err != nil {
		return nil, err
	}
	wc.args = make([]arrow.Array, len(args))
	for i, a := range args {
		wc.args[i] = takeArray(mem, a, wc.perm)
	}
	if call.Filter != nil {
		fa, err := evalOverBatches(ctx, []expr.Expr{call.Filter}, bs)
		if err != nil {
			return nil, err
		}
		sf := takeArray(mem, fa[0], wc.perm)
		wc.mask = make([]bool, n)
		for i := range wc.mask {
			wc.mask[i] = sf.IsValid(i) && boolAt(sf, i)
		}
	}
	return wc, nil
}
