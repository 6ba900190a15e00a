package stream

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Replicate sends each input row as many times as its last column (a
// bigint count, not sent) says: an insert or a delete of a row with count
// n is n inserts or n deletes of it, an update pair the deletes of the
// before-row's copies and the inserts of the after-row's (a count of 0 or
// NULL sends nothing). It gives INTERSECT ALL and EXCEPT ALL their rows
// from the multiplicities an aggregation computes
// (planner/stream_setop.go). Stateless; chunks of at most replicateRows.
type Replicate struct {
	Input Node
}

const replicateRows = 4096

// Columns implements Node: the input's but the count.
func (r *Replicate) Columns() []types.Column {
	in := r.Input.Columns()
	return in[:len(in)-1]
}

// Inputs implements Node.
func (r *Replicate) Inputs() []Node { return []Node{r.Input} }

// Explain implements Node.
func (r *Replicate) Explain() string {
	in := r.Input.Columns()
	return fmt.Sprintf("StreamReplicate: each row repeated by %s", in[len(in)-1].Name)
}

// Start implements Node.
func (r *Replicate) Start(env *Env, inputs []<-chan Message) <-chan Message {
	ectx := env.evalContext()
	cols := r.Columns()
	schema := types.ArrowSchema(cols)
	return runMapEach(env, inputs[0], func(c *Chunk, emit func(*Chunk) bool) (bool, error) {
		nc := int(c.Rec.NumCols())
		counts, ok := c.Rec.Column(nc - 1).(*array.Int64)
		if !ok {
			return false, pgerr.Internal("stream: Replicate's count is %s", c.Rec.Column(nc-1).DataType())
		}
		rec := array.NewRecordBatch(schema, c.Rec.Columns()[:nc-1], c.Rec.NumRows())
		defer rec.Release()
		var idx []int32
		var ops []Op
		inserts := true
		flush := func() bool {
			if len(idx) == 0 {
				return true
			}
			out := &Chunk{Rec: exec.TakeRows(ectx.Allocator(), rec, idx)}
			if !inserts {
				out.Ops = ops
			}
			idx, ops, inserts = nil, nil, true
			return emit(out)
		}
		for i := range c.Len() {
			if counts.IsNull(i) {
				continue
			}
			op := Insert
			if o := c.Op(i); o == Delete || o == UpdateBefore {
				op = Delete
			}
			for k := counts.Value(i); k > 0; k-- {
				idx, ops = append(idx, int32(i)), append(ops, op)
				inserts = inserts && op == Insert
				if len(idx) == replicateRows && !flush() {
					return false, nil
				}
			}
		}
		return flush(), nil
	}, nil)
}
