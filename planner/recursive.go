package planner

import (
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// WITH RECURSIVE name AS (non-recursive UNION [ALL] recursive): the
// non-recursive term runs once; the recursive term then runs again and
// again over the rows the previous round produced (its reference to name
// reads that "work table") until a round produces nothing. UNION drops rows
// already produced, which is what makes cyclic data terminate.

// lRecursive is a recursive CTE.
type lRecursive struct {
	left, right lnode // both output ids in order
	ids         []int
	all         bool
	rec         *recursion
}

func (n *lRecursive) outIDs() []int { return n.ids }

// workTable describes the self-reference of a recursive CTE.
type workTable struct {
	rec   *recursion
	names []string
	types []types.T
	used  bool
}

// recursion holds the work tables of the running executions of one
// recursive CTE, keyed by the exec.Context of the round that reads them
// (a plan may run concurrently in several statements).
type recursion struct {
	mu   sync.Mutex
	work map[*exec.Context][]arrow.RecordBatch
}

// recursiveCTE binds a reference to a WITH RECURSIVE query.
func (b *binder) recursiveCTE(cte *cteDef) (lnode, error) {
	s := cte.query.GetSelectStmt()
	if s == nil || s.Op != pg.SetOperation_SETOP_UNION {
		if mentionsRelation(cte.query.ProtoReflect(), cte.name) {
			return nil, b.newErr(pgerr.InvalidRecursion, cte.loc, "recursive query \"%s\" does not have the form non-recursive-term UNION [ALL] recursive-term", cte.name)
		}
		return b.query(cte.query, cte.level, nil, true)
	}
	if len(s.SortClause) > 0 || s.LimitCount != nil || s.LimitOffset != nil || s.WithClause != nil {
		return nil, b.newErr(pgerr.FeatureNotSupported, -1, "ORDER BY, LIMIT and WITH in a recursive query are not supported")
	}
	left, err := b.selectStmt(s.Larg, cte.level, nil, true)
	if err != nil {
		return nil, err
	}
	lids := left.outIDs()
	wt := &workTable{rec: &recursion{work: map[*exec.Context][]arrow.RecordBatch{}}}
	for i, id := range lids {
		name := b.cols[id].name
		if i < len(cte.colNames) {
			name = cte.colNames[i]
		}
		wt.names = append(wt.names, name)
		wt.types = append(wt.types, b.cols[id].t)
	}
	self := &level{parent: cte.level, ctes: map[string]*cteDef{cte.name: {name: cte.name, work: wt, colNames: cte.colNames}}}
	right, err := b.selectStmt(s.Rarg, self, nil, true)
	if err != nil {
		return nil, err
	}
	rids := right.outIDs()
	if len(rids) != len(lids) {
		return nil, b.newErr(pgerr.SyntaxError, -1, "each UNION query must have the same number of columns")
	}
	if !wt.used {
		// Not actually recursive: an ordinary UNION.
		return b.unionOf(left, right, s.All)
	}
	rp := &lProject{in: right}
	out := &lRecursive{left: left, all: s.All, rec: wt.rec}
	for i, id := range rids {
		var e expr.Expr = b.colRef(id)
		if !e.Type().Equal(wt.types[i]) {
			c, err := expr.Coerce(e, wt.types[i], false)
			if err != nil {
				return nil, b.newErr(pgerr.DatatypeMismatch, -1, "recursive query \"%s\" column %d has type %s in non-recursive term but type %s overall",
					cte.name, i+1, wt.types[i], e.Type())
			}
			e = c
		}
		rp.ids = append(rp.ids, b.newCol(wt.names[i], "", wt.types[i]))
		rp.exprs = append(rp.exprs, e)
		out.ids = append(out.ids, b.newCol(wt.names[i], cte.name, wt.types[i]))
	}
	out.right = rp
	return out, nil
}

// unionOf is UNION [ALL] of two bound queries with the same column count.
func (b *binder) unionOf(left, right lnode, all bool) (lnode, error) {
	lids, rids := left.outIDs(), right.outIDs()
	lp, rp := &lProject{in: left}, &lProject{in: right}
	op := &lSetOp{kind: exec.Union, all: all, left: lp, right: rp}
	for i := range lids {
		t, es, err := b.unify([]expr.Expr{b.colRef(lids[i]), b.colRef(rids[i])}, "UNION", -1)
		if err != nil {
			return nil, err
		}
		lp.exprs, rp.exprs = append(lp.exprs, es[0]), append(rp.exprs, es[1])
		lp.ids = append(lp.ids, b.newCol(b.cols[lids[i]].name, "", t))
		rp.ids = append(rp.ids, b.newCol(b.cols[rids[i]].name, "", t))
		op.ids = append(op.ids, b.newCol(b.cols[lids[i]].name, "", t))
	}
	return op, nil
}

// workTableScan binds the recursive term's reference to the CTE.
func (b *binder) workTableScan(wt *workTable, name string) *lFunc {
	wt.used = true
	ids := make([]int, len(wt.names))
	for i := range ids {
		ids[i] = b.newCol(wt.names[i], name, wt.types[i])
	}
	rec := wt.rec
	produce := func(ctx *exec.Context) ([]arrow.RecordBatch, error) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		bs := rec.work[ctx]
		for _, b := range bs {
			b.Retain()
		}
		return bs, nil
	}
	return &lFunc{name: name, ids: ids, produce: func([]expr.Expr) func(*exec.Context) ([]arrow.RecordBatch, error) { return produce }}
}

