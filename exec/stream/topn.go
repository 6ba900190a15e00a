package stream

import (
	"errors"
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// TopN keeps, per partition (all rows when PartitionBy is empty), the rows
// ranked Offset+1 .. Offset+Limit by Order, and emits the changes to that
// set as its input changes (ORDER BY ... LIMIT n OFFSET m, and
// row_number() OVER (PARTITION BY ... ORDER BY ...) <= n). Ties in Order
// are broken by the whole row, so the result is deterministic. With RankCol
// the output has one more column (int8): the row's row_number within its
// partition, and rows whose rank moves are updated.
//
// State: every row of the input, per partition, in order (a retraction
// may bring a row from beyond the limit into the top).
type TopN struct {
	Input       Node
	PartitionBy []expr.Expr
	Order       []exec.SortKey
	Limit       int64 // -1: no limit
	Offset      int64
	RankCol     bool
	Cols        []types.Column // the input's columns (plus the rank column)
}

// Columns implements Node.
func (t *TopN) Columns() []types.Column { return t.Cols }

// Inputs implements Node.
func (t *TopN) Inputs() []Node { return []Node{t.Input} }

// Explain implements Node.
func (t *TopN) Explain() string {
	keys := make([]string, len(t.Order))
	for i, k := range t.Order {
		keys[i] = k.E.String()
		if k.Desc {
			keys[i] += " DESC"
		}
	}
	s := "StreamTopN: order by " + strings.Join(keys, ", ")
	if len(t.PartitionBy) > 0 {
		parts := make([]string, len(t.PartitionBy))
		for i, p := range t.PartitionBy {
			parts[i] = p.String()
		}
		s = "StreamGroupTopN: partition by " + strings.Join(parts, ", ") + " " + s[len("StreamTopN: "):]
	}
	if t.Limit >= 0 {
		s += fmt.Sprintf(" limit %d", t.Limit)
	}
	if t.Offset > 0 {
		s += fmt.Sprintf(" offset %d", t.Offset)
	}
	return s
}

// Start implements Node.
func (t *TopN) Start(env *Env, inputs []<-chan Message) <-chan Message {
	env.Fail(errors.New("stream: top-n is not implemented yet"))
	out := make(chan Message)
	close(out)
	return out
}
