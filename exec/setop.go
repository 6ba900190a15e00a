package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/exec/membudget"

	"github.com/streamsql/streamsql/types"
)

// Columns returns the output columns.
func (s *SetOp) Columns() []types.Column { return s.Cols }

// Children returns both inputs.
func (s *SetOp) Children() []Node { return []Node{s.Left, s.Right} }

// Explain returns "HashSetOp Union" / "HashSetOp Intersect All"...
func (s *SetOp) Explain() string {
	name := [...]string{"Union", "Intersect", "Except"}[s.Kind]
	if s.All {
		name += " All"
	}
	return "HashSetOp " + name
}

// Open opens the inputs; the result is computed on the first Next.
// UNION streams distinct rows; INTERSECT and EXCEPT count each distinct
// row on both sides (NULLs equal) and emit, per PostgreSQL: INTERSECT
// once, INTERSECT ALL min(l, r) times, EXCEPT once if r = 0, EXCEPT ALL
// l - r times.
func (s *SetOp) Open(ctx *Context) (Iterator, error) {
	if s.Kind == Union {
		ap := &Append{Inputs: []Node{s.Left, s.Right}, Cols: s.Cols}
		if s.All {
			return ap.Open(ctx)
		}
		return (&Distinct{Input: ap}).Open(ctx)
	}
	return &blocking{run: (&setOpIter{ctx: ctx, s: s}).run}, nil
}

type setOpIter struct {
	ctx *Context
	s   *SetOp
}

func (it *setOpIter) run() ([]arrow.RecordBatch, error) {
	ctx, s := it.ctx, it.s
	mem := alloc(ctx)
	// Both inputs are held while the groups are counted: charged to the
	// statement's budget (53200 past it), given back once the result is built.
	acct := membudget.NewAccount(budgetOf(ctx))
	defer acct.Release()
	ts := make([]types.T, len(s.Cols))
	for i, c := range s.Cols {
		ts[i] = c.Type
	}
	table := newHashTable(ts)
	var lcount, rcount []int64
	parts := make([][]arrow.Array, len(s.Cols)) // one row per group, in group order
	var gids []int32
	left, err := OpenNode(ctx, s.Left)
	if err != nil {
		return nil, err
	}
	lbs, err := drainInto(ctx, left, acct)
	if err != nil {
		return nil, err
	}
	for _, b := range lbs {
		n := int(b.NumRows())
		gids = table.insert(b.Columns(), n, gids, false)
		for c := range parts {
			if len(table.newRows) > 0 {
				parts[c] = append(parts[c], takeArray(mem, b.Column(c), table.newRows))
			}
		}
		lcount = growSlice(lcount, table.len())
		for _, g := range gids {
			lcount[g]++
		}
	}
	rcount = make([]int64, table.len())
	right, err := OpenNode(ctx, s.Right)
	if err != nil {
		return nil, err
	}
	rbs, err := drainInto(ctx, right, acct)
	if err != nil {
		return nil, err
	}
	for _, b := range rbs {
		gids = table.lookup(b.Columns(), int(b.NumRows()), gids, false)
		for _, g := range gids {
			if g >= 0 {
				rcount[g]++
			}
		}
	}
	var idx []int32
	for g := 0; g < table.len(); g++ {
		l, r := lcount[g], rcount[g]
		var k int64
		switch {
		case s.Kind == Intersect && s.All:
			k = min(l, r)
		case s.Kind == Intersect:
			k = min(1, r)
		case s.All:
			k = max(l-r, 0)
		case r == 0:
			k = 1
		}
		for ; k > 0; k-- {
			idx = append(idx, int32(g))
		}
	}
	if len(idx) == 0 {
		return nil, nil
	}
	schema := types.ArrowSchema(s.Cols)
	groups := make([]arrow.Array, len(s.Cols))
	for c := range parts {
		a, err := array.Concatenate(parts[c], mem)
		if err != nil {
			return nil, err
		}
		groups[c] = a
	}
	var out []arrow.RecordBatch
	size := ctx.Size()
	for i := 0; i < len(idx); i += size {
		out = append(out, takeBatch(mem, schema, groups, idx[i:min(i+size, len(idx))]))
	}
	return out, nil
}
