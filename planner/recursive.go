package planner

import (
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/membudget"
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
	// scanIDs are the columns of the last reference bound (SEARCH and
	// CYCLE read the previous row's extra columns from them).
	scanIDs []int
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
		if cte.search != nil || cte.cycle != nil {
			return nil, b.newErr(pgerr.SyntaxError, cte.loc, "WITH query is not recursive")
		}
		return b.query(cte.query, cte.level, nil, true)
	}
	// PostgreSQL's checks and messages (checkWellFormedRecursion), in its order
	switch {
	case len(s.SortClause) > 0:
		return nil, b.newErr(pgerr.FeatureNotSupported, nodeLoc(s.SortClause[0].GetSortBy().GetNode()), "ORDER BY in a recursive query is not implemented")
	case s.LimitOffset != nil:
		return nil, b.newErr(pgerr.FeatureNotSupported, nodeLoc(s.LimitOffset), "OFFSET in a recursive query is not implemented")
	case s.LimitCount != nil:
		return nil, b.newErr(pgerr.FeatureNotSupported, nodeLoc(s.LimitCount), "LIMIT in a recursive query is not implemented")
	case len(s.LockingClause) > 0:
		return nil, b.newErr(pgerr.FeatureNotSupported, -1, "FOR UPDATE/SHARE in a recursive query is not implemented")
	}
	if cte.search != nil || cte.cycle != nil {
		if err := b.checkSearchCycleForm(cte, s); err != nil {
			return nil, err
		}
	}
	if err := b.checkSelfReferences(s, cte.name); err != nil {
		return nil, err
	}
	// A WITH around the UNION: both terms see its queries, which may not
	// read the recursive query (PostgreSQL: as from a subquery).
	terms := cte.level
	if s.WithClause != nil {
		if loc := relationRefLoc(s.WithClause.ProtoReflect(), cte.name); loc != noRef {
			return nil, b.newErr(pgerr.InvalidRecursion, loc, "recursive reference to query \"%s\" must not appear within a subquery", cte.name)
		}
		terms = newLevel(cte.level)
		if err := b.with(terms, s.WithClause); err != nil {
			return nil, err
		}
	}
	left, err := b.selectStmt(s.Larg, terms, nil, true)
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
	var sc *searchCycle
	if cte.search != nil || cte.cycle != nil {
		if sc, err = b.checkSearchCycle(cte, s, wt.names, wt.types); err != nil {
			return nil, err
		}
		if left, err = b.addInitialExtras(sc, left, wt); err != nil {
			return nil, err
		}
		lids = left.outIDs()
	}
	self := &level{parent: terms, ctes: map[string]*cteDef{cte.name: {name: cte.name, work: wt, colNames: cte.colNames}}}
	right, err := b.selectStmt(s.Rarg, self, nil, true)
	if err != nil {
		return nil, err
	}
	if sc != nil {
		if !wt.used {
			return nil, b.newErr(pgerr.SyntaxError, cte.loc, "WITH query is not recursive")
		}
		if right, err = b.addRecursiveExtras(sc, right, wt); err != nil {
			return nil, err
		}
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
			// As PostgreSQL: the type both terms unify to (modifier
			// included) must be the non-recursive term's.
			overall, err := expr.CommonType([]types.T{wt.types[i], e.Type()}, "UNION")
			var c expr.Expr
			if err == nil && overall.Equal(wt.types[i]) {
				c, err = expr.Coerce(e, wt.types[i], false)
			} else if err == nil {
				err = errMismatch
			} else {
				overall = e.Type()
			}
			if err != nil {
				loc := int32(-1)
				if tl := s.Larg.TargetList; i < len(tl) {
					loc = nodeLoc(tl[i])
				}
				return nil, b.newErr(pgerr.DatatypeMismatch, loc, "recursive query \"%s\" column %d has type %s in non-recursive term but type %s overall",
					cte.name, i+1, wt.types[i], overall).(*pgerr.Error).WithHint("Cast the output of the non-recursive term to the correct type.")
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
	return &lFunc{name: name, scan: "WorkTable Scan", ids: ids, produce: func([]expr.Expr) func(*exec.Context) ([]arrow.RecordBatch, error) { return produce }}
}

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
	return &exec.FuncScan{Scan: "Recursive Union", Cols: cols, Stream: func(ctx *exec.Context) (exec.Iterator, error) {
		it := &recursiveIter{ctx: ctx, right: right, rec: rec, cols: cols, schema: types.ArrowSchema(cols)}
		if ctx != nil && ctx.Eval != nil {
			it.acct = membudget.NewAccount(ctx.Eval.Budget)
		}
		if !all {
			it.seen = map[string]bool{}
		}
		cur, err := exec.OpenNode(ctx, left)
		if err != nil {
			return nil, err
		}
		it.cur = cur
		return it, nil
	}}, nil
}

