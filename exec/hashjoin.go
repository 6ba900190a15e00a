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
	table *hashTable // nil with a dense index
	dense bool       // one integer key: group = key - lo, no hashing
	lo    int64      // dense: the smallest build key
	head  []int32    // per group (dense: per key - lo): first right row
	next  []int32    // per right row: next row of its group, -1 at the end
	gids  []int32
	par   *parProbe // probing on several goroutines (hashjoin_par.go)
}

// maxDenseSpan bounds the key range of a dense index: at most 4 times the
// build rows (plus 1024), and 64M slots.
func maxDenseSpan(rows int) int64 { return min(4*int64(rows)+1024, 1<<26) }

// build drains the right input and indexes its rows by key, chaining the
// rows of each key in row order: with one integer key whose values span a
// small range, by the key itself (dense); otherwise in a hash table.
func (it *hashJoinIter) build() error {
	bs, err := it.j.loadRight(it.rightIn, it.h.Right.Columns())
	if err != nil {
		return err
	}
	keySets := make([][]arrow.Array, len(bs))
	for i, b := range bs {
		if keySets[i], err = evalAll(it.j.ctx, it.h.RightKeys, b); err != nil {
			return err
		}
	}
	rowGroup := make([]int32, 0, it.j.nRight)
	if lo, span, ok := it.denseRange(keySets); ok {
		it.dense, it.lo = true, lo
		it.head = make([]int32, span)
		for _, ks := range keySets {
			a := ks[0]
			v, _ := int64Values(a)
			for i, x := range v {
				if a.IsNull(i) {
					rowGroup = append(rowGroup, -1)
				} else {
					rowGroup = append(rowGroup, int32(x-lo))
				}
			}
		}
	} else {
		it.table = newHashTable(exprTypes(it.h.RightKeys))
		for i, b := range bs {
			it.gids = it.table.insert(keySets[i], int(b.NumRows()), it.gids, true)
			rowGroup = append(rowGroup, it.gids...)
		}
		it.head = make([]int32, it.table.len())
	}
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
	if w := workers(it.j.ctx); w > 1 && it.h.parallelProbeOK() {
		it.par = it.startParProbe(w)
	}
	return nil
}

// denseRange returns the range [lo, lo+span) of a one-integer-column build
// key when it is small enough for a dense index.
func (it *hashJoinIter) denseRange(keySets [][]arrow.Array) (lo int64, span int64, ok bool) {
	if len(it.h.RightKeys) != 1 || !intLike(it.h.RightKeys[0].Type()) || !intLike(it.h.LeftKeys[0].Type()) {
		return 0, 0, false
	}
	hi, seen := int64(0), false
	for _, ks := range keySets {
		a := ks[0]
		v, ok := int64Values(a)
		if !ok {
			return 0, 0, false
		}
		for i, x := range v {
			if a.NullN() > 0 && a.IsNull(i) {
				continue
			}
			if !seen || x < lo {
				lo = x
			}
			if !seen || x > hi {
				hi = x
			}
			seen = true
		}
	}
	if !seen || hi-lo < 0 || hi-lo >= maxDenseSpan(it.j.nRight) {
		return 0, 0, false
	}
	return lo, hi - lo + 1, true
}

func (it *hashJoinIter) Next() (_ arrow.RecordBatch, err error) {
	defer recoverErr(&err)
	if !it.prepared {
		if err := it.build(); err != nil {
			return nil, err
		}
		it.prepared = true
	}
	if it.par != nil {
		return it.par.next()
	}
	return it.step(it.build, it.probe)
}

// probe matches one left batch against the index.
func (it *hashJoinIter) probe(b arrow.RecordBatch) error {
	var err error
	var pl, pr []int32
	if pl, pr, it.gids, err = it.pairs(it.j.ctx, it.table, b, it.gids); err != nil {
		return err
	}
	return it.j.emit(b, pl, pr)
}

// pairs returns the candidate (left row, right row) pairs of left batch b,
// in left row order, looking keys up in table (a probe view of it.table,
// or nil with a dense index); gids is scratch, returned for reuse.
func (it *hashJoinIter) pairs(ctx *Context, table *hashTable, b arrow.RecordBatch, gids []int32) (pl, pr, _ []int32, _ error) {
	n := int(b.NumRows())
	keys, err := evalAll(ctx, it.h.LeftKeys, b)
	if err != nil {
		return nil, nil, gids, err
	}
	if it.dense {
		if cap(gids) < n {
			gids = make([]int32, n)
		}
		gids = gids[:n]
		a := keys[0]
		v, _ := int64Values(a)
		span := uint64(len(it.head))
		for i, x := range v {
			if d := uint64(x - it.lo); d < span && (a.NullN() == 0 || a.IsValid(i)) {
				gids[i] = int32(d)
			} else {
				gids[i] = -1
			}
		}
	} else {
		gids = table.lookup(keys, n, gids, true)
	}
	semiFast := it.h.Residual == nil && (it.h.Kind == SemiJoin || it.h.Kind == AntiJoin)
	pl, pr = make([]int32, 0, n), make([]int32, 0, n)
	for i, g := range gids {
		if g < 0 {
			continue
		}
		r := it.head[g]
		if r < 0 {
			continue
		}
		if semiFast {
			pl, pr = append(pl, int32(i)), append(pr, r)
			continue
		}
		for ; r >= 0; r = it.next[r] {
			pl, pr = append(pl, int32(i)), append(pr, r)
		}
	}
	return pl, pr, gids, nil
}
