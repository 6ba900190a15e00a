package planner

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
)

// Constant inputs of a continuous query. A FROM item that reads no
// relation (VALUES, a SELECT without FROM, generate_series(1, 10), a
// WITH RECURSIVE over constants, and whatever is computed over them
// alone) has the same rows for as long as the view lives: it is run once,
// as a batch query, when the query is planned, and its rows become a
// ScanValues leaf that the runtime sends when the view starts (a join of
// a source against a VALUES list of codes, a view of one row).

// maxConstantRows bounds the rows of one constant input: they live in the
// plan (and in memory) for the view's life.
const maxConstantRows = 1_000_000

// constantInput reports whether n reads no relation and nothing that
// changes over time: no scan, no system table, no PROCTIME(), no time
// window (its EMIT clause belongs to the streaming plan), in its
// subqueries either.
func constantInput(n lnode) bool {
	switch x := n.(type) {
	case *lScan, *lTimeWindow:
		return false
	case *lFunc:
		if x.lookup != nil || x.produce == nil && x.stream == nil {
			return false
		}
	case *lLateralFunc:
		if x.fn == nil {
			return false
		}
	case *lShared:
		if x.key != nil {
			return false
		}
	}
	ok := true
	_, isFunc := n.(*lFunc)
	_, isLateral := n.(*lLateralFunc)
	for _, e := range nodeExprs(n) {
		walk(e, func(e expr.Expr) bool {
			switch y := e.(type) {
			case *expr.ColRef: // a function's argument over the items before it
				if isFunc || isLateral {
					ok = false
				}
			case *expr.Call:
				if y.Fn.Name == "proctime" {
					ok = false
				}
			case *expr.OuterRef:
				ok = false
			case *sublink:
				if y.plan != nil && (len(y.outer) > 0 || !constantInput(y.plan)) {
					ok = false
				}
			}
			return ok
		})
		if !ok {
			return false
		}
	}
	for _, c := range nodeChildren(n) {
		if !constantInput(c) {
			return false
		}
	}
	return true
}

// constant plans the constant input n: it runs n as a batch query now and
// returns a ScanValues leaf holding its rows (a multiset, inserts only).
func (s *streamPlanner) constant(n lnode) (sout, error) {
	node, err := s.p.root(n)
	if err != nil {
		return sout{}, err
	}
	ec := s.b.env.Eval
	if ec == nil {
		ec = &expr.Context{}
	}
	ctx := &exec.Context{Eval: ec}
	it, err := node.Open(ctx)
	if err != nil {
		return sout{}, err
	}
	defer it.Close()
	var recs []arrow.RecordBatch
	var rows int64
	for {
		rec, err := it.Next()
		if err != nil {
			return sout{}, err
		}
		if rec == nil {
			break
		}
		if rows += rec.NumRows(); rows > maxConstantRows {
			return sout{}, pgerr.New(pgerr.ProgramLimitExceeded, "a constant input of a materialized view (%s) has more than %d rows", constantName(n), maxConstantRows).
				WithHint("Its rows are kept in the view's plan; put them in a table and join the table instead.")
		}
		recs = append(recs, rec)
	}
	ids := n.outIDs()
	sc := &stream.Scan{Kind: stream.ScanValues, Name: constantName(n), Cols: s.p.cols(ids), AppendOnly: true, Values: recs}
	return sout{node: sc, lay: ids, appendOnly: true}, nil
}

// constantName names a constant input in EXPLAIN and errors: its first
// leaf's kind.
func constantName(n lnode) string {
	switch x := n.(type) {
	case *lValues:
		if len(x.ids) == 0 {
			return "SELECT without FROM"
		}
		return "VALUES"
	case *lFunc:
		return x.name
	case *lLateralFunc:
		return x.calls[0].name
	case *lRecursive:
		return "WITH RECURSIVE"
	}
	if c := nodeChildren(n); len(c) > 0 {
		return constantName(c[0])
	}
	return "constant rows"
}
