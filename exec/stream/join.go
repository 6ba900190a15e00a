package stream

import (
	"errors"
	"strings"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// HashJoin is an incremental equi-join of two changelogs with retractions:
// inner, left, right and full outer joins, and semi and anti joins (which
// output the left columns only). Rows match when LeftKeys[i] = RightKeys[i]
// for every i (NULL keys never match; no keys means every pair matches, a
// cross join) and Cond, over the left columns followed by the right columns,
// is true (nil: no residual condition). Output: the left columns then the
// right columns (Cols), outer sides padded with NULLs.
//
// State: both sides' rows, hashed by join key (each side kept only because
// the other side may still change).
type HashJoin struct {
	Left, Right         Node
	Kind                exec.JoinKind
	LeftKeys, RightKeys []expr.Expr
	Cond                expr.Expr
	Cols                []types.Column
}

// Columns implements Node.
func (j *HashJoin) Columns() []types.Column { return j.Cols }

// Inputs implements Node.
func (j *HashJoin) Inputs() []Node { return []Node{j.Left, j.Right} }

var joinKindNames = [...]string{"inner", "left", "right", "full", "semi", "anti"}

// Explain implements Node.
func (j *HashJoin) Explain() string {
	s := "StreamHashJoin: " + joinKindNames[j.Kind]
	if len(j.LeftKeys) > 0 {
		parts := make([]string, len(j.LeftKeys))
		for i := range j.LeftKeys {
			parts[i] = j.LeftKeys[i].String() + " = " + j.RightKeys[i].String()
		}
		s += " on " + strings.Join(parts, " AND ")
	}
	if j.Cond != nil {
		s += " filter " + j.Cond.String()
	}
	return s
}

// Start implements Node.
func (j *HashJoin) Start(env *Env, inputs []<-chan Message) <-chan Message {
	env.Fail(errors.New("stream: hash join is not implemented yet"))
	out := make(chan Message)
	close(out)
	return out
}
