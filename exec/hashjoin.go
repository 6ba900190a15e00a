package exec

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// Columns returns the output columns.
func (h *HashJoin) Columns() []types.Column { return h.Cols }

// Children returns the left (probe) and right (build) inputs.
func (h *HashJoin) Children() []Node { return []Node{h.Left, h.Right} }

// Explain returns "Hash Join (kind) on l = r".
func (h *HashJoin) Explain() string {
	conds := make([]string, len(h.LeftKeys))
	for i := range h.LeftKeys {
		conds[i] = h.LeftKeys[i].String() + " = " + h.RightKeys[i].String()
	}
	s := "Hash Join (" + h.Kind.String() + ") on " + strings.Join(conds, " AND ")
	if h.Residual != nil {
		s += " filter " + h.Residual.String()
	}
	return s
}

// Open opens both inputs; the right side is built into a hash table on the
// first Next.
func (h *HashJoin) Open(ctx *Context) (Iterator, error) {
	if !h.noSpill && ctx != nil && ctx.TempDir != "" && budgetOf(ctx).WorkMem() > 0 {
		return h.openSpilling(ctx)
	}
	d, err := openDriver(ctx, h.Left, h.Right,
		newJoiner(ctx, h.Kind, h.Residual, h.Left.Columns(), h.Right.Columns(), h.Cols))
	if err != nil {
		return nil, err
	}
	return &hashJoinIter{joinDriver: d, h: h}, nil
}

type hashJoinIter struct {
	*joinDriver
	h     *HashJoin
	table *hashTable
	head  []int32 // per group: first right row
	next  []int32 // per right row: next row of its group, -1 at the end
	gids  []int32
}

// build drains the right input into the hash table, chaining the rows of
// each key in row order.
func (it *hashJoinIter) build() error {
	bs, err := it.j.loadRight(it.rightIn, it.h.Right.Columns())
	if err != nil {
		return err
	}
	it.table = newHashTable(exprTypes(it.h.RightKeys))
	rowGroup := make([]int32, 0, it.j.nRight)
	for _, b := range bs {
		keys, err := evalAll(it.j.ctx, it.h.RightKeys, b)
		if err != nil {
			return err
		}
		it.gids = it.table.insert(keys, int(b.NumRows()), it.gids, true)
		rowGroup = append(rowGroup, it.gids...)
	}
	it.head = make([]int32, it.table.len())
	for i := range it.head {
		it.head[i] = -1
	}
	it.next = make([]int32, len(rowGroup))
	for r := len(rowGroup) - 1; r >= 0; r-- {
		g := rowGroup[r]
		if g < 0 {
			continue
		}
		it.next[r] = it.head[g]
		it.head[g] = int32(r)
	}
	return nil
}

func (it *hashJoinIter) Next() (_ arrow.RecordBatch, err error) {
	defer recoverErr(&err)
	return it.step(it.build, it.probe)
}

// probe matches one left batch against the table.
func (it *hashJoinIter) probe(b arrow.RecordBatch) error {
	n := int(b.NumRows())
	keys, err := evalAll(it.j.ctx, it.h.LeftKeys, b)
	if err != nil {
		return err
	}
	it.gids = it.table.lookup(keys, n, it.gids, true)
	var pl, pr []int32
	semiFast := it.h.Residual == nil && (it.h.Kind == SemiJoin || it.h.Kind == AntiJoin)
	for i, g := range it.gids {
		if g < 0 {
			continue
		}
		if semiFast {
			pl, pr = append(pl, int32(i)), append(pr, it.head[g])
			continue
		}
		for r := it.head[g]; r >= 0; r = it.next[r] {
			pl, pr = append(pl, int32(i)), append(pr, r)
		}
	}
	return it.j.emit(b, pl, pr)
}
