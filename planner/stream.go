package planner

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Continuous queries (the body of CREATE MATERIALIZED VIEW and of
// SUBSCRIBE (query)) are bound and rewritten as batch queries are (same
// binder, logical plan and rules) and then translated into a tree of
// exec/stream operators (stream_physical.go) instead of exec nodes:
//
//	tables, sources, materialized views  -> StreamScan (plain views inlined)
//	WHERE, select list                   -> StreamFilter, StreamProject
//	GROUP BY / aggregates, DISTINCT       -> StreamHashAgg
//	joins, IN / EXISTS subqueries         -> StreamHashJoin (inner, outer, semi, anti)
//	JOIN t FOR SYSTEM_TIME AS OF PROCTIME() -> StreamTemporalJoin (stream_lookup.go)
//	uncorrelated scalar subqueries        -> StreamHashJoin without keys against the subquery's one row
//	ORDER BY ... LIMIT, DISTINCT ON,
//	  row_number() OVER (...) <= n        -> StreamTopN / StreamGroupTopN
//	UNION ALL, UNION                      -> StreamUnion (+ StreamHashAgg for UNION)
//
// A LIMIT without ORDER BY keeps the first rows in the order of all the
// columns (any rows would do; these are deterministic). An ORDER BY
// without LIMIT is dropped: a view has no order. Everything else
// (INTERSECT, EXCEPT, other window functions, grouping sets, set-returning
// functions, VALUES, system tables, NOT IN and correlated scalar
// subqueries, volatile and time-dependent functions) is refused with
// 0A000 naming the construct.

// StreamQuery is a planned continuous query. It is immutable.
type StreamQuery struct {
	Root    stream.Node    // the query's output changelog (no Materialize on top)
	Columns []types.Column // output columns (names as the query gives them)
	// Key is the stream key of the output: column positions that identify
	// a row (nil: rows are a multiset).
	Key  []int
	Deps []uint32 // OIDs of relations read (tables, sources, views), sorted
	// AppendOnly is set when the output never retracts (inserts only).
	AppendOnly bool
	// Parallelism is the instances of each keyed operator the plan has:
	// Env.Parallelism, or less under Env.ParallelismAuto.
	Parallelism int
	// SpreadFrom, when the default rule lowered the parallelism, is the
	// Env.Parallelism it spread over the plan's Stateful operators (0:
	// not lowered).
	SpreadFrom, Stateful int
}

// PlanStream binds and plans a continuous query (a SelectStmt node).
// With env.ParallelismAuto the plan's parallelism is spreadOver's
// (stream_parallel_auto.go): the query is planned at env.Parallelism and,
// when that rule gives fewer instances, planned again at that number.
func PlanStream(env *Env, stmt *pg.Node) (*StreamQuery, error) {
	q, err := planStream(env, stmt, env.Parallelism, env.Parallelism)
	if err != nil || !env.ParallelismAuto || env.Parallelism <= 1 {
		return q, err
	}
	k := keyedStages(q.Root)
	if n := spreadOver(k, env.Parallelism); n != env.Parallelism {
		if q, err = planStream(env, stmt, n, env.Parallelism); err != nil {
			return nil, err
		}
		q.SpreadFrom, q.Stateful = env.Parallelism, k
	}
	return q, nil
}

// planStream is PlanStream at parallelism n, its shape decided at shape
// (parallelize).
func planStream(env *Env, stmt *pg.Node, n, shape int) (q *StreamQuery, err error) {
	defer recoverTo(&err)
	b := newBinder(env)
	b.stream = true
	b.temporal = sql.TemporalRelations(stmt, env.TemporalJoins)
	plan, err := b.query(stmt, nil, nil, false)
	if err != nil {
		return nil, err
	}
	if err := checkStream(plan); err != nil {
		return nil, err
	}
	ids := plan.outIDs()
	s := &streamPlanner{b: b, p: &physical{b: b}}
	if s.emit, err = b.emitSpec(env); err != nil {
		return nil, err
	}
	if plan, err = s.subqueryJoins(plan); err != nil {
		return nil, err
	}
	plan = optimize(plan)
	root, err := s.root(plan, ids)
	if err != nil {
		return nil, err
	}
	if s.emit.Mode == stream.EmitOnWindowClose && s.windowAggs == 0 {
		root, _ = s.plainEOWC(root)
	}
	if err := s.checkEmit(env, plan); err != nil {
		return nil, err
	}
	if err := s.checkWindowMarks(env, root.node); err != nil {
		return nil, err
	}
	cols := append([]types.Column(nil), root.node.Columns()...)
	for i, id := range ids {
		cols[i].Name = b.cols[id].name
	}
	shareFilters(root.node) // stream_filters.go
	top := parallelize(root.node, n, shape, env.SplitDistinct)
	if !env.NoSharedReads {
		top = shareSubtrees(top) // stream_subshare.go
	}
	shareSources(top, !env.NoSharedReads) // stream_share.go
	q = &StreamQuery{Root: top, Columns: cols, Key: keyPositions(root.key, root.lay), AppendOnly: root.appendOnly,
		Parallelism: max(n, 1)}
	for oid := range b.deps {
		q.Deps = append(q.Deps, oid)
	}
	slices.Sort(q.Deps)
	return q, nil
}

// keyPositions turns key ids into positions of lay; nil when any is
// missing or the key is empty (an empty key, "at most one row", is
// rendered as a multiset: the view then matches its one row by value).
func keyPositions(key, lay []int) []int {
	if len(key) == 0 {
		return nil
	}
	out := make([]int, len(key))
	for i, id := range key {
		if out[i] = position(lay, id); out[i] < 0 {
			return nil
		}
	}
	return out
}

// timeFuncs are functions whose value depends on when they run: in a
// continuous query they would be evaluated once, when the view is created
// (or differently for every row, and never again), so the view would not
// equal its query run later.
var timeFuncs = map[string]bool{
	"now": true, "current_timestamp": true, "transaction_timestamp": true,
	"statement_timestamp": true, "clock_timestamp": true, "timeofday": true,
	"current_date": true, "current_time": true, "localtime": true,
	"localtimestamp": true, "random": true, "random_normal": true,
	"setseed": true, "gen_random_uuid": true, "nextval": true,
}

// streamExprs is nodeExprs(n) for checkStream: of a temporal condition of
// a filter (stream_temporal.go), only the row's side is checked.
func streamExprs(n lnode) []expr.Expr {
	f, ok := n.(*lFilter)
	if !ok {
		return nodeExprs(n)
	}
	var out []expr.Expr
	for _, c := range f.conds {
		for _, t := range conjuncts(c, nil) {
			if tc, ok := temporal(t); ok {
				out = append(out, tc.lhs)
			} else {
				out = append(out, t)
			}
		}
	}
	return out
}

// hasNow reports whether e calls now().
func hasNow(e expr.Expr) bool {
	found := false
	walk(e, func(x expr.Expr) bool {
		if c, ok := x.(*expr.Call); ok && c.Fn.Name == "now" {
			found = true
		}
		return !found
	})
	return found
}

// sqlValueFuncs are written without parentheses.
var sqlValueFuncs = map[string]bool{"current_date": true, "current_time": true, "localtime": true, "localtimestamp": true}

// checkStream refuses, anywhere in a continuous query (subqueries
// included), volatile and time-dependent functions and parameters.
func checkStream(n lnode) error {
	var err error
	var visit func(n lnode)
	visit = func(n lnode) {
		for _, e := range streamExprs(n) {
			walk(e, func(x expr.Expr) bool {
				if err != nil {
					return false
				}
				switch x := x.(type) {
				case *expr.Call:
					if x.Fn.Name == "proctime" {
						if _, ok := n.(*lProject); !ok {
							err = pgerr.Unsupported("PROCTIME() can only be selected as a column in a materialized view").
								WithHint("Select PROCTIME() AS col in a subquery or view, then filter or window on col; or compare a column with it in WHERE or HAVING (ts > PROCTIME() - INTERVAL '1 hour').")
						}
						break
					}
					if x.Fn.UserDefined && x.Fn.Volatile {
						err = pgerr.Unsupported("function %s is VOLATILE and cannot be used in a materialized view", x.Fn.Name).
							WithHint("Declare it IMMUTABLE or STABLE (CREATE OR REPLACE FUNCTION ... IMMUTABLE) when its result depends only on its arguments.")
						break
					}
					if name := x.Fn.Name; timeFuncs[name] || x.Fn.Volatile || (name == "age" && len(x.Args) == 1) {
						if !sqlValueFuncs[name] {
							name += "()"
						}
						if x.Fn.Name == "now" {
							err = nowErr(name)
							break
						}
						err = pgerr.Unsupported("%s cannot be used in a materialized view", name).
							WithHint("Its value would be frozen at the time the view is created; compare with a column or use a watermark instead.")
					}
				case *expr.Param:
					err = pgerr.Unsupported("materialized views may not be defined using bound parameters")
				case *sublink:
					if x.plan != nil {
						visit(x.plan)
					}
				}
				return err == nil
			})
		}
		for _, c := range nodeChildren(n) {
			if err == nil {
				visit(c)
			}
		}
	}
	visit(n)
	return err
}

// subqueryJoins rewrites, bottom-up, the subqueries that a streaming plan
// can maintain as joins:
//
//   - an uncorrelated scalar subquery in a filter or a select list that
//     returns at most one row (an aggregate without GROUP BY, possibly
//     filtered by HAVING, or LIMIT 1) becomes a join without keys against
//     that row (inner when exactly one row is certain, else left, so that
//     no row reads NULL), and the subquery a reference to its column;
//   - an uncorrelated [NOT] EXISTS condition of a filter becomes a semi
//     (anti) join without keys.
//
// IN subqueries and correlated EXISTS are left to optimize, which makes
// them semi and anti joins (their plans rewritten here first); other
// subqueries remain and are refused later.
func (s *streamPlanner) subqueryJoins(n lnode) (lnode, error) {
	var err error
	sub := func(c lnode) lnode {
		if err != nil {
			return c
		}
		var r lnode
		r, err = s.subqueryJoins(c)
		return r
	}
	switch x := n.(type) {
	case *lFilter:
		x.in = sub(x.in)
		if err != nil {
			return nil, err
		}
		var conds []expr.Expr
		for _, c := range x.conds {
			kind := exec.SemiJoin
			inner := c
			if not, ok := c.(*expr.Not); ok {
				kind, inner = exec.AntiJoin, not.E
			}
			if sl, ok := rowNotIn(c); ok {
				// (a, b) NOT IN (SELECT x, y ...): an anti join on
				// (a = x) IS NOT FALSE AND (b = y) IS NOT FALSE, as the
				// batch plan's (optimize.go: a row whose pairs are all
				// true or unknown makes the condition not true), keeping
				// every row of both sides (no equality to key them by)
				right, err := s.subqueryJoins(sl.plan)
				if err != nil {
					return nil, err
				}
				x.in = &lJoin{left: x.in, right: right, kind: exec.AntiJoin, conds: rowNotInConds(sl)}
				continue
			}
			if j, ok, err := s.notInJoin(x.in, c); err != nil || ok { // stream_notin.go
				if err != nil {
					return nil, err
				}
				x.in = j
				continue
			}
			if sl, ok := inner.(*sublink); ok && sl.kind == expr.ExistsSubquery && uncorrelated(sl) {
				right, err := s.subqueryJoins(sl.plan)
				if err != nil {
					return nil, err
				}
				x.in = &lJoin{left: x.in, right: right, kind: kind}
				continue
			}
			if _, ok := inner.(*sublink); !ok { // IN and EXISTS inside it: stream_markjoin.go
				j, mc, ok, err := s.markJoins(x.in, c, true)
				if err != nil {
					return nil, err
				}
				if ok {
					x.in, c = j, mc
				}
			}
			if sl, ok := inner.(*sublink); ok && (sl.kind == expr.AnySubquery || sl.kind == expr.ExistsSubquery) {
				// Left to optimize as a semi (anti) join: the subqueries
				// of its own plan first (TPC-H q20's correlated scalar
				// subquery inside IN).
				if sl.plan, err = s.subqueryJoins(sl.plan); err != nil {
					return nil, err
				}
			}
			conds = append(conds, c)
		}
		x.conds = conds
		x.in, err = s.scalarJoins(x.in, x.conds)
		if len(x.conds) == 0 {
			return x.in, err
		}
	case *lProject:
		x.in = sub(x.in)
		for i, e := range x.exprs { // IN and EXISTS as values: stream_markjoin.go
			if err != nil {
				break
			}
			j, me, ok, merr := s.markJoins(x.in, e, false)
			if err = merr; ok {
				x.in, x.exprs[i] = j, me
			}
		}
		if err == nil {
			x.in, err = s.scalarJoins(x.in, x.exprs)
		}
	case *lJoin:
		x.left, x.right = sub(x.left), sub(x.right)
	case *lAgg:
		x.in = sub(x.in)
	case *lWindow:
		x.in = sub(x.in)
	case *lSort:
		x.in = sub(x.in)
	case *lLimit:
		x.in = sub(x.in)
	case *lDistinct:
		x.in = sub(x.in)
	case *lTimeWindow:
		x.in = sub(x.in)
	case *lSetOp:
		x.left, x.right = sub(x.left), sub(x.right)
	}
	return n, err
}

// uncorrelated reports whether a subquery reads nothing of enclosing queries.
func uncorrelated(sl *sublink) bool {
	return len(sl.outer) == 0 && !hasOuterRefs(sl.plan)
}

// scalarJoins joins in with the uncorrelated scalar subqueries of es and
// replaces them (in place) by references to the subqueries' columns.
func (s *streamPlanner) scalarJoins(in lnode, es []expr.Expr) (lnode, error) {
	done := map[*sublink]bool{}
	corr := map[*sublink]expr.Expr{}
	for i, e := range es {
		out, err := transform(e, func(x expr.Expr) (expr.Expr, bool, error) {
			sl, ok := x.(*sublink)
			if !ok || sl.kind != expr.ScalarSubquery {
				return x, false, nil
			}
			if !uncorrelated(sl) {
				if v, ok := corr[sl]; ok {
					return v, true, nil
				}
				j, v, ok, err := s.correlatedScalar(in, sl) // stream_corrscalar.go
				if !ok && err == nil {
					j, v, ok, err = s.correlatedScalarLimit(in, sl) // stream_corrscalar_limit.go
				}
				if !ok || err != nil {
					return x, err != nil, err
				}
				in, corr[sl] = j, v
				return v, true, nil
			}
			exact, atMost := oneRow(sl.plan)
			if !atMost {
				return nil, true, pgerr.Unsupported("a scalar subquery in a materialized view must return one row: an aggregate without GROUP BY (or LIMIT 1)")
			}
			if !done[sl] {
				done[sl] = true
				right, err := s.subqueryJoins(sl.plan)
				if err != nil {
					return nil, true, err
				}
				kind := exec.LeftJoin
				if exact {
					kind = exec.InnerJoin
				}
				in = &lJoin{left: in, right: right, kind: kind}
			}
			return s.b.colRef(sl.outID), true, nil
		})
		if err != nil {
			return nil, err
		}
		es[i] = out
	}
	return in, nil
}

// oneRow reports whether a plan returns exactly one row, or at most one.
func oneRow(n lnode) (exact, atMost bool) {
	switch x := n.(type) {
	case *lValues: // SELECT 1, VALUES (1)
		return len(x.rows) == 1, len(x.rows) <= 1
	case *lProject:
		return oneRow(x.in)
	case *lSort:
		return oneRow(x.in)
	case *lAgg:
		if len(x.groups) == 0 {
			return true, true
		}
	case *lFilter:
		_, atMost = oneRow(x.in)
		return false, atMost
	case *lLimit:
		if v, ok := constInt(x.limit); ok && v >= 0 && v <= 1 && x.ties == nil {
			return false, true
		}
		_, atMost = oneRow(x.in)
		return false, atMost
	}
	return false, false
}

// constInt evaluates a constant integer expression (a LIMIT, a bound on
// row_number()); ok is false for anything else, NULL included.
func constInt(e expr.Expr) (int64, bool) {
	if e == nil || len(refsOf(e)) > 0 || hasSubquery(e) {
		return 0, false
	}
	f, err := expr.Fold(&expr.Context{}, e)
	if err != nil {
		return 0, false
	}
	c, ok := f.(*expr.Const)
	if !ok {
		return 0, false
	}
	v, ok := c.V.(int64)
	return v, ok && c.T.IsInteger()
}
