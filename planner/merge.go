package planner

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Merge is a planned MERGE: each WHEN clause that writes, in clause
// order, as the UPDATE, DELETE or INSERT it makes. A clause's statement
// reads the rows that clause takes: for WHEN MATCHED, the target rows
// joined to a source row by the join condition where the clause's
// condition holds and no earlier WHEN MATCHED clause's does; for WHEN NOT
// MATCHED [BY TARGET], the source rows no target row joins; for WHEN NOT
// MATCHED BY SOURCE, the target rows no source row joins. The engine
// computes every part's rows before it applies any (all read the tables as
// they were before the statement) and refuses a target row that two parts,
// or one part twice, would write (PostgreSQL's 21000).
type Merge struct {
	Rel        *catalog.Relation
	Parts      []MergePart
	ParamTypes []types.T
}

// MergePart is one writing WHEN clause: one of Update, Delete, Insert.
// Matched is set for a WHEN MATCHED clause (its rows are target rows a
// source row joins: each may be written once).
type MergePart struct {
	Update  *Update
	Delete  *Delete
	Insert  *Insert
	Matched bool
}

// PlanMerge binds a MergeStmt.
func PlanMerge(env *Env, stmt *pg.MergeStmt) (m *Merge, err error) {
	defer recoverTo(&err)
	return planMerge(env, stmt)
}

// mergeClause is a WHEN clause rewritten as a statement (nil for DO
// NOTHING, whose rows a query reads instead: check, planned only so that
// its condition and the join are checked as a writing clause's are).
type mergeClause struct {
	stmt    *pg.Node
	check   *pg.Node
	matched bool
}

func planMerge(env *Env, stmt *pg.MergeStmt) (*Merge, error) {
	clauses, err := rewriteMerge(env, stmt)
	if err != nil {
		return nil, err
	}
	plan := func(env *Env) (*Merge, error) {
		m := &Merge{}
		for _, c := range clauses {
			if c.stmt == nil {
				if _, err := PlanSelect(env, c.check); err != nil {
					return nil, err
				}
				continue
			}
			p := MergePart{Matched: c.matched}
			var err error
			switch n := c.stmt.Node.(type) {
			case *pg.Node_UpdateStmt:
				p.Update, err = planUpdateIn(env, n.UpdateStmt, nil, true)
			case *pg.Node_DeleteStmt:
				p.Delete, err = planDeleteIn(env, n.DeleteStmt, nil, true)
			case *pg.Node_InsertStmt:
				p.Insert, err = planInsert(env, n.InsertStmt)
			}
			if err != nil {
				return nil, err
			}
			m.Rel = p.rel()
			m.ParamTypes = mergeParams(m.ParamTypes, p.paramTypes())
			m.Parts = append(m.Parts, p)
		}
		return m, nil
	}
	m, err := plan(env)
	if err != nil {
		return nil, err
	}
	if m.Rel == nil {
		// Only DO NOTHING: the target must still be a table.
		rel, _, err := newBinder(env).writeTarget(stmt.Relation, catalog.PrivSelect)
		if err != nil {
			return nil, err
		}
		m.Rel = rel
	}
	// A parameter the clauses typed differently (one left it unknown, so
	// text): plan them all again with the types agreed on.
	for _, p := range m.Parts {
		if !slices.EqualFunc(p.paramTypes(), m.ParamTypes[:len(p.paramTypes())], types.T.Equal) {
			env2 := *env
			env2.Params = m.ParamTypes
			return plan(&env2)
		}
	}
	return m, nil
}

// rel is the part's target table.
func (p MergePart) rel() *catalog.Relation {
	switch {
	case p.Update != nil:
		return p.Update.Rel
	case p.Delete != nil:
		return p.Delete.Rel
	}
	return p.Insert.Rel
}

func (p MergePart) paramTypes() []types.T {
	switch {
	case p.Update != nil:
		return p.Update.ParamTypes
	case p.Delete != nil:
		return p.Delete.ParamTypes
	}
	return p.Insert.ParamTypes
}

// mergeParams adds a clause's parameter types to those of the clauses
// before it: a type other than text (the type of a parameter left
// unknown) wins.
func mergeParams(have, add []types.T) []types.T {
	for i, t := range add {
		switch {
		case i >= len(have):
			have = append(have, t)
		case have[i].Equal(types.TText):
			have[i] = t
		}
	}
	return have
}

