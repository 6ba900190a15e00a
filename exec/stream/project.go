package stream

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Project computes Exprs over each chunk; ops are unchanged.
type Project struct {
	Input Node
	Exprs []expr.Expr
	Cols  []types.Column
	// MarkDelays (µs, per output column; nil: none) compute an output
	// column's watermark at its input's watermark minus that delay, for an
	// EMIT ON WINDOW CLOSE WITH DELAY query closing groups on a column that
	// grows with a time in steps (date_trunc, date_bin): the delay must
	// apply to the time before it is rounded (planner/stream_eowc.go).
	MarkDelays []int64
}

// Columns implements Node.
func (p *Project) Columns() []types.Column { return p.Cols }

// Inputs implements Node.
func (p *Project) Inputs() []Node { return []Node{p.Input} }

// Explain implements Node.
func (p *Project) Explain() string {
	parts := make([]string, len(p.Exprs))
	for i, e := range p.Exprs {
		parts[i] = e.String()
	}
	s := "StreamProject: " + strings.Join(parts, ", ")
	for i, d := range p.MarkDelays {
		if d > 0 {
			s += fmt.Sprintf(" (the watermark of %s computed %s behind its input's)", parts[i], time.Duration(d*1000))
		}
	}
	return s
}

// ProcTimeCols lists the output columns that are a plain PROCTIME() call:
// processing time, stamped on each chunk from env.Clock and carrying a
// watermark (the clock at each barrier; the clock is monotone, so no later
// row has an earlier stamp).
func (p *Project) ProcTimeCols() []int {
	var cols []int
	for i, e := range p.Exprs {
		if IsProcTime(e) {
			cols = append(cols, i)
		}
	}
	return cols
}

// IsProcTime reports whether e is a call of PROCTIME().
func IsProcTime(e expr.Expr) bool {
	c, ok := e.(*expr.Call)
	return ok && c.Fn.Name == "proctime" && len(c.Args) == 0
}

// Start implements Node. The goroutine owns its evaluation context; with
// PROCTIME() columns, Context.Now is the clock read once per chunk, so all
// rows of a chunk carry the same stamp.
func (p *Project) Start(env *Env, inputs []<-chan Message) <-chan Message {
	ectx := env.evalContext()
	schema := types.ArrowSchema(p.Cols)
	pt := p.ProcTimeCols()
	clock := env.clock()
	out := runMapMarks(env, inputs[0], func(c *Chunk) (*Chunk, error) {
		if len(pt) > 0 {
			ectx.Now = clock.Now()
		}
		cols := make([]arrow.Array, len(p.Exprs))
		for i, e := range p.Exprs {
			a, err := e.Eval(ectx, c.Rec)
			if err != nil && env.OnRowError != nil {
				a, err = evalRows(env, ectx, e, c.Rec)
			}
			if err != nil {
				return nil, err
			}
			cols[i] = a
		}
		// The same rows: a routed reader's Part stays true of them
		// (route.go). Recycle goes on too: the Project keeps none of the
		// input's arrays and nothing else reads the input (a fan-out strips
		// it), so the output's last reader may give back the input's
		// buffers that the output still holds (those it dropped go to the
		// collector; computed columns are not a reader's, which ignores
		// them).
		return &Chunk{Rec: array.NewRecordBatch(schema, cols, c.Rec.NumRows()), Ops: c.Ops, Part: c.Part, Recycle: c.Recycle}, nil
	}, p.markMap(env.evalContext()))
	if len(pt) == 0 {
		return out
	}
	return procTimeMarks(env, out, pt, clock)
}

// procTimeMarks forwards in, sending before each barrier a watermark at the
// clock's time on each PROCTIME() column: the chunks before the barrier
// were stamped no later, and later ones will be stamped no earlier.
// ADVANCE CLOCK advances the clock then injects a barrier, so windows over
// PROCTIME() close deterministically on a manual clock.
func procTimeMarks(env *Env, in <-chan Message, cols []int, clock Clock) <-chan Message {
	out := make(chan Message, ChannelSize)
	go func() {
		defer close(out)
		for m := range in {
			if m.Kind == KindBarrier {
				now := clock.Now().UnixMicro()
				for _, c := range cols {
					if !send(env, out, WatermarkMsg(Watermark{Col: c, Value: now})) {
						return
					}
				}
			}
			if !send(env, out, m) {
				return
			}
		}
	}()
	return out
}

// markMap maps a watermark on an input column to every output column that
// is a plain reference to it, or an expression that grows with it
// (MonotoneInput: the watermark computed through it, in ctx); a watermark
// on a column no output passes on so is dropped (another computed column
// has no watermark). A negative column, a runtime mark (a split reader
// ended or went idle; Fused), passes unchanged.
func (p *Project) markMap(ctx *expr.Context) func(Watermark) []Watermark {
	outs := map[int][]Watermark{}
	for i, e := range p.Exprs {
		if c, ok := MarkSource(e); ok {
			outs[c] = append(outs[c], Watermark{Col: i})
		}
	}
	return func(w Watermark) []Watermark {
		if w.Col < 0 {
			return []Watermark{w}
		}
		ws := outs[w.Col]
		res := make([]Watermark, 0, len(ws))
		for _, o := range ws {
			v := w.Value
			if o.Col < len(p.MarkDelays) {
				v = addSat(v, -p.MarkDelays[o.Col])
			}
			if v, ok := markAt(ctx, p.Exprs[o.Col], w.Col, v); ok {
				res = append(res, Watermark{Col: o.Col, Value: v})
			}
		}
		return res
	}
}
