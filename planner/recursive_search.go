package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// WITH RECURSIVE ... SEARCH {DEPTH|BREADTH} FIRST BY cols SET seq and
// CYCLE cols SET mark [TO v DEFAULT d] USING path, as PostgreSQL rewrites
// them (rewriteSearchAndCycle), but on the bound plan: both terms of the
// UNION get the extra columns, which the work table carries from one round
// to the next.
//
//   - DEPTH FIRST: seq is an array of records of the search columns, the
//     path from the root: ARRAY[ROW(cols)] in the non-recursive term, the
//     previous row's seq || ARRAY[ROW(cols)] in the recursive one.
//   - BREADTH FIRST: seq is ROW(depth, cols...) with depth a bigint, 0 in
//     the non-recursive term and the previous row's depth + 1 after.
//   - CYCLE: path is as DEPTH FIRST's seq over the cycle columns; mark is
//     v when ROW(cols) is already in the previous row's path (record
//     equality: NULL fields equal), else d; the recursive term only reads
//     rows whose mark is not v.
//
// The extra columns follow the query's own: seq, then mark and path.

// searchCycle is a recursive CTE's SEARCH and CYCLE clauses, checked
// against its column list.
type searchCycle struct {
	search *pg.CTESearchClause
	cycle  *pg.CTECycleClause
	// searchCols and cycleCols index the CTE's columns.
	searchCols, cycleCols []int
	// markValue and markDefault are the cycle mark's constants, of markType.
	markValue, markDefault expr.Expr
	markType               types.T
	// extra are the added columns' names and types, in order.
	extraNames []string
	extraTypes []types.T
}

func (sc *searchCycle) present() bool { return sc != nil && (sc.search != nil || sc.cycle != nil) }

// checkSearchCycle validates the clauses as PostgreSQL's analyzeCTE does,
// against the CTE's column names and types (those of the non-recursive
// term).
func (b *binder) checkSearchCycle(cte *cteDef, s *pg.SelectStmt, names []string, ts []types.T) (*searchCycle, error) {
	sc := &searchCycle{search: cte.search, cycle: cte.cycle}
	index := func(n string) int {
		for i, x := range names {
			if x == n {
				return i
			}
		}
		return -1
	}
	cols := func(list []*pg.Node, what string, loc int32) ([]int, error) {
		var out []int
		seen := map[string]bool{}
		for _, n := range list {
			name := n.GetString_().GetSval()
			i := index(name)
			if i < 0 {
				return nil, b.newErr(pgerr.SyntaxError, loc, "%s column \"%s\" not in WITH query column list", what, name)
			}
			if seen[name] {
				return nil, b.newErr(pgerr.DuplicateColumn, loc, "%s column \"%s\" specified more than once", what, name)
			}
			seen[name] = true
			out = append(out, i)
		}
		return out, nil
	}
	var err error
	if s := sc.search; s != nil {
		if sc.searchCols, err = cols(s.SearchColList, "search", s.Location); err != nil {
			return nil, err
		}
		if index(s.SearchSeqColumn) >= 0 {
			return nil, b.newErr(pgerr.SyntaxError, s.Location, "search sequence column name \"%s\" already used in WITH query column list", s.SearchSeqColumn)
		}
	}
	if c := sc.cycle; c != nil {
		if sc.cycleCols, err = cols(c.CycleColList, "cycle", c.Location); err != nil {
			return nil, err
		}
		if err := b.cycleMark(sc); err != nil {
			return nil, err
		}
		if index(c.CycleMarkColumn) >= 0 {
			return nil, b.newErr(pgerr.SyntaxError, c.Location, "cycle mark column name \"%s\" already used in WITH query column list", c.CycleMarkColumn)
		}
		if index(c.CyclePathColumn) >= 0 {
			return nil, b.newErr(pgerr.SyntaxError, c.Location, "cycle path column name \"%s\" already used in WITH query column list", c.CyclePathColumn)
		}
		if c.CycleMarkColumn == c.CyclePathColumn {
			return nil, b.newErr(pgerr.SyntaxError, c.Location, "cycle mark column name and cycle path column name are the same")
		}
	}
	if s, c := sc.search, sc.cycle; s != nil && c != nil {
		if s.SearchSeqColumn == c.CycleMarkColumn {
			return nil, b.newErr(pgerr.SyntaxError, s.Location, "search sequence column name and cycle mark column name are the same")
		}
		if s.SearchSeqColumn == c.CyclePathColumn {
			return nil, b.newErr(pgerr.SyntaxError, s.Location, "search sequence column name and cycle path column name are the same")
		}
	}
	pick := func(idx []int) ([]string, []types.T) {
		ns, fs := make([]string, len(idx)), make([]types.T, len(idx))
		for i, k := range idx {
			ns[i], fs[i] = names[k], ts[k]
		}
		return ns, fs
	}
	if s := sc.search; s != nil {
		ns, fs := pick(sc.searchCols)
		t := types.ArrayOf(types.RecordOf(ns, fs))
		if s.SearchBreadthFirst {
			t = types.RecordOf(append([]string{"*DEPTH*"}, ns...), append([]types.T{types.TInt8}, fs...))
		}
		sc.extraNames = append(sc.extraNames, s.SearchSeqColumn)
		sc.extraTypes = append(sc.extraTypes, t)
	}
	if c := sc.cycle; c != nil {
		ns, fs := pick(sc.cycleCols)
		sc.extraNames = append(sc.extraNames, c.CycleMarkColumn, c.CyclePathColumn)
		sc.extraTypes = append(sc.extraTypes, sc.markType, types.ArrayOf(types.RecordOf(ns, fs)))
	}
	return sc, nil
}