// maxRecursionRows stops a runaway recursive query.
const maxRecursionRows = 50_000_000

func (p *physical) recursive(x *lRecursive) (exec.Node, error) {
	left, err := p.root(x.left)
	if err != nil {
		return nil, err
	}
	right, err := p.root(x.right)
	if err != nil {
		return nil, err
	}
	cols := p.cols(x.ids)
	rec, all := x.rec, x.all
	return &exec.FuncScan{Name: "Recursive Union", Cols: cols, Produce: func(ctx *exec.Context) ([]arrow.RecordBatch, error) {
		seen := map[string]bool{}
		base, err := collect(left, ctx)
		if err != nil {
			return nil, err
		}
		if !all {
			base = dedupe(base, cols, seen)
		}
		out := append([]arrow.RecordBatch(nil), base...)
		work, total := base, rowCount(base)
		for len(work) > 0 {
			if ctx != nil && ctx.Eval != nil && ctx.Eval.Ctx != nil {
				if err := ctx.Eval.Ctx.Err(); err != nil {
					return nil, pgerr.Wrap(err, pgerr.QueryCanceled, "canceling statement due to user request")
				}
			}
			round := &exec.Context{}
			if ctx != nil {
				*round = *ctx
			}
			rec.mu.Lock()
			rec.work[round] = work
			rec.mu.Unlock()
			next, err := collect(right, round)
			rec.mu.Lock()
			delete(rec.work, round)
			rec.mu.Unlock()
			if err != nil {
				return nil, err
			}
			if !all {
				next = dedupe(next, cols, seen)
			}
			if total += rowCount(next); total > maxRecursionRows {
				return nil, pgerr.New(pgerr.ProgramLimitExceeded, "recursive query produced more than %d rows", maxRecursionRows)
			}
			out = append(out, next...)
			work = next
		}
		return out, nil
	}}, nil
}

// collect runs a plan to the end.
func collect(n exec.Node, ctx *exec.Context) ([]arrow.RecordBatch, error) {
	it, err := n.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []arrow.RecordBatch
	for {
		b, err := it.Next()
		if err != nil {
			return nil, err
		}
		if b == nil {
			return out, nil
		}
		if b.NumRows() > 0 {
			out = append(out, b)
		}
	}
}

func rowCount(bs []arrow.RecordBatch) int {
	n := 0
	for _, b := range bs {
		n += int(b.NumRows())
	}
	return n
}

// dedupe keeps the rows not seen before (NULLs equal), recording them.
func dedupe(bs []arrow.RecordBatch, cols []types.Column, seen map[string]bool) []arrow.RecordBatch {
	var out []arrow.RecordBatch
	var sb strings.Builder
	for _, b := range bs {
		var keep []int64
		for i := 0; i < int(b.NumRows()); i++ {
			sb.Reset()
			for j, c := range cols {
				v := types.ValueAt(b.Column(j), i, c.Type)
				if v == nil {
					sb.WriteString("\x00N")
				} else {
					sb.WriteString("\x00V")
					sb.WriteString(types.FormatText(v, c.Type, nil))
				}
			}
			k := sb.String()
			if !seen[k] {
				seen[k] = true
				keep = append(keep, int64(i))
			}
		}
		if len(keep) == int(b.NumRows()) {
			out = append(out, b)
			continue
		}
		for _, r := range runs(keep) {
			out = append(out, b.NewSlice(r[0], r[1]))
		}
	}
	return out
}

// runs groups sorted row numbers into [start, end) ranges.
func runs(rows []int64) [][2]int64 {
	var out [][2]int64
	for _, r := range rows {
		if n := len(out); n > 0 && out[n-1][1] == r {
			out[n-1][1] = r + 1
		} else {
			out = append(out, [2]int64{r, r + 1})
		}
	}
	return out
}

// mentionsRelation reports whether a parse tree names an unqualified
// relation name anywhere.
func mentionsRelation(m protoreflect.Message, name string) bool {
	if rv, ok := m.Interface().(*pg.RangeVar); ok && rv.Schemaname == "" && rv.Relname == name {
		return true
	}
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind {
			return true
		}
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len() && !found; i++ {
				found = mentionsRelation(l.Get(i).Message(), name)
			}
		} else if !fd.IsMap() {
			found = mentionsRelation(v.Message(), name)
		}
		return !found
	})
	return found
}
