package stream

import (
	"context"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Node is an immutable streaming plan operator; Start runs one instance.
type Node interface {
	// Columns describes the rows of the chunks this node sends.
	Columns() []types.Column
	// Inputs are the nodes feeding this one, in input order.
	Inputs() []Node
	// Explain is this node's line in EXPLAIN.
	Explain() string
	// Start runs the operator on its own goroutine over the given input
	// channels (one per Inputs()) and returns its output channel, which it
	// closes when every input is closed or env.Ctx is canceled. Errors go to
	// env.Fail; the operator then stops.
	Start(env *Env, inputs []<-chan Message) <-chan Message
}

// Env is the runtime a graph of operators shares.
type Env struct {
	Ctx context.Context
	// Eval is the expression context template; each operator goroutine
	// uses its own copy (expr.Context is not shared between goroutines).
	Eval expr.Context
	// OnRowError, if set, receives the run-time error of a single row
	// (see rowerr.go); the row is dropped or its value made NULL and the
	// graph goes on. It is called from operator goroutines concurrently.
	OnRowError func(err error)
	// Clock is processing time (nil: the wall clock).
	Clock Clock
	// OnLate, if set, receives the rows an operator dropped as late (their
	// window's state was already freed); the runtime counts them and, with
	// LATE ROWS INTO, stores them. after is the epoch of the last
	// checkpoint barrier at which the dropping operator instance took its
	// snapshot (0: none since it started): a resume from a checkpoint
	// later than after has the rows in the operator's state as dropped, one
	// from after or earlier replays them and drops them again (see
	// Env.late). Called from operator goroutines.
	OnLate func(rows arrow.RecordBatch, after uint64)
	// Checkpoints, if set, restores operators' state at Start and takes
	// their snapshots at checkpoint barriers (state.go).
	Checkpoints Checkpointer
	// Meter, if set, receives the operator's state size and busy time
	// (meter.go); each operator instance has its own (WithMeter).
	Meter *Meter

	mu     sync.Mutex // guards err and ckAt
	err    error
	ckAt   map[Node]uint64 // per operator: the last checkpoint it snapshotted at (OnLate's after)
	stop   context.CancelFunc
	parent *Env // WithMeter's: its failures are this Env's too
}

// NewEnv returns an Env whose context is canceled by the first failure.
func NewEnv(ctx context.Context, eval expr.Context) *Env {
	ctx, cancel := context.WithCancel(ctx)
	eval.Ctx = ctx
	return &Env{Ctx: ctx, Eval: eval, stop: cancel}
}

// Fail records the first error and stops every operator of the graph.
func (e *Env) Fail(err error) {
	e.mu.Lock()
	first := e.err == nil
	if first {
		e.err = err
	}
	e.mu.Unlock()
	if first && e.stop != nil {
		e.stop()
	}
}

// Err returns the first failure, if any.
func (e *Env) Err() error {
	e.mu.Lock()
	err := e.err
	e.mu.Unlock()
	if err == nil && e.parent != nil {
		return e.parent.Err()
	}
	return err
}

// evalContext returns a private expression context for one operator.
func (e *Env) evalContext() *expr.Context {
	c := e.Eval
	c.Ctx = e.Ctx
	c.Subqueries = nil
	return &c
}

// send delivers m unless the graph is stopping; false means stop. With a
// Meter, the time blocked on a full queue is counted (not as busy time).
func send(env *Env, out chan<- Message, m Message) bool {
	if env.Meter != nil {
		select { // the common case: room in the queue, no clock read
		case out <- m:
			return true
		default:
		}
		t := time.Now()
		defer func() { env.Meter.sendWait.Add(int64(time.Since(t))) }()
	}
	select {
	case out <- m:
		return true
	case <-env.Ctx.Done():
		return false
	}
}

// runMap runs a one-input operator that transforms chunks and passes
// watermarks and barriers through (Filter).
func runMap(env *Env, in <-chan Message, fn func(*Chunk) (*Chunk, error)) <-chan Message {
	return runMapMarks(env, in, fn, nil)
}

// runMapMarks is runMap where marks, if set, maps an input watermark to
// the output's (none, one, or several: Project).
func runMapMarks(env *Env, in <-chan Message, fn func(*Chunk) (*Chunk, error), marks func(Watermark) []Watermark) <-chan Message {
	return runMapEach(env, in, func(c *Chunk, emit func(*Chunk) bool) (bool, error) {
		oc, err := fn(c)
		if err != nil || oc == nil || oc.Len() == 0 {
			return true, err
		}
		return emit(oc), nil
	}, marks)
}

// runMapEach is runMapMarks where fn maps a chunk to any number of
// chunks, each passed to emit (false: the graph is stopping; fn returns
// false then too).
func runMapEach(env *Env, in <-chan Message, fn func(c *Chunk, emit func(*Chunk) bool) (bool, error), marks func(Watermark) []Watermark) <-chan Message {
	out := make(chan Message, ChannelSize)
	emit := func(c *Chunk) bool { return send(env, out, ChunkMsg(c)) }
	go func() {
		defer close(out)
		bc := env.busyClock()
		for {
			bc.stop()
			var m Message
			var ok bool
			select {
			case m, ok = <-in:
			case <-env.Ctx.Done():
				return
			}
			bc.start()
			if !ok {
				return
			}
			switch {
			case m.Kind == KindChunk:
				more, err := fn(m.Chunk, emit)
				if err != nil {
					env.Fail(err)
					return
				}
				if !more {
					return
				}
				continue
			case m.Kind == KindWatermark && marks != nil:
				for _, w := range marks(m.Watermark) {
					if !send(env, out, WatermarkMsg(w)) {
						return
					}
				}
				continue
			}
			if !send(env, out, m) {
				return
			}
		}
	}()
	return out
}
