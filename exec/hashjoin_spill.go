package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/types"
)

// Grace hash join. When a HashJoin may spill (Context.TempDir set, work_mem
// known), its right (build) input is read until it ends or passes
// work_mem. If it ends first the join runs in memory as usual. Otherwise
// both inputs are written, whole rows, to aggSpillParts partition files
// each by one hash of the join key (the build side's key hashing, so equal
// keys of both sides meet in one partition; NULL keys go to a partition
// too: they never match but outer and anti joins emit them), and the join
// runs partition by partition as a HashJoin of the two files that does not
// spill again. Every join kind keeps its meaning, since a row's matches are
// all in its partition: right and full joins add each partition's
// unmatched build rows at its end. A partition whose build side still
// passes work_mem (a skewed key) is built in memory against the
// statement's limit. Rows come out in another order than in memory.

// graceJoinIter is a spilling-capable HashJoin's execution. Used by one
// goroutine.
type graceJoinIter struct {
	ctx         *Context
	h           *HashJoin
	left, right Iterator
	acct        *membudget.Account // right batches read ahead
	inner       Iterator           // the in-memory join, or the current partition's
	parts       [2][aggSpillParts]*aggPart
	next        int  // the next partition to join
	spilled     bool // tests
}

func (h *HashJoin) openSpilling(ctx *Context) (Iterator, error) {
	r, err := OpenNode(ctx, h.Right)
	if err != nil {
		return nil, err
	}
	l, err := OpenNode(ctx, h.Left)
	if err != nil {
		r.Close()
		return nil, err
	}
	return &graceJoinIter{ctx: ctx, h: h, left: l, right: r, acct: membudget.NewAccount(budgetOf(ctx))}, nil
}

func (it *graceJoinIter) Next() (_ arrow.RecordBatch, err error) {
	defer recoverErr(&err)
	if it.inner == nil && !it.spilled {
		if err := it.start(); err != nil {
			return nil, err
		}
	}
	for {
		if it.inner != nil {
			b, err := it.inner.Next()
			if err != nil || b != nil {
				return b, err
			}
			if !it.spilled {
				return nil, nil
			}
			it.inner.Close()
			it.inner = nil
			it.closePart(it.next - 1)
		}
		if it.next >= aggSpillParts {
			return nil, nil
		}
		p := it.next
		it.next++
		lp, rp := it.parts[0][p], it.parts[1][p]
		var run bool
		switch it.h.Kind {
		case LeftJoin, AntiJoin: // every left row comes out or is tested
			run = lp != nil
		case RightJoin:
			run = rp != nil
		case FullJoin:
			run = lp != nil || rp != nil
		default: // inner, semi: only matches
			run = lp != nil && rp != nil
		}
		if !run {
			it.closePart(p)
			continue
		}
		sub := *it.h
		sub.noSpill = true
		sub.Left = &partNode{cols: it.h.Left.Columns(), part: lp}
		sub.Right = &partNode{cols: it.h.Right.Columns(), part: rp}
		if it.inner, err = sub.Open(it.ctx); err != nil {
			return nil, err
		}
	}
}

// start reads the right input up to work_mem: the in-memory join when it
// ends first, else both inputs partitioned to files.
func (it *graceJoinIter) start() error {
	var bs []arrow.RecordBatch
	for {
		b, err := nextCharged(it.ctx, it.right, it.acct)
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		bs = append(bs, b)
		if it.acct.OverWorkMem() {
			it.spilled = true
			break
		}
	}
	if !it.spilled {
		it.acct.Release() // the joiner charges them again
		h := it.h
		j := newJoiner(it.ctx, h.Kind, h.Residual, h.Left.Columns(), h.Right.Columns(), h.Cols)
		d := &joinDriver{j: j, left: it.left, rightIn: &prefixIter{bs: bs, rest: it.right}, leftCols: h.Left.Columns()}
		it.inner = &hashJoinIter{joinDriver: d, h: h}
		it.left, it.right = nil, nil // the inner join owns them
		return nil
	}
	hasher := newHashTable(exprTypes(it.h.RightKeys))
	rest := &prefixIter{bs: bs, rest: it.right}
	if err := it.partition(1, rest, it.h.RightKeys, hasher); err != nil {
		return err
	}
	it.acct.Release()
	return it.partition(0, it.left, it.h.LeftKeys, hasher)
}