// rewriteMerge turns each WHEN clause into the statement that makes its
// writes (module doc of Merge).
func rewriteMerge(env *Env, stmt *pg.MergeStmt) ([]mergeClause, error) {
	if len(stmt.ReturningList) > 0 {
		return nil, pgerr.Unsupported("MERGE ... RETURNING is not supported")
	}
	if w := stmt.WithClause; w != nil {
		if w.Recursive {
			return nil, pgerr.Unsupported("WITH RECURSIVE is not supported for MERGE statement")
		}
		for _, c := range w.Ctes {
			if cte := c.GetCommonTableExpr(); cte != nil && cte.Ctequery.GetSelectStmt() == nil {
				return nil, pgerr.Unsupported("a data-modifying WITH query in MERGE is not supported")
			}
		}
	}
	cp := func(n *pg.Node) *pg.Node {
		if n == nil {
			return nil
		}
		return proto.Clone(n).(*pg.Node)
	}
	target := func() *pg.RangeVar { return proto.Clone(stmt.Relation).(*pg.RangeVar) }
	with := func() *pg.WithClause {
		if stmt.WithClause == nil {
			return nil
		}
		return proto.Clone(stmt.WithClause).(*pg.WithClause)
	}
	// exists(from, cond): EXISTS (SELECT FROM from WHERE cond).
	exists := func(from *pg.Node, cond *pg.Node) *pg.Node {
		return &pg.Node{Node: &pg.Node_SubLink{SubLink: &pg.SubLink{
			SubLinkType: pg.SubLinkType_EXISTS_SUBLINK,
			Subselect: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{
				FromClause: []*pg.Node{from}, WhereClause: cond,
				LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT, Op: pg.SetOperation_SETOP_NONE,
			}}},
		}}}
	}
	not := func(n *pg.Node) *pg.Node { return pg.MakeBoolExprNode(pg.BoolExprType_NOT_EXPR, []*pg.Node{n}, -1) }
	and := func(ns ...*pg.Node) *pg.Node {
		var args []*pg.Node
		for _, n := range ns {
			if n != nil {
				args = append(args, n)
			}
		}
		switch len(args) {
		case 0:
			return nil
		case 1:
			return args[0]
		}
		return pg.MakeBoolExprNode(pg.BoolExprType_AND_EXPR, args, -1)
	}
	targetRef := func() *pg.Node { return &pg.Node{Node: &pg.Node_RangeVar{RangeVar: target()}} }

	// The earlier clauses' conditions, by match kind: a row takes the
	// first clause of its kind whose condition is true.
	prior := map[pg.MergeMatchKind][]*pg.Node{}
	unconditional := map[pg.MergeMatchKind]bool{}
	var out []mergeClause
	for _, n := range stmt.MergeWhenClauses {
		c := n.GetMergeWhenClause()
		kind := c.MatchKind
		if kind == pg.MergeMatchKind_MERGE_MATCH_KIND_UNDEFINED {
			kind = pg.MergeMatchKind_MERGE_WHEN_NOT_MATCHED_BY_TARGET
		}
		if unconditional[kind] {
			return nil, pgerr.New(pgerr.SyntaxError, "unreachable WHEN clause specified after unconditional WHEN clause")
		}
		guard := []*pg.Node{cp(c.Condition)}
		for _, p := range prior[kind] {
			guard = append(guard, &pg.Node{Node: &pg.Node_BooleanTest{BooleanTest: &pg.BooleanTest{
				Arg: cp(p), Booltesttype: pg.BoolTestType_IS_NOT_TRUE, Location: -1}}})
		}
		if c.Condition == nil {
			unconditional[kind] = true
		} else {
			prior[kind] = append(prior[kind], c.Condition)
		}
		mc := mergeClause{matched: kind == pg.MergeMatchKind_MERGE_WHEN_MATCHED}
		// where: the rows of the clause's kind, then its guard.
		var where *pg.Node
		var from []*pg.Node
		switch kind {
		case pg.MergeMatchKind_MERGE_WHEN_MATCHED:
			from = []*pg.Node{cp(stmt.SourceRelation)}
			where = and(append([]*pg.Node{cp(stmt.JoinCondition)}, guard...)...)
		case pg.MergeMatchKind_MERGE_WHEN_NOT_MATCHED_BY_SOURCE:
			where = and(append([]*pg.Node{not(exists(cp(stmt.SourceRelation), cp(stmt.JoinCondition)))}, guard...)...)
		default: // NOT MATCHED [BY TARGET]: source rows
			where = and(append([]*pg.Node{not(exists(targetRef(), cp(stmt.JoinCondition)))}, guard...)...)
		}
		switch c.CommandType {
		case pg.CmdType_CMD_NOTHING:
			// SELECT 1 FROM <the clause's rows> WHERE where
			rows := append([]*pg.Node{}, from...)
			switch kind {
			case pg.MergeMatchKind_MERGE_WHEN_MATCHED:
				rows = append([]*pg.Node{targetRef()}, rows...)
			case pg.MergeMatchKind_MERGE_WHEN_NOT_MATCHED_BY_SOURCE:
				rows = []*pg.Node{targetRef()}
			default:
				rows = []*pg.Node{cp(stmt.SourceRelation)}
			}
			mc.check = &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{
				TargetList: []*pg.Node{pg.MakeResTargetNodeWithVal(pg.MakeAConstIntNode(1, -1), -1)},
				FromClause: rows, WhereClause: where, WithClause: with(),
				LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT, Op: pg.SetOperation_SETOP_NONE,
			}}}
		case pg.CmdType_CMD_UPDATE:
			mc.stmt = &pg.Node{Node: &pg.Node_UpdateStmt{UpdateStmt: &pg.UpdateStmt{
				Relation: target(), TargetList: cloneNodes(c.TargetList), FromClause: from, WhereClause: where, WithClause: with(),
			}}}
		case pg.CmdType_CMD_DELETE:
			mc.stmt = &pg.Node{Node: &pg.Node_DeleteStmt{DeleteStmt: &pg.DeleteStmt{
				Relation: target(), UsingClause: from, WhereClause: where, WithClause: with(),
			}}}
		case pg.CmdType_CMD_INSERT:
			ins, err := mergeInsert(env, stmt, c, target(), where, with())
			if err != nil {
				return nil, err
			}
			mc.stmt = ins
		default:
			return nil, pgerr.Unsupported("this MERGE action is not supported")
		}
		out = append(out, mc)
	}
	return out, nil
}

