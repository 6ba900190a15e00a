package stream

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// HashAgg is incremental GROUP BY aggregation with retractions. Its output
// rows are the GroupBy values then one value per Agg, described by Cols;
// the group keys are the output's stream key.
//
// Rows add to (Insert, UpdateAfter) or retract from (Delete, UpdateBefore)
// their group. Nothing is emitted until the epoch's barrier: then, for each
// group whose output row changed during the epoch, in the order the groups
// were first touched, HashAgg emits an Insert (new group), a Delete (its
// row count fell to 0; its state is freed) or an UpdateBefore/UpdateAfter
// pair, and then forwards the barrier. A group whose row is unchanged at the
// barrier (say, a row inserted and deleted in the same epoch) emits nothing.
// Without GroupBy there is exactly one group, which always exists: its row
// (count 0, other aggregates NULL when empty) is inserted at the first
// barrier and only updated after. Watermarks pass through.
type HashAgg struct {
	Input   Node
	GroupBy []expr.Expr
	Aggs    []AggSpec
	Cols    []types.Column
}

// Columns implements Node.
func (h *HashAgg) Columns() []types.Column { return h.Cols }

// Inputs implements Node.
func (h *HashAgg) Inputs() []Node { return []Node{h.Input} }

// Explain implements Node.
func (h *HashAgg) Explain() string {
	parts := make([]string, 0, len(h.GroupBy)+len(h.Aggs))
	for _, a := range h.Aggs {
		parts = append(parts, a.String())
	}
	s := "StreamHashAgg: " + strings.Join(parts, ", ")
	if len(h.GroupBy) > 0 {
		keys := make([]string, len(h.GroupBy))
		for i, g := range h.GroupBy {
			keys[i] = g.String()
		}
		s += " GROUP BY " + strings.Join(keys, ", ")
	}
	return s
}

// Start implements Node.
func (h *HashAgg) Start(env *Env, inputs []<-chan Message) <-chan Message {
	out := make(chan Message, ChannelSize)
	go func() {
		defer close(out)
		r, err := h.newRun(env)
		if err != nil {
			env.Fail(err)
			return
		}
		for {
			var m Message
			var ok bool
			select {
			case m, ok = <-inputs[0]:
			case <-env.Ctx.Done():
				return
			}
			if !ok {
				return
			}
			if m.Kind == KindChunk {
				if err := r.consume(m.Chunk); err != nil {
					env.Fail(err)
					return
				}
				continue
			}
			if m.Kind == KindBarrier {
				c, err := r.flush()
				if err != nil {
					env.Fail(err)
					return
				}
				if c != nil && !send(env, out, ChunkMsg(c)) {
					return
				}
			}
			if !send(env, out, m) {
				return
			}
		}
	}()
	return out
}

// aggGroup is one group's state; emitted is the row last sent downstream
// (nil when none is live there).
type aggGroup struct {
	enc     string
	key     []types.Value
	rows    int64
	states  []aggState
	emitted []types.Value
	touched bool
}

// aggRun is one running HashAgg's state, owned by its goroutine.
type aggRun struct {
	h       *HashAgg
	ectx    *expr.Context
	keyT    []types.T
	argT    []types.T
	schema  *arrow.Schema
	groups  map[string]*aggGroup
	touched []*aggGroup
	global  *aggGroup // the one group without GROUP BY
	started bool      // the global group was emitted once
	enc     []byte
}

func (h *HashAgg) newRun(env *Env) (*aggRun, error) {
	if len(h.Cols) != len(h.GroupBy)+len(h.Aggs) {
		return nil, fmt.Errorf("stream: hashagg has %d columns for %d keys and %d aggregates", len(h.Cols), len(h.GroupBy), len(h.Aggs))
	}
	r := &aggRun{h: h, ectx: env.evalContext(), schema: types.ArrowSchema(h.Cols), groups: map[string]*aggGroup{}}
	for _, g := range h.GroupBy {
		r.keyT = append(r.keyT, g.Type())
	}
	for _, a := range h.Aggs {
		if _, err := a.ResultType(); err != nil {
			return nil, err
		}
		var t types.T
		if a.Arg != nil {
			t = a.Arg.Type()
		}
		r.argT = append(r.argT, t)
	}
	if len(h.GroupBy) == 0 {
		r.global = r.newGroup("", nil)
	}
	return r, nil
}

func (r *aggRun) newGroup(enc string, key []types.Value) *aggGroup {
	g := &aggGroup{enc: enc, key: key, states: make([]aggState, len(r.h.Aggs))}
	for i, a := range r.h.Aggs {
		g.states[i] = newAggState(a, r.argT[i])
	}
	return g
}

// consume applies one chunk to the groups.
func (r *aggRun) consume(c *Chunk) error {
	n := c.Len()
	if n == 0 {
		return nil
	}
	keys := make([]arrow.Array, len(r.h.GroupBy))
	for i, e := range r.h.GroupBy {
		a, err := e.Eval(r.ectx, c.Rec)
		if err != nil {
			return err
		}
		defer a.Release()
		keys[i] = a
	}
	args := make([]arrow.Array, len(r.h.Aggs))
	for i, s := range r.h.Aggs {
		if s.Kind == AggCountStar || s.Arg == nil {
			continue
		}
		a, err := s.Arg.Eval(r.ectx, c.Rec)
		if err != nil {
			return err
		}
		defer a.Release()
		args[i] = a
	}
	for row := 0; row < n; row++ {
		g := r.global
		if g == nil {
			r.enc = r.enc[:0]
			for k, a := range keys {
				r.enc = encodeKey(r.enc, a, row, r.keyT[k])
			}
			g = r.groups[string(r.enc)]
			if g == nil {
				kv := make([]types.Value, len(keys))
				for k, a := range keys {
					kv[k] = ownValue(types.ValueAt(a, row, r.keyT[k]))
				}
				g = r.newGroup(string(r.enc), kv)
				r.groups[g.enc] = g
			}
		}
		sign := c.Op(row).Sign()
		g.rows += sign
		if g.rows < 0 {
			return pgerr.Internal("stream: hashagg: a retraction for a row its group does not hold")
		}
		for i, st := range g.states {
			if err := st.add(args[i], row, sign); err != nil {
				return err
			}
		}
		if !g.touched {
			g.touched = true
			r.touched = append(r.touched, g)
		}
	}
	return nil
}

