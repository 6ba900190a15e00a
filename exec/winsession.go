package exec

import (
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/types"
)

// SessionWindow adds window_start and window_end to its input's rows: the
// session each row belongs to. Sessions are kept per value of PartitionBy
// (NULLs equal, as in GROUP BY); within a partition, a session is a run of
// rows ordered by time in which each row is less than Gap after the
// previous one, and spans [first time, last time + Gap). Rows with a NULL
// time are in no session and are dropped. The output is ordered by
// partition and time. Built by planner/ for SESSION(...) in FROM of batch
// queries; each execution reads its whole input first.
type SessionWindow struct {
	Input       Node
	TimeCol     int
	PartitionBy []expr.Expr // over the input
	Gap         int64       // microseconds, > 0
	Cols        []types.Column
}

// Columns implements Node.
func (s *SessionWindow) Columns() []types.Column { return s.Cols }

// Children implements Node.
func (s *SessionWindow) Children() []Node { return []Node{s.Input} }

// Explain implements Node.
func (s *SessionWindow) Explain() string {
	out := "SessionWindow: SESSION(gap " + time.Duration(s.Gap*1000).String() + ") on " + s.Cols[s.TimeCol].Name
	if len(s.PartitionBy) > 0 {
		parts := make([]string, len(s.PartitionBy))
		for i, p := range s.PartitionBy {
			parts[i] = p.String()
		}
		out += " PARTITION BY " + strings.Join(parts, ", ")
	}
	return out
}

// Open implements Node.
func (s *SessionWindow) Open(ctx *Context) (Iterator, error) {
	in, err := OpenNode(ctx, s.Input)
	if err != nil {
		return nil, err
	}
	acct := membudget.NewAccount(budgetOf(ctx))
	return &blocking{acct: acct, in: in, run: func() ([]arrow.RecordBatch, error) { return s.run(ctx, in, acct) }}, nil
}

// run sorts the rows by (partition, time) and assigns each its session.
func (s *SessionWindow) run(ctx *Context, in Iterator, acct *membudget.Account) ([]arrow.RecordBatch, error) {
	mem := alloc(ctx)
	inCols := s.Input.Columns()
	bs, err := drainInto(ctx, in, acct)
	if err != nil {
		return nil, err
	}
	if err := acct.Grow(acct.Used()); err != nil { // materialize's copy
		return nil, err
	}
	arrs, n, err := materialize(mem, inCols, bs)
	if err != nil || n == 0 {
		return nil, err
	}
	keys := make([]SortKey, 0, len(s.PartitionBy)+1)
	for _, p := range s.PartitionBy {
		keys = append(keys, SortKey{E: p})
	}
	tc := inCols[s.TimeCol]
	keys = append(keys, SortKey{E: &expr.ColRef{Idx: s.TimeCol, T: tc.Type, Name: tc.Name}})
	es := make([]expr.Expr, len(keys))
	for i, k := range keys {
		es[i] = k.E
	}
	keyArrs, err := evalOverBatches(ctx, es, bs)
	if err != nil {
		return nil, err
	}
	perm := sortPerm(keyArrs, keys, n)
	if err := canceled(ctx); err != nil {
		return nil, err
	}
	ts := arrs[s.TimeCol]
	tv := arrow.GetValues[int64](ts.Data(), 1)
	var same func(i, j int) bool
	if len(s.PartitionBy) > 0 {
		part := keyArrs[:len(s.PartitionBy)]
		pts := make([]types.T, len(part))
		flags := make([]bool, len(part))
		for i, p := range s.PartitionBy {
			pts[i] = p.Type()
		}
		rc := newRowCmp(part, pts, flags, flags)
		same = func(i, j int) bool { return rc.compare(i, j) == 0 }
	}
	// NULL times sort last within their partition: drop them.
	rows := perm[:0:0]
	for _, r := range perm {
		if !ts.IsNull(int(r)) {
			rows = append(rows, r)
		}
	}
	start, end := make([]int64, len(rows)), make([]int64, len(rows))
	limit := int64(1<<63-1) - s.Gap // a later time has no representable session end
	for i := 0; i < len(rows); {
		first := tv[rows[i]]
		last := first
		j := i + 1
		for ; j < len(rows); j++ {
			if last > limit {
				return nil, rangeErr()
			}
			t := tv[rows[j]]
			if t >= last+s.Gap || (same != nil && !same(int(rows[j-1]), int(rows[j]))) {
				break
			}
			last = t
		}
		if last > limit {
			return nil, rangeErr()
		}
		for k := i; k < j; k++ {
			start[k], end[k] = first, last+s.Gap
		}
		i = j
	}
	dt := tc.Type.ArrowType()
	schema := types.ArrowSchema(s.Cols)
	size := ctx.Size()
	var out []arrow.RecordBatch
	for i := 0; i < len(rows); i += size {
		j := min(i+size, len(rows))
		cols := make([]arrow.Array, 0, len(arrs)+2)
		for _, a := range arrs {
			cols = append(cols, takeArray(mem, a, rows[i:j]))
		}
		cols = append(cols, int64Array(dt, start[i:j]), int64Array(dt, end[i:j]))
		out = append(out, array.NewRecordBatch(schema, cols, int64(j-i)))
	}
	return out, nil
}