// recursiveIter runs a recursive CTE as PostgreSQL does: it streams each
// row out as it is produced and keeps only two rounds, the work table the
// running round reads and the rows that round has produced so far (the
// next work table). A consumer that stops pulling (LIMIT) stops the
// recursion; an endless one runs in bounded memory until canceled. UNION
// (without ALL) also remembers every distinct row, as PostgreSQL's hash
// table does; all of it is charged to the statement's memory budget.
// Used by one goroutine.
type recursiveIter struct {
	ctx    *exec.Context
	right  exec.Node
	rec    *recursion
	cols   []types.Column
	schema *arrow.Schema
	seen   map[string]bool // UNION: rows produced so far; nil for UNION ALL
	acct   *membudget.Account

	cur      exec.Iterator // the running round (the non-recursive term first)
	round    *exec.Context // its context, the key of its work table; nil for the first
	work     int64         // bytes of the work table the round reads
	next     []arrow.RecordBatch
	nextSize int64
	done     bool
}

func (r *recursiveIter) Next() (arrow.RecordBatch, error) {
	for !r.done {
		if r.cur == nil {
			if err := r.startRound(); err != nil {
				return nil, err
			}
			continue
		}
		b, err := r.cur.Next()
		if err != nil {
			return nil, err
		}
		if b == nil {
			r.endRound()
			continue
		}
		if b.NumRows() == 0 {
			continue
		}
		if r.seen != nil {
			if b, err = r.dedupe(b); err != nil {
				return nil, err
			}
			if b.NumRows() == 0 {
				continue
			}
		}
		sz := membudget.BatchBytes(b)
		if err := r.acct.Grow(sz); err != nil {
			return nil, err
		}
		r.next = append(r.next, b)
		r.nextSize += sz
		return array.NewRecordBatch(r.schema, b.Columns(), b.NumRows()), nil
	}
	return nil, nil
}

// startRound makes the rows of the last round the work table of a new one.
func (r *recursiveIter) startRound() error {
	if len(r.next) == 0 {
		r.done = true
		return nil
	}
	if ctx := r.ctx; ctx != nil && ctx.Eval != nil && ctx.Eval.Ctx != nil {
		if err := ctx.Eval.Ctx.Err(); err != nil {
			return pgerr.Canceled(err)
		}
	}
	round := &exec.Context{}
	if r.ctx != nil {
		*round = *r.ctx
	}
	work := r.next
	r.work, r.next, r.nextSize = r.nextSize, nil, 0
	r.rec.mu.Lock()
	r.rec.work[round] = work
	r.rec.mu.Unlock()
	r.round = round
	it, err := exec.OpenNode(round, r.right)
	if err != nil {
		return err
	}
	r.cur = it
	return nil
}

// endRound closes the running round and lets its work table go.
func (r *recursiveIter) endRound() {
	r.cur.Close()
	r.cur = nil
	if r.round != nil {
		r.rec.mu.Lock()
		delete(r.rec.work, r.round)
		r.rec.mu.Unlock()
		r.round = nil
	}
	r.acct.Shrink(r.work)
	r.work = 0
}