// ownValue copies values that may point into an Arrow buffer.
func ownValue(v types.Value) types.Value {
	switch x := v.(type) {
	case string:
		return strings.Clone(x)
	case []byte:
		return append([]byte(nil), x...)
	}
	return v
}

// flush builds the epoch's output chunk (nil when nothing changed) and
// frees the groups that became empty.
func (r *aggRun) flush() (*Chunk, error) {
	var rows [][]types.Value
	var ops []Op
	if r.global != nil && !r.started {
		r.started = true
		if !r.global.touched {
			r.global.touched = true
			r.touched = append(r.touched, r.global)
		}
	}
	for _, g := range r.touched {
		g.touched = false
		if g.rows == 0 && g != r.global {
			delete(r.groups, g.enc)
			if g.emitted != nil {
				rows, ops = append(rows, g.emitted), append(ops, Delete)
			}
			continue
		}
		row, err := r.output(g)
		if err != nil {
			return nil, err
		}
		switch {
		case g.emitted == nil:
			rows, ops = append(rows, row), append(ops, Insert)
		case !sameRow(g.emitted, row): // identical rows (view.go) need no update
			rows, ops = append(rows, g.emitted, row), append(ops, UpdateBefore, UpdateAfter)
		}
		g.emitted = row
	}
	r.touched = r.touched[:0]
	if len(rows) == 0 {
		return nil, nil
	}
	rec, err := r.build(rows)
	if err != nil {
		return nil, err
	}
	return &Chunk{Rec: rec, Ops: ops}, nil
}

// output is g's current row: keys then aggregate results.
func (r *aggRun) output(g *aggGroup) ([]types.Value, error) {
	row := make([]types.Value, 0, len(g.key)+len(g.states))
	row = append(row, g.key...)
	for _, st := range g.states {
		v, err := st.result()
		if err != nil {
			return nil, err
		}
		row = append(row, v)
	}
	return row, nil
}

func (r *aggRun) build(rows [][]types.Value) (arrow.RecordBatch, error) {
	mem := r.ectx.Allocator()
	cols := make([]arrow.Array, len(r.h.Cols))
	for j, c := range r.h.Cols {
		b := types.NewBuilder(mem, c.Type)
		for _, row := range rows {
			if err := types.AppendValue(b, row[j], c.Type); err != nil {
				b.Release()
				return nil, fmt.Errorf("stream: hashagg output: %w", err)
			}
		}
		cols[j] = b.NewArray()
		b.Release()
	}
	return array.NewRecordBatch(r.schema, cols, int64(len(rows))), nil
}

// encodeKey appends a self-delimiting encoding of row i of a such that
// values GROUP BY puts together encode equally: a NULL marker, then the
// value (floats with -0 = 0 and one NaN, char(n) without trailing spaces,
// numeric reduced, intervals by their 30-day-month span).
func encodeKey(dst []byte, a arrow.Array, i int, t types.T) []byte {
	if a.IsNull(i) {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	switch x := a.(type) {
	case *array.Int16, *array.Int32, *array.Int64:
		return binary.LittleEndian.AppendUint64(dst, uint64(intAt(a, i)))
	case *array.Float64:
		return binary.LittleEndian.AppendUint64(dst, floatBits(x.Value(i)))
	case *array.Float32:
		return binary.LittleEndian.AppendUint64(dst, floatBits(float64(x.Value(i))))
	case *array.Boolean:
		if x.Value(i) {
			return append(dst, 1)
		}
		return append(dst, 0)
	case *array.Date32:
		return binary.LittleEndian.AppendUint32(dst, uint32(x.Value(i)))
	case *array.Timestamp:
		return binary.LittleEndian.AppendUint64(dst, uint64(x.Value(i)))
	case *array.Time64:
		return binary.LittleEndian.AppendUint64(dst, uint64(x.Value(i)))
	case *array.MonthDayNanoInterval:
		v := x.Value(i)
		const dayUS = 86400 * 1000000
		us := v.Nanoseconds / 1000
		days := int64(v.Months)*30 + int64(v.Days) + us/dayUS
		us %= dayUS
		if us < 0 {
			us += dayUS
			days--
		}
		dst = binary.LittleEndian.AppendUint64(dst, uint64(days))
		return binary.LittleEndian.AppendUint64(dst, uint64(us))
	case *array.String:
		s := x.Value(i)
		switch t.Kind {
		case types.Bpchar:
			s = strings.TrimRight(s, " ")
		case types.Numeric:
			s = numericKey(types.ValueAt(a, i, t))
		}
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...)
	case *array.Binary:
		v := x.Value(i)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		return append(dst, v...)
	}
	// other types: their text form
	s := types.AppendText(nil, types.ValueAt(a, i, t), t, &types.DefaultFormat)
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// numericKey is one text per numeric value: 1.50 and 1.5 and 15e-1 agree.
func numericKey(v types.Value) string {
	d, ok := v.(*apd.Decimal)
	if !ok {
		return ""
	}
	if d.IsZero() && d.Form == apd.Finite {
		return "0"
	}
	var r apd.Decimal
	r.Reduce(d)
	return r.String()
}
