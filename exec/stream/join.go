package stream

import (
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
	// Clean, if set (inner joins only), frees state with the watermark:
	// see JoinClean and joinclean.go.
	Clean *JoinClean
	// Interval, if set, makes the join an interval join that frees rows
	// with the watermark: see IntervalJoin and interval.go.
	Interval *IntervalJoin
	// Compares and Residual, if set, are Cond split for speed: the
	// conjuncts that compare a left column with a right one, run on the
	// candidate pairs where their values lie (joinpairs.go), and the other
	// conjuncts (nil: none), evaluated on the pairs left. Together they
	// are Cond, which EXPLAIN still shows; without Compares, Cond is
	// evaluated.
	Compares []PairCompare
	Residual expr.Expr
	// Pruned, if set, has one flag per output column (Cols): no operator
	// above reads the column, so the join sends it as NULLs instead of
	// gathering its values (q4 reads 3 of its join's 7 columns). The
	// output's schema stays Cols.
	Pruned []bool
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
	if c := j.Clean; c != nil && c.Key < len(j.LeftKeys) {
		s += " (state freed below the watermark of " + j.LeftKeys[c.Key].String() + ")"
	}
	if j.Interval != nil {
		s += " (" + j.Interval.describe(j) + ")"
	}
	return s
}

// Start implements Node. The join runs on its own goroutine; its state
// (joinRun) is owned by that goroutine. Each chunk's output is sent as soon
// as the chunk is consumed (in chunks of at most joinOutRows rows), so the
// output of an epoch precedes its barrier. Barriers are aligned across both
// inputs. A watermark is forwarded only for the columns of a key pair that
// are plain columns on both sides (LeftKeys[k] = RightKeys[k]), as the
// minimum of the two sides' watermarks, on the left key column and, when the
// output has right columns, on the right one: every row the join emits
// (retractions included) got there through a row with that key. An
// interval join forwards its own watermarks instead (IntervalJoin).
// Errors evaluating keys or Cond fail the graph (env.Fail).
func (j *HashJoin) Start(env *Env, inputs []<-chan Message) <-chan Message {
	out := make(chan Message, ChannelSize)
	go func() {
		defer close(out)
		r, err := j.newRun(env, out)
		if err != nil {
			env.Fail(err)
			return
		}
		defer r.release()
		if err := env.restore(j, r); err != nil {
			env.Fail(err)
			return
		}
		onChunk := func(i int, c *Chunk) bool {
			if err := r.consume(i, c); err != nil {
				if err != errJoinStopped {
					env.Fail(err)
				}
				return false
			}
			return true
		}
		onBarrier := func(b Barrier) bool {
			if err := env.snapshot(j, b, r); err != nil {
				env.Fail(err)
				return false
			}
			return send(env, out, BarrierMsg(b))
		}
		if r.iv != nil {
			alignSides(env, inputs, onChunk, func(i int, w Watermark) bool { return r.iv.onMark(r, i, w) }, onBarrier)
			return
		}
		alignMapped(env, inputs, r.marks, j.markCol, onChunk, func(w Watermark) bool { return r.watermark(w) }, onBarrier)
	}()
	return out
}

// keyColumns returns the input columns of key pair k, if both are columns.
func (j *HashJoin) keyColumns(k int) (lc, rc int, ok bool) {
	l, lok := j.LeftKeys[k].(*expr.ColRef)
	r, rok := j.RightKeys[k].(*expr.ColRef)
	if !lok || !rok {
		return 0, 0, false
	}
	return l.Idx, r.Idx, true
}

// markCol maps a watermark on column col of input to the index of the first
// key pair using that column.
func (j *HashJoin) markCol(input, col int) (int, bool) {
	for k := range j.LeftKeys {
		lc, rc, ok := j.keyColumns(k)
		if ok && (input == 0 && lc == col || input == 1 && rc == col) {
			return k, true
		}
	}
	return 0, false
}