// partition writes every row of in to side's partitions by the hash of its
// keys.
func (it *graceJoinIter) partition(side int, in Iterator, keys []expr.Expr, hasher *hashTable) error {
	sp := &aggSpiller{ctx: it.ctx}
	var gids []int32
	for {
		if err := canceled(it.ctx); err != nil {
			sp.abort()
			return err
		}
		b, err := in.Next()
		if err != nil {
			sp.abort()
			return err
		}
		if b == nil {
			break
		}
		n := int(b.NumRows())
		ks, err := evalAll(it.ctx, keys, b)
		if err != nil {
			sp.abort()
			return err
		}
		hasher.prepare(ks, n)
		if cap(gids) < n {
			gids = make([]int32, n)
			for i := range gids {
				gids[i] = -1
			}
		}
		if err := sp.spill(b, gids[:n], hasher.hv[:n]); err != nil {
			sp.abort()
			return err
		}
	}
	if _, err := sp.finish(); err != nil {
		return err
	}
	it.parts[side] = sp.parts
	return nil
}

func (it *graceJoinIter) closePart(p int) {
	for side := range it.parts {
		if f := it.parts[side][p]; f != nil {
			f.f.Close()
			it.parts[side][p] = nil
		}
	}
}

func (it *graceJoinIter) Close() error {
	it.acct.Release()
	var err error
	if it.inner != nil {
		err = it.inner.Close()
	}
	for p := range aggSpillParts {
		it.closePart(p)
	}
	if it.left != nil {
		if e := it.left.Close(); err == nil {
			err = e
		}
	}
	if it.right != nil {
		if e := it.right.Close(); err == nil {
			err = e
		}
	}
	return err
}

// prefixIter serves batches read ahead, then the rest of an input (which
// it does not close: its owner does).
type prefixIter struct {
	bs   []arrow.RecordBatch
	rest Iterator
}

func (p *prefixIter) Next() (arrow.RecordBatch, error) {
	if len(p.bs) > 0 {
		b := p.bs[0]
		p.bs = p.bs[1:]
		return b, nil
	}
	return p.rest.Next()
}

func (p *prefixIter) Close() error { return p.rest.Close() }

// partNode reads one spilled partition (nil: no rows).
type partNode struct {
	cols []types.Column
	part *aggPart
}

func (n *partNode) Columns() []types.Column { return n.cols }
func (n *partNode) Children() []Node        { return nil }
func (n *partNode) Explain() string         { return "Partition" }
func (n *partNode) Open(ctx *Context) (Iterator, error) {
	if n.part == nil {
		return &sliceIter{}, nil
	}
	return openPart(ctx, n.part)
}

// partIter reads a partition file batch by batch.
type partIter struct {
	r    *ipc.FileReader
	k, n int
}

// openPart reads partition p from its start (p stays open: its owner
// closes it).
func openPart(ctx *Context, p *aggPart) (*partIter, error) {
	if _, err := p.f.Seek(0, 0); err != nil {
		return nil, fmt.Errorf("exec: read partition: %w", err)
	}
	r, err := ipc.NewFileReader(p.f, ipc.WithAllocator(alloc(ctx)))
	if err != nil {
		return nil, fmt.Errorf("exec: read partition: %w", err)
	}
	return &partIter{r: r, n: r.NumRecords()}, nil
}

func (it *partIter) Next() (arrow.RecordBatch, error) {
	if it.k >= it.n {
		return nil, nil
	}
	it.k++
	b, err := it.r.RecordBatchAt(it.k - 1)
	if err != nil {
		return nil, fmt.Errorf("exec: read partition: %w", err)
	}
	return b, nil
}

func (it *partIter) Close() error { return it.r.Close() }