// checkSearchCycleForm requires the shape PostgreSQL's rewrite needs:
// both sides of the UNION plain SELECTs, the recursive one reading the
// query at its top level.
func (b *binder) checkSearchCycleForm(cte *cteDef, s *pg.SelectStmt) error {
	if s.Larg.Op != pg.SetOperation_SETOP_NONE {
		return pgerr.New(pgerr.FeatureNotSupported, "with a SEARCH or CYCLE clause, the left side of the UNION must be a SELECT")
	}
	if s.Rarg.Op != pg.SetOperation_SETOP_NONE {
		return pgerr.New(pgerr.FeatureNotSupported, "with a SEARCH or CYCLE clause, the right side of the UNION must be a SELECT")
	}
	return b.checkTopLevelSelf(cte, s.Rarg)
}

// cycleMark binds the CYCLE clause's TO and DEFAULT values to their
// common type (text for two untyped literals), which needs an equality.
func (b *binder) cycleMark(sc *searchCycle) error {
	c := sc.cycle
	lv := newLevel(nil)
	v, err := b.expr(lv, c.CycleMarkValue)
	if err != nil {
		return err
	}
	d, err := b.expr(lv, c.CycleMarkDefault)
	if err != nil {
		return err
	}
	t, err := expr.CommonType([]types.T{v.Type(), d.Type()}, "CYCLE")
	if err != nil {
		return b.errAt(err, nodeLoc(c.CycleMarkDefault))
	}
	if t.Kind == types.Unknown {
		t = types.TText
	}
	if sc.markValue, err = expr.Coerce(v, t, false); err != nil {
		return b.errAt(err, nodeLoc(c.CycleMarkValue))
	}
	if sc.markDefault, err = expr.Coerce(d, t, false); err != nil {
		return b.errAt(err, nodeLoc(c.CycleMarkDefault))
	}
	if _, err := expr.NewBinary("<>", sc.markValue, sc.markDefault); err != nil {
		return pgerr.New(pgerr.UndefinedFunction, "could not identify an equality operator for type %s", t)
	}
	sc.markType = t
	return nil
}

// checkTopLevelSelf requires the recursive term to read the CTE in its
// own FROM clause (not in a subquery or a WITH of its own), where the
// previous row's extra columns can be read.
func (b *binder) checkTopLevelSelf(cte *cteDef, r *pg.SelectStmt) error {
	shadowed := false
	if r.WithClause != nil {
		for _, n := range r.WithClause.Ctes {
			if n.GetCommonTableExpr().GetCtename() == cte.name {
				shadowed = true
			}
		}
	}
	var found func(n *pg.Node) bool
	found = func(n *pg.Node) bool {
		if rv := n.GetRangeVar(); rv != nil {
			return rv.Schemaname == "" && rv.Relname == cte.name
		}
		if j := n.GetJoinExpr(); j != nil {
			return found(j.Larg) || found(j.Rarg)
		}
		return false
	}
	if !shadowed {
		for _, n := range r.FromClause {
			if found(n) {
				return nil
			}
		}
	}
	return pgerr.New(pgerr.FeatureNotSupported, "with a SEARCH or CYCLE clause, the recursive reference to WITH query \"%s\" must be at the top level of its right-hand SELECT", cte.name)
}

// rowOf is ROW(the given columns) of exprs.
func rowOf(exprs []expr.Expr, idx []int, names []string) (*expr.RowExpr, error) {
	args := make([]expr.Expr, len(idx))
	ns := make([]string, len(idx))
	for i, k := range idx {
		args[i], ns[i] = exprs[k], names[k]
	}
	return expr.NewRowExpr(args, ns)
}

// initialExtras are the extra columns of the non-recursive term over its
// output columns cols.
func (sc *searchCycle) initialExtras(cols []expr.Expr, names []string) ([]expr.Expr, error) {
	var out []expr.Expr
	if s := sc.search; s != nil {
		r, err := rowOf(cols, sc.searchCols, names)
		if err != nil {
			return nil, err
		}
		if s.SearchBreadthFirst {
			args := append([]expr.Expr{&expr.Const{V: int64(0), T: types.TInt8}}, r.Args...)
			out = append(out, &expr.RowExpr{Args: args, T: sc.extraTypes[0]})
		} else {
			out = append(out, &expr.ArrayExpr{Elems: []expr.Expr{r}, T: sc.extraTypes[0]})
		}
	}
	if sc.cycle != nil {
		r, err := rowOf(cols, sc.cycleCols, names)
		if err != nil {
			return nil, err
		}
		out = append(out, sc.markDefault, &expr.ArrayExpr{Elems: []expr.Expr{r}, T: sc.extraTypes[len(sc.extraTypes)-1]})
	}
	return out, nil
}