func (r *recursiveIter) Close() error {
	if r.cur != nil {
		r.endRound()
	}
	r.done = true
	r.next = nil
	r.seen = nil
	r.acct.Release()
	return nil
}

// dedupe keeps the rows of b not seen before (NULLs equal), recording them.
func (r *recursiveIter) dedupe(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	var sb strings.Builder
	keep := make([]bool, b.NumRows())
	var grown int64
	for i := range keep {
		sb.Reset()
		for j, c := range r.cols {
			v := types.ValueAt(b.Column(j), i, c.Type)
			if v == nil {
				sb.WriteString("\x00N")
			} else {
				sb.WriteString("\x00V")
				sb.WriteString(types.FormatText(v, c.Type, nil))
			}
		}
		k := sb.String()
		if !r.seen[k] {
			r.seen[k] = true
			keep[i] = true
			grown += int64(len(k)) + 48 // key and map entry
		}
	}
	if err := r.acct.Grow(grown); err != nil {
		return nil, err
	}
	return exec.SelectRows(memory.DefaultAllocator, b, keep, true), nil
}

// mentionsRelation reports whether a parse tree names an unqualified
// relation name anywhere.
// noRef is relationRefLoc's answer when name is not read.
const noRef = int32(-2)

// relationRefLoc returns the location of the first unqualified reference
// to relation name in m, or noRef.
func relationRefLoc(m protoreflect.Message, name string) int32 {
	loc := noRef
	eachNode(m, func(n *pg.Node) bool { // alter_views.go
		if rv := n.GetRangeVar(); rv != nil && rv.Schemaname == "" && rv.Relname == name && loc == noRef {
			loc = rv.Location
		}
		return loc == noRef
	})
	return loc
}

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

var errMismatch = pgerr.New(pgerr.DatatypeMismatch, "recursive query types differ")

// recContext says where a reference to a recursive query stands, as
// PostgreSQL's checkWellFormedRecursion tracks it: "" where it may stand,
// else the phrase of the error ("within an outer join").
type recContext string

const (
	recOK         recContext = ""
	recNonRecTerm recContext = "within its non-recursive term"
	recSubLink    recContext = "within a subquery"
	recOuterJoin  recContext = "within an outer join"
	recIntersect  recContext = "within INTERSECT"
	recExcept     recContext = "within EXCEPT"
)

