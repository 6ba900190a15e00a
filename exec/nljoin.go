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
	d, err := openDriver(ctx, n.Left, n.Right,
		newJoiner(ctx, n.Kind, n.Cond, n.Left.Columns(), n.Right.Columns(), n.Cols))
	if err != nil {
		return nil, err
	}
	return &nlJoinIter{joinDriver: d, n: n}, nil
}

type nlJoinIter struct {
	*joinDriver
	n *NestedLoopJoin
}

func (it *nlJoinIter) Next() (_ arrow.RecordBatch, err error) {
	defer recoverErr(&err)
	return it.step(it.load, it.pairs)
}

// load materializes the right side.
func (it *nlJoinIter) load() error {
	_, err := it.j.loadRight(it.rightIn, it.n.Right.Columns())
	return err
}

// pairs joins one left batch with every right row.
func (it *nlJoinIter) pairs(b arrow.RecordBatch) error {
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
			return err
		}
	}
	return nil
}