// mergeInsert is a WHEN NOT MATCHED clause's INSERT: INSERT INTO target
// (cols) SELECT values FROM source WHERE where. A DEFAULT value leaves its
// column out (it takes its default), as INSERT ... VALUES would.
func mergeInsert(env *Env, stmt *pg.MergeStmt, c *pg.MergeWhenClause, target *pg.RangeVar, where *pg.Node, with *pg.WithClause) (*pg.Node, error) {
	cols := cloneNodes(c.TargetList)
	vals := cloneNodes(c.Values)
	hasDefault := slices.ContainsFunc(vals, func(v *pg.Node) bool { return v.GetSetToDefault() != nil })
	if hasDefault && len(cols) == 0 {
		// INSERT VALUES (..., DEFAULT, ...) without a column list: name
		// the table's columns, to leave the defaulted ones out.
		rel, _, err := newBinder(env).writeTarget(target, 0)
		if err != nil {
			return nil, err
		}
		if len(vals) > len(rel.Columns) {
			return nil, pgerr.New(pgerr.SyntaxError, "INSERT has more expressions than target columns")
		}
		for _, col := range rel.Columns[:len(vals)] {
			cols = append(cols, &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Name: col.Name, Location: -1}}})
		}
	}
	if hasDefault {
		if len(cols) != len(vals) {
			return nil, pgerr.New(pgerr.SyntaxError, "INSERT has more target columns than expressions")
		}
		var keepCols, keepVals []*pg.Node
		for i, v := range vals {
			if v.GetSetToDefault() == nil {
				keepCols, keepVals = append(keepCols, cols[i]), append(keepVals, v)
			}
		}
		cols, vals = keepCols, keepVals
	}
	targets := make([]*pg.Node, len(vals))
	for i, v := range vals {
		targets[i] = pg.MakeResTargetNodeWithVal(v, -1)
	}
	sel := &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{
		TargetList: targets, FromClause: []*pg.Node{proto.Clone(stmt.SourceRelation).(*pg.Node)}, WhereClause: where,
		LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT, Op: pg.SetOperation_SETOP_NONE,
	}}}
	return &pg.Node{Node: &pg.Node_InsertStmt{InsertStmt: &pg.InsertStmt{
		Relation: target, Cols: cols, SelectStmt: sel, Override: c.Override, WithClause: with,
	}}}, nil
}

// cloneNodes deep-copies a node list.
func cloneNodes(ns []*pg.Node) []*pg.Node {
	out := make([]*pg.Node, len(ns))
	for i, n := range ns {
		out[i] = proto.Clone(n).(*pg.Node)
	}
	return out
}