// checkSelfReferences refuses, as PostgreSQL does, a recursive query s
// (non-recursive term UNION [ALL] recursive term) that names itself in its
// non-recursive term, in a subquery expression, on the nullable
// side of an outer join, under INTERSECT ALL or EXCEPT, or more than once;
// a subquery in FROM is no obstacle. The first offending reference in the
// query's order is reported.
func (b *binder) checkSelfReferences(s *pg.SelectStmt, name string) error {
	type ref struct {
		loc int32
		ctx recContext
	}
	var refs []ref
	var walk func(m protoreflect.Message, ctx recContext)
	var walkSelect func(x *pg.SelectStmt, ctx recContext)
	msg := func(x interface{ ProtoReflect() protoreflect.Message }) protoreflect.Message { return x.ProtoReflect() }
	walk = func(m protoreflect.Message, ctx recContext) {
		eachNode(m, func(n *pg.Node) bool { // alter_views.go
			switch x := n.Node.(type) {
			case *pg.Node_RangeVar:
				if rv := x.RangeVar; rv.Schemaname == "" && rv.Relname == name {
					refs = append(refs, ref{rv.Location, ctx})
				}
			case *pg.Node_SubLink:
				if x.SubLink.Subselect != nil {
					walk(msg(x.SubLink.Subselect), recSubLink)
				}
				if x.SubLink.Testexpr != nil {
					walk(msg(x.SubLink.Testexpr), ctx)
				}
			case *pg.Node_JoinExpr:
				j := x.JoinExpr
				left, right := ctx, ctx
				switch j.Jointype {
				case pg.JoinType_JOIN_LEFT:
					right = recOuterJoin
				case pg.JoinType_JOIN_RIGHT:
					left = recOuterJoin
				case pg.JoinType_JOIN_FULL:
					left, right = recOuterJoin, recOuterJoin
				}
				for _, side := range []struct {
					n *pg.Node
					c recContext
				}{{j.Larg, left}, {j.Rarg, right}, {j.Quals, ctx}} {
					if side.n != nil {
						walk(msg(side.n), side.c)
					}
				}
			case *pg.Node_SelectStmt:
				walkSelect(x.SelectStmt, ctx)
			default:
				return true
			}
			return false
		})
	}
	walkSelect = func(x *pg.SelectStmt, ctx recContext) {
		if x.Op == pg.SetOperation_SETOP_NONE {
			walk(msg(x), ctx)
			return
		}
		left := ctx
		if x.All && x.Op != pg.SetOperation_SETOP_UNION {
			left = recIntersect
			if x.Op == pg.SetOperation_SETOP_EXCEPT {
				left = recExcept
			}
		}
		right := left
		if x.Op == pg.SetOperation_SETOP_EXCEPT {
			right = recExcept
		}
		if x.WithClause != nil {
			walk(msg(x.WithClause), ctx)
		}
		walkSelect(x.Larg, left)
		walkSelect(x.Rarg, right)
		for _, n := range append(append([]*pg.Node(nil), x.SortClause...), x.LimitOffset, x.LimitCount) {
			if n != nil {
				walk(msg(n), ctx)
			}
		}
	}
	walkSelect(s.Larg, recNonRecTerm)
	walkSelect(s.Rarg, recOK)
	// protoreflect visits fields in no fixed order (it varies from build
	// to build): PostgreSQL reports the references in the query's order.
	sort.SliceStable(refs, func(i, j int) bool { return refs[i].loc < refs[j].loc })
	n := 0
	for _, r := range refs {
		if r.ctx != recOK {
			return b.newErr(pgerr.InvalidRecursion, r.loc, "recursive reference to query \"%s\" must not appear %s", name, string(r.ctx))
		}
		if n++; n > 1 {
			return b.newErr(pgerr.InvalidRecursion, r.loc, "recursive reference to query \"%s\" must not appear more than once", name)
		}
	}
	return b.checkRecursiveAggs(s.Rarg)
}

// checkRecursiveAggs refuses an aggregate in the recursive term's own
// SELECT lists and HAVING (not in its subqueries), as PostgreSQL.
func (b *binder) checkRecursiveAggs(term *pg.SelectStmt) error {
	var arms []*pg.SelectStmt
	var collect func(s *pg.SelectStmt)
	collect = func(s *pg.SelectStmt) {
		if s == nil {
			return
		}
		if s.Op != pg.SetOperation_SETOP_NONE {
			collect(s.Larg)
			collect(s.Rarg)
			return
		}
		arms = append(arms, s)
	}
	collect(term)
	first := int32(-1)
	for _, s := range arms {
		var nodes []*pg.Node
		nodes = append(nodes, s.TargetList...)
		if s.HavingClause != nil {
			nodes = append(nodes, s.HavingClause)
		}
		for _, n := range nodes {
			eachNode(n.ProtoReflect(), func(x *pg.Node) bool {
				if x.GetSubLink() != nil {
					return false
				}
				if fc := x.GetFuncCall(); fc != nil && fc.Over == nil && len(fc.Funcname) > 0 {
					if name := fc.Funcname[len(fc.Funcname)-1].GetString_().GetSval(); exec.IsAggregate(name) && (first < 0 || fc.Location < first) {
						first = fc.Location
					}
				}
				return true
			})
		}
	}
	if first >= 0 {
		return b.newErr(pgerr.GroupingError, first, "aggregate functions are not allowed in a recursive query's recursive term")
	}
	return nil
}