// recursiveExtras are the extra columns of the recursive term over its
// output columns cols and the previous row's extra columns prev; cond is
// the condition on the previous row (nil without CYCLE).
func (sc *searchCycle) recursiveExtras(cols []expr.Expr, names []string, prev []expr.Expr) (out []expr.Expr, cond expr.Expr, err error) {
	k := 0
	if s := sc.search; s != nil {
		r, err := rowOf(cols, sc.searchCols, names)
		if err != nil {
			return nil, nil, err
		}
		if s.SearchBreadthFirst {
			depth, err := expr.NewFieldSelect(prev[0], "*DEPTH*")
			if err != nil {
				return nil, nil, err
			}
			next, err := expr.NewBinary("+", depth, &expr.Const{V: int64(1), T: types.TInt8})
			if err != nil {
				return nil, nil, err
			}
			out = append(out, &expr.RowExpr{Args: append([]expr.Expr{next}, r.Args...), T: sc.extraTypes[0]})
		} else {
			cat, err := expr.NewBinary("||", prev[0], &expr.ArrayExpr{Elems: []expr.Expr{r}, T: sc.extraTypes[0]})
			if err != nil {
				return nil, nil, err
			}
			out = append(out, cat)
		}
		k = 1
	}
	if sc.cycle != nil {
		pathT := sc.extraTypes[k+1]
		r, err := rowOf(cols, sc.cycleCols, names)
		if err != nil {
			return nil, nil, err
		}
		seen, err := expr.NewCall("array_position", []expr.Expr{prev[k+1], r})
		if err != nil {
			return nil, nil, err
		}
		mark, err := expr.NewCase([]expr.When{{Cond: &expr.IsNull{E: seen, Not: true}, Result: sc.markValue}}, sc.markDefault)
		if err != nil {
			return nil, nil, err
		}
		path, err := expr.NewBinary("||", prev[k+1], &expr.ArrayExpr{Elems: []expr.Expr{r}, T: pathT})
		if err != nil {
			return nil, nil, err
		}
		if cond, err = expr.NewBinary("<>", prev[k], sc.markValue); err != nil {
			return nil, nil, err
		}
		out = append(out, mark, path)
	}
	return out, cond, nil
}

// addInitialExtras projects the non-recursive term's columns and its extra
// ones, and gives the work table the extra columns.
func (b *binder) addInitialExtras(sc *searchCycle, left lnode, wt *workTable) (lnode, error) {
	ids := left.outIDs()
	cols := make([]expr.Expr, len(ids))
	p := &lProject{in: left}
	for i, id := range ids {
		cols[i] = b.colRef(id)
		p.ids = append(p.ids, b.newCol(wt.names[i], "", wt.types[i]))
		p.exprs = append(p.exprs, cols[i])
	}
	extras, err := sc.initialExtras(cols, wt.names)
	if err != nil {
		return nil, err
	}
	for i, e := range extras {
		p.ids = append(p.ids, b.newCol(sc.extraNames[i], "", sc.extraTypes[i]))
		p.exprs = append(p.exprs, e)
	}
	wt.names = append(wt.names, sc.extraNames...)
	wt.types = append(wt.types, sc.extraTypes...)
	return p, nil
}

// addRecursiveExtras adds the extra columns to the recursive term's select
// list (its top projection, which sees the work table's columns) and, for
// CYCLE, the condition on the previous row.
func (b *binder) addRecursiveExtras(sc *searchCycle, right lnode, wt *workTable) (lnode, error) {
	p, ok := right.(*lProject)
	n := len(wt.names) - len(sc.extraNames)
	if !ok {
		return nil, pgerr.Unsupported("SEARCH and CYCLE need a recursive term that is a plain SELECT (no DISTINCT, ORDER BY or LIMIT)")
	}
	if len(p.exprs) == len(wt.names) {
		// * over the work table: its extra columns are not the term's
		// (PostgreSQL's rewrite keeps the first columns alike).
		p.ids, p.exprs = p.ids[:n], p.exprs[:n]
	}
	if len(p.exprs) != n {
		return nil, pgerr.New(pgerr.SyntaxError, "each UNION query must have the same number of columns")
	}
	cols := make([]expr.Expr, n)
	for i, e := range p.exprs {
		c, err := expr.Coerce(e, wt.types[i], false)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	prev := make([]expr.Expr, len(sc.extraNames))
	for i := range prev {
		prev[i] = b.colRef(wt.scanIDs[n+i])
	}
	extras, cond, err := sc.recursiveExtras(cols, wt.names, prev)
	if err != nil {
		return nil, err
	}
	if cond != nil {
		p.in = &lFilter{in: p.in, conds: []expr.Expr{cond}}
	}
	for i, e := range extras {
		p.ids = append(p.ids, b.newCol(sc.extraNames[i], "", sc.extraTypes[i]))
		p.exprs = append(p.exprs, e)
	}
	return p, nil
}
