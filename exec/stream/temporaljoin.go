package stream

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// TemporalJoin is a lookup join (`s JOIN t FOR SYSTEM_TIME AS OF
// PROCTIME()`, inner or left): each row of the Stream input is joined with
// the rows of the Table input as the operator holds them when the row
// arrives. Changes of the table only change that state: they emit nothing
// and retract nothing emitted before. Rows match when StreamKeys[i] =
// TableKeys[i] for every i (NULL keys never match) and Cond, over the
// stream columns followed by the table columns, is true (nil: none). Output
// (Cols): the stream columns then the table columns, NULL-padded for a
// left join's unmatched rows; each output row carries its stream row's op.
// The planner gives it append-only stream inputs only, so the output is
// append-only too. A stream row that retracts (a Delete or an update half)
// is looked up like an insert, against the table as it is then: it matches
// what its insert matched only if the table did not change in between
// (which is why the planner refuses retracting stream inputs).
//
// State: the table's rows hashed by TableKeys (the table side of a
// HashJoin; checkpointed as a HashJoin's, join_state.go). Stream rows are
// not kept. The table is part of the job's plan (its own Scan), so the
// state is fed by the job's own, checkpointed, feed of the table and is
// consistent with the stream at every barrier.
//
// Ordering: barriers align across both inputs. At a fresh start (nothing
// restored) the table input is read alone until its first barrier, so
// every stream row sees at least the table's backfill. Afterwards both
// inputs are read as their messages come, the table's first when both are
// ready: a stream row of epoch e sees every table change of the epochs
// before e, and those of epoch e that reached the operator before it.
//
// Watermarks: the stream input's pass through unchanged (its columns keep
// their positions); the table input's are dropped. No output row is older
// than the stream row that made it, so windows over the output can close.
type TemporalJoin struct {
	Stream, Table         Node
	Kind                  exec.JoinKind // exec.InnerJoin or exec.LeftJoin
	StreamKeys, TableKeys []expr.Expr
	Cond                  expr.Expr
	Cols                  []types.Column
}

// Columns implements Node.
func (t *TemporalJoin) Columns() []types.Column { return t.Cols }

// Inputs implements Node: the stream, then the table.
func (t *TemporalJoin) Inputs() []Node { return []Node{t.Stream, t.Table} }

// Explain implements Node.
func (t *TemporalJoin) Explain() string {
	s := "StreamTemporalJoin: " + joinKindNames[t.Kind]
	if len(t.StreamKeys) > 0 {
		parts := make([]string, len(t.StreamKeys))
		for i := range t.StreamKeys {
			parts[i] = t.StreamKeys[i].String() + " = " + t.TableKeys[i].String()
		}
		s += " on " + strings.Join(parts, " AND ")
	}
	if t.Cond != nil {
		s += " filter " + t.Cond.String()
	}
	return s + " (lookup: table changes emit nothing)"
}

// hashJoin is the HashJoin whose machinery runs the lookup (joinRun with
// lookup set).
func (t *TemporalJoin) hashJoin() *HashJoin {
	return &HashJoin{Left: t.Stream, Right: t.Table, Kind: t.Kind,
		LeftKeys: t.StreamKeys, RightKeys: t.TableKeys, Cond: t.Cond, Cols: t.Cols}
}

// Start implements Node. The join runs on its own goroutine, which owns
// its state. Errors fail the graph (env.Fail).
func (t *TemporalJoin) Start(env *Env, inputs []<-chan Message) <-chan Message {
	out := make(chan Message, ChannelSize)
	go func() {
		defer close(out)
		if t.Kind != exec.InnerJoin && t.Kind != exec.LeftJoin {
			env.Fail(errTemporalKind(t.Kind))
			return
		}
		r, err := t.hashJoin().newRun(env, out)
		if err != nil {
			env.Fail(err)
			return
		}
		defer r.release()
		r.lookup, r.keys.probe[0] = true, true
		if err := env.restore(t, r); err != nil {
			env.Fail(err)
			return
		}
		t.run(env, r, inputs, out)
	}()
	return out
}

// run reads both inputs until they close (see TemporalJoin for the order).
func (t *TemporalJoin) run(env *Env, r *joinRun, inputs []<-chan Message, out chan<- Message) {
	var open, blocked [2]bool
	open[0], open[1] = true, true
	tableFirst := !r.based // a fresh start: the table's backfill first
	var pending *Barrier
	release := func() bool {
		if pending == nil || (open[0] && !blocked[0]) || (open[1] && !blocked[1]) {
			return true
		}
		b := *pending
		pending, blocked = nil, [2]bool{}
		if err := env.snapshot(t, b, r); err != nil {
			env.Fail(err)
			return false
		}
		return send(env, out, BarrierMsg(b))
	}
	bc := env.busyClock()
	for open[0] || open[1] {
		bc.stop()
		var sc, tc <-chan Message
		if open[0] && !blocked[0] && !tableFirst {
			sc = inputs[0]
		}
		if open[1] && !blocked[1] {
			tc = inputs[1]
		}
		var m Message
		var ok bool
		i := 1
		select { // the table's changes first when both are ready
		case m, ok = <-tc:
		default:
			select {
			case m, ok = <-tc:
			case m, ok = <-sc:
				i = 0
			case <-env.Ctx.Done():
				return
			}
		}
		bc.start()
		if !ok {
			open[i], blocked[i] = false, false
			if i == 1 {
				tableFirst = false
			}
			if !release() {
				return
			}
			continue
		}
		switch m.Kind {
		case KindChunk:
			if err := r.consume(i, m.Chunk); err != nil {
				if err != errJoinStopped {
					env.Fail(err)
				}
				return
			}
		case KindWatermark:
			if i == 0 && !send(env, out, m) {
				return
			}
		case KindBarrier:
			var err error
			if pending, err = joinBarrier(pending, m.Barrier); err != nil {
				env.Fail(err)
				return
			}
			blocked[i] = true
			if i == 1 {
				tableFirst = false
			}
			if !release() {
				return
			}
		}
	}
}

// errTemporalKind refuses a join kind other than inner and left.
func errTemporalKind(k exec.JoinKind) error {
	name := "unknown"
	if int(k) < len(joinKindNames) {
		name = joinKindNames[k]
	}
	return fmt.Errorf("stream: temporal join of kind %s (only inner and left)", name)
}

// checkpoints marks TemporalJoin as checkpointing its state (the table
// side, as a HashJoin's: join_state.go).
func (t *TemporalJoin) checkpoints() {}
