package exec

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// SharedKey names one plan part that an execution computes once however
// many SharedScans read it. The planner makes one per part; every
// SharedScan over the part holds the same key. Immutable.
type SharedKey struct {
	// Name is what EXPLAIN shows (the WITH query's name).
	Name string
}

// SharedScan reads Input's rows, computed once per execution for every
// SharedScan with the same Key (the first to open computes them, the
// others replay them): a WITH query that PostgreSQL materializes, read by
// several references. Each SharedScan has its own compiled Input (plans
// are trees), but only one of them runs in an execution. Without a
// SharedResults in the execution's context, each scan runs its Input.
type SharedScan struct {
	Input Node
	Key   *SharedKey
}

// Columns implements Node.
func (s *SharedScan) Columns() []types.Column { return s.Input.Columns() }

// Children implements Node.
func (s *SharedScan) Children() []Node { return []Node{s.Input} }

// Explain implements Node.
func (s *SharedScan) Explain() string { return "CTE Scan on " + s.Key.Name }

// Open implements Node.
func (s *SharedScan) Open(ctx *Context) (Iterator, error) {
	if ctx == nil || ctx.Eval == nil || ctx.Eval.Shared == nil {
		return OpenNode(ctx, s.Input)
	}
	e := ctx.Eval.Shared.Entry(s.Key)
	e.Mu.Lock()
	defer e.Mu.Unlock()
	if !e.Done {
		rows, err := s.compute(ctx)
		if err != nil {
			return nil, err // not Done: a later reader computes again and fails the same way
		}
		e.Rows, e.Done = rows, true
	}
	return &replayIter{rows: e.Rows.([]arrow.RecordBatch)}, nil
}

// compute runs Input to its end. The rows are kept for the rest of the
// execution, so they are reserved from the statement's memory budget
// (given back when the execution closes its budget): past
// statement_mem_limit the statement fails with 53200 (PostgreSQL's
// tuplestore would spill to disk; this one does not spill yet).
func (s *SharedScan) compute(ctx *Context) ([]arrow.RecordBatch, error) {
	it, err := OpenNode(ctx, s.Input)
	if err != nil {
		return nil, err
	}
	defer func() { _ = it.Close() }()
	budget := budgetOf(ctx)
	var rows []arrow.RecordBatch
	for {
		b, err := it.Next()
		if err != nil {
			return nil, err
		}
		if b == nil {
			return rows, nil
		}
		if err := budget.Grow(batchBytes(b)); err != nil {
			b.Release()
			return nil, err
		}
		rows = append(rows, b)
	}
}

// replayIter returns shared batches; each is retained for the caller,
// who owns (and may release) what Next returns.
type replayIter struct {
	rows []arrow.RecordBatch
	i    int
}

func (r *replayIter) Next() (arrow.RecordBatch, error) {
	if r.i >= len(r.rows) {
		return nil, nil
	}
	b := r.rows[r.i]
	r.i++
	b.Retain()
	return b, nil
}

func (r *replayIter) Close() error { return nil }
