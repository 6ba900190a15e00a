package exec

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// Columns returns the output columns.
func (n *NestedLoopJoin) Columns() []types.Column { return n.Cols }

// Children returns the left and right inputs.
func (n *NestedLoopJoin) Children() []Node { return []Node{n.Left, n.Right} }

// Explain returns "Nested Loop (kind) on cond".
func (n *NestedLoopJoin) Explain() string {
	s := "Nested Loop (" + n.Kind.String() + ")"
	if n.Cond != nil {
		s += " on " + n.Cond.String()
	}
	return s
}

// Open opens both inputs; the right side is materialized on the first Next.
func (n *NestedLoopJoin) Open(ctx *Context) (Iterator, error) {
	l, r, err := openSides(ctx, n.Left, n.Right)
	if err != nil {
		return nil, err
	}
	return &nlJoinIter{n: n, left: l, rightIn: r,
		j: newJoiner(ctx, n.Kind, n.Cond, n.Left.Columns(), n.Right.Columns(), n.Cols)}, nil
}

type nlJoinIter struct {
	n       *NestedLoopJoin
	left    Iterator
	rightIn Iterator
	j       *joiner
	loaded  bool
	done    bool
}

func (it *nlJoinIter) Next() (_ arrow.RecordBatch, err error) {
	defer recoverErr(&err)
	if !it.loaded {
		if _, err := it.j.loadRight(it.rightIn, it.n.Right.Columns()); err != nil {
			return nil, err
		}
		it.loaded = true
	}
	for {
		if b := it.j.out.pop(); b != nil {
			return b, nil
		}
		if it.done {
			return nil, nil
		}
		if err := canceled(it.j.ctx); err != nil {
			return nil, err
		}
		b, err := it.left.Next()
		if err != nil {
			return nil, err
		}
		if b == nil {
			it.done = true
			it.j.finishRight(it.n.Left.Columns())
			continue
		}
		// Every pair, in left row order, a slice of left rows at a time so
		// that a step has about 64k pairs.
		nl, nr := int(b.NumRows()), it.j.nRight
		step := max(1, 65536/max(nr, 1))
		for s := 0; s < nl; s += step {
			e := min(s+step, nl)
			part := b
			if s > 0 || e < nl {
				part = b.NewSlice(int64(s), int64(e))
			}
			pl := make([]int32, 0, (e-s)*nr)
			pr := make([]int32, 0, (e-s)*nr)
			for i := 0; i < e-s; i++ {
				for r := 0; r < nr; r++ {
					pl, pr = append(pl, int32(i)), append(pr, int32(r))
				}
			}
			if err := it.j.emit(part, pl, pr); err != nil {
				return nil, err
			}
		}
	}
}

func (it *nlJoinIter) Close() error {
	err := it.left.Close()
	if e := it.rightIn.Close(); err == nil {
		err = e
	}
	return err
}
