package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// binder binds one statement. It is used by one goroutine and discarded
// after planning.
type binder struct {
	env *Env
	// cteStack are the WITH queries being bound, innermost last (cteRef).
	cteStack []*cteDef
	// sessionFrames are the SESSION WITH GAP frames of the text being
	// bound (the statement's, a view's while its query is bound).
	sessionFrames []sql.SessionFrame
	// topWith is the WITH clause of the statement being planned, the only
	// one that may hold data-modifying statements; modifying collects them.
	topWith   *pg.WithClause
	modifying []*ModifyingCTE
	// asRole is the role whose privileges relations are read with while a
	// view's query is bound (its owner's); 0 outside views: Env.Role.
	asRole uint32
	src    string
	// cols describes every logical column by id.
	cols []colInfo
	// params holds the types of $1..$n known so far (Unknown: not yet).
	params []types.T
	// deps collects the OIDs of the relations the statement reads (and of
	// the SQL functions it inlined).
	deps map[uint32]bool
	// udfParams, while a SQL function's body is bound (bind_udf.go), are
	// the column ids its $1..$n stand for; inlineDepth counts the bodies
	// being bound.
	udfParams   []int
	inlineDepth int
	// udfConst, while a set-returning SQL function's body is bound
	// (udf_set.go), maps its parameters' column ids to the call's
	// arguments, which replace every reference to them.
	udfConst map[int]expr.Expr
	// matviews lists the materialized views the statement reads, at any
	// depth (through plain views too).
	matviews []uint32
	// sourceLimit is, while the FROM clause of a SELECT of the form
	// SELECT ... FROM one_item [LIMIT n [OFFSET m]] is bound, n+m: the rows
	// a batch read of a source named there may stop after (-1: none).
	sourceLimit int64
	// loc remembers the source location of bound column references, for
	// grouping errors.
	loc map[expr.Expr]int32
	// defs maps select-list output ids to their expressions (to find the
	// literal behind a set operation's column in errors).
	defs map[int]expr.Expr
	// grouped maps a grouped input column to the aggregation's output
	// column for it, so that subqueries above the aggregation can still
	// read it as an outer reference.
	grouped map[int]int
	// viewDepth guards against views that (through catalog damage) refer
	// to themselves.
	viewDepth int
	// stream is set while binding a continuous query (PlanStream): tables,
	// sources and materialized views bind as changelog scans.
	stream bool
	// subTargets are an INSERT's subscripted target columns (col[n]), by
	// column index (insert_subscript.go).
	subTargets map[int][]subTarget
	// temporal maps the locations of the statement's relations marked FOR
	// SYSTEM_TIME AS OF to their clause (stream_lookup.go).
	temporal map[int32]sql.TemporalJoin
	// locks are the tables the statement's FOR UPDATE/SHARE clauses lock
	// (bind_lock.go); lockable is set for a query whose locks the engine
	// takes (PlanSelect), else a clause is refused.
	locks    []RowLock
	lockable bool
}

// colInfo describes one logical column.
type colInfo struct {
	name  string
	table string // the range table alias that qualifies it, "" if none
	t     types.T
	// origin is the relation column it reads as is (PostgreSQL's
	// RowDescription table OID and column number), zero if none.
	origin colOrigin
}

type colOrigin struct {
	rel    uint32
	attnum int16
}

// setOrigins marks ids as the columns of relation rel, in order.
func (b *binder) setOrigins(ids []int, rel uint32) {
	for i, id := range ids {
		b.cols[id].origin = colOrigin{rel, int16(i + 1)}
	}
}

// passOrigin gives id the origin of e when e reads a column as is.
func (b *binder) passOrigin(id int, e expr.Expr) {
	if c, ok := e.(*expr.ColRef); ok && c.Idx < len(b.cols) {
		b.cols[id].origin = b.cols[c.Idx].origin
	}
}

func newBinder(env *Env) *binder {
	b := &binder{env: env, deps: map[uint32]bool{}, loc: map[expr.Expr]int32{}, defs: map[int]expr.Expr{}, grouped: map[int]int{}, sourceLimit: -1}
	if env != nil {
		b.src = env.Source
		b.params = append(b.params, env.Params...)
		b.sessionFrames = env.SessionFrames
	}
	return b
}

func (b *binder) newCol(name, table string, t types.T) int {
	b.cols = append(b.cols, colInfo{name: name, table: table, t: t})
	return len(b.cols) - 1
}

// colRef returns a reference to column id at the current level.
func (b *binder) colRef(id int) *expr.ColRef {
	c := b.cols[id]
	name := c.name
	if c.table != "" {
		name = c.table + "." + c.name
	}
	return &expr.ColRef{Idx: id, T: c.t, Name: name}
}

// pos converts a parse-tree location to an error position.
func (b *binder) pos(loc int32) int {
	if loc < 0 || b.src == "" {
		return 0
	}
	return sql.CharPos(b.src, int(loc))
}

// errAt attaches a position to a *pgerr.Error that has none.
func (b *binder) errAt(err error, loc int32) error {
	if e := pgerr.As(err); e != nil && e.Position == 0 && loc >= 0 && b.src != "" {
		return e.WithPosition(b.pos(loc))
	}
	return err
}

func (b *binder) newErr(code pgerr.Code, loc int32, format string, args ...any) error {
	e := pgerr.New(code, format, args...)
	if p := b.pos(loc); p > 0 {
		e.Position = p
	}
	return e
}

// nsItem is one entry of a query level's FROM namespace: a table, view,
// subquery, function or join. relVisible entries answer qualified names
// (t.x), colsVisible ones answer unqualified names (x), as in PostgreSQL.
type nsItem struct {
	alias string
	// relname is the table's own name for a table entry (for the hint
	// when a query names the table instead of its alias), else "".
	relname     string
	cols        []nsCol
	relVisible  bool
	colsVisible bool
	// hidden marks an entry an aliased join hides ((a JOIN b) AS j hides
	// a and b): no name reaches it, it only makes the error for a.x an
	// invalid reference with a hint, as in PostgreSQL.
	hidden bool
	// usingAlias marks the alias of JOIN ... USING (...) AS x: not a FROM
	// entry of its own, so a reference to it once hidden is a missing
	// entry, as PostgreSQL reports it (missingTable).
	usingAlias bool
	// notLateral marks a hidden entry of the left side of a RIGHT or FULL
	// join, which its LATERAL right side may not read.
	notLateral bool
	// unreachable is set on the target of UPDATE/DELETE while its FROM or
	// USING list binds: that list may not read the target, not even
	// through LATERAL, and a reference to it is an invalid reference to
	// its FROM-clause entry (PostgreSQL's errorMissingRTE).
	unreachable bool
	// nullable marks an entry on the nullable side of an outer join, whose
	// whole-row reference (rows.go) would have to be NULL, not a row of
	// NULLs, where the join adds a row without it.
	nullable bool
	// marker, when set, returns a column that is never NULL in the item's
	// own rows (made on first use), so that a whole-row reference can be
	// NULL where an outer join added the row; noMarker is set once the
	// item's columns pass through a node that lists its columns (USING,
	// LATERAL), which a marker made later would not cross.
	marker   func() int
	noMarker bool
	// scalar marks a function in FROM returning a base type (one column,
	// no ORDINALITY): a whole-row reference to it is that column's value,
	// as in PostgreSQL (SELECT x FROM jsonb_array_elements(j) x).
	scalar bool
	// sys is set for a system table: its system column tableoid (the
	// relation's OID, as psql reads pg_class.tableoid) is added to its
	// projection the first time it is named (see sysColumn).
	sys *sysItem
}

// sysItem is what a system table's FROM item needs for tableoid.
type sysItem struct {
	oid      uint32
	proj     *lProject
	tableoid int // its column id once added, else -1
}

type nsCol struct {
	name string
	id   int
}

// cteDef is a WITH query visible in a level; it is bound anew (inlined) at
// each reference.
type cteDef struct {
	name     string
	query    *pg.Node
	colNames []string
	level    *level
	loc      int32
	// recursive is set for the queries of WITH RECURSIVE.
	recursive bool
	// work is set for a recursive query's reference to itself.
	work *workTable
	// mod is set for a data-modifying statement (dml_with.go).
	mod *ModifyingCTE
	// search and cycle are a recursive query's SEARCH and CYCLE clauses
	// (recursive_search.go).
	search *pg.CTESearchClause
	cycle  *pg.CTECycleClause
	// inline is set for NOT MATERIALIZED: every reference computes the
	// query anew even when it calls volatile functions.
	inline bool
	// owner is the level whose WITH defines the query (nil for the
	// queries of INSERT/UPDATE/DELETE, bound as before).
	owner *level
	// shared is the query computed once per execution for all its
	// references (cte_shared.go), set at the first reference that needs it.
	shared *sharedCTE
}

// clause says which part of a query is being bound, for the errors about
// aggregates and window functions in the wrong place.
type clause string

const (
	inSelect  clause = "SELECT"
	inWhere   clause = "WHERE"
	inHaving  clause = "HAVING"
	inGroupBy clause = "GROUP BY"
	inOrderBy clause = "ORDER BY"
	inJoin    clause = "JOIN conditions"
	inValues  clause = "VALUES"
	inFunc    clause = "functions in FROM"
	inLimit   clause = "LIMIT"
	inOffset  clause = "OFFSET"
	inDefault clause = "DEFAULT expressions"
	inCheck   clause = "check constraints"
	inGenExpr clause = "column generation expressions"
	inUpdate  clause = "UPDATE"
	inWindow  clause = "window definitions"
	inReturn  clause = "RETURNING"
)

// level is one query level (a SELECT) during binding.
type level struct {
	parent *level
	// laterCTEs are, for the query of a WITH item (not RECURSIVE), the
	// names of the items from it on, which it cannot read (a failed
	// lookup of one says so, as PostgreSQL does).
	laterCTEs map[string]bool
	// sub is the subquery expression this level is the query of; crossing
	// it outward adds one to an outer reference's depth.
	sub *sublink
	// hideParent is set for subqueries in FROM: the parent's own FROM items
	// are not visible (no LATERAL), but levels beyond it are.
	hideParent bool
	// bindingLateral is set while a LATERAL subquery of this level's FROM
	// binds: an aggregate in it that reads only this level's columns
	// would belong to this level's FROM clause, which PostgreSQL refuses.
	bindingLateral bool
	ns             []*nsItem
	ctes           map[string]*cteDef

	clause   clause
	inAgg    bool // binding an aggregate's arguments
	inFilter bool // binding an aggregate's FILTER
	inWinArg bool // binding a window function's arguments
	inWinDef bool // binding a window function's PARTITION BY, ORDER BY and frame
	aggs     []aggItem
	wins     []winItem
	windows  map[string]*pg.WindowDef
	// scans are the tables read at this level, for GROUP BY's functional
	// dependency on a primary key.
	scans []*lScan
	// keepUnknown leaves untyped literals of the select list unknown (in a
	// set operation's branches, where the other branch decides their type).
	keepUnknown bool
	// groupings are the GROUPING(...) calls of the query.
	groupings []groupingItem
	// srfs are set-returning functions of the select list.
	srfs []srfItem
	// timeWin is the legacy group window of GROUP BY TUMBLE(...) (window_legacy.go).
	timeWin *groupWindow
	// locking is set while a SELECT with FOR UPDATE/SHARE binds its FROM,
	// whose items lockItems records (bind_lock.go).
	locking   bool
	lockItems []lockItem
}

type aggItem struct {
	id   int
	call exec.AggCall
	// direct is how many of call.Args are an ordered-set aggregate's
	// direct arguments (evaluated once per group: grouped columns only)
	direct int
}

type groupingItem struct {
	id   int
	args []expr.Expr
	loc  int32
}

type srfItem struct {
	id   int
	call *srfCall
	// set is, for a set-returning SQL function, its inlined body (call
	// nil), joined with the query's rows (udf_set_select.go)
	set lnode
}

type winItem struct {
	id   int
	call exec.WindowCall
}

func newLevel(parent *level) *level { return &level{parent: parent} }

// laterCTE reports whether name is a WITH item that l's query cannot
// read because it comes later in its WITH (level.laterCTEs).
func (l *level) laterCTE(name string) bool {
	for x := l; x != nil; x = x.parent {
		if x.laterCTEs[name] {
			return true
		}
	}
	return false
}

func (l *level) findCTE(name string) *cteDef {
	for x := l; x != nil; x = x.parent {
		if d, ok := x.ctes[name]; ok {
			return d
		}
	}
	return nil
}

// resolveColumn binds a ColumnRef's name fields.
func (b *binder) resolveColumn(l *level, names []string, loc int32) (expr.Expr, error) {
	depth := 0
	skipNS := false
	var crossed []*level
	for x := l; x != nil; x = x.parent {
		if !skipNS {
			id, found, err := b.lookupIn(x, names, loc)
			if err != nil {
				return nil, err
			}
			if found {
				return b.refAcross(id, depth, crossed, loc), nil
			}
			if len(names) == 1 {
				if it := wholeRowItem(x, names[0]); it != nil {
					return b.wholeRow(it, depth, crossed, loc)
				}
			}
		}
		skipNS = x.hideParent
		if x.sub != nil {
			depth++
			crossed = append(crossed, x)
		}
	}
	if len(names) == 1 {
		return nil, b.withHint(b.newErr(pgerr.UndefinedColumn, loc, "column \"%s\" does not exist", names[0]), b.columnHint(l, "", names[0]))
	}
	tbl := names[len(names)-2]
	if b.tableVisible(l, tbl) {
		col := names[len(names)-1]
		return nil, b.withHint(b.newErr(pgerr.UndefinedColumn, loc, "column %s.%s does not exist", tbl, col), b.columnHint(l, tbl, col))
	}
	return nil, b.missingTable(l, tbl, loc)
}

// refAcross references column id from depth query levels inward (an
// OuterRef through the crossed subqueries when depth > 0).
func (b *binder) refAcross(id, depth int, crossed []*level, loc int32) expr.Expr {
	if a, ok := b.udfConst[id]; ok {
		return a
	}
	if depth == 0 {
		r := b.colRef(id)
		b.loc[r] = loc
		return r
	}
	for _, c := range crossed {
		c.sub.outer = append(c.sub.outer, id)
	}
	c := b.cols[id]
	return &expr.OuterRef{Depth: depth, Idx: id, T: c.t, Name: b.colRef(id).Name}
}

// withHint adds hint (when not "") to a *pgerr.Error.
func (b *binder) withHint(err error, hint string) error {
	if e, ok := err.(*pgerr.Error); ok && hint != "" {
		return e.WithHint("%s", hint)
	}
	return err
}

// missingTable is PostgreSQL's errorMissingRTE: tbl names no FROM entry
// visible from l. An entry of that name out of reach (a sibling FROM item,
// without LATERAL), or a table of that name under an alias, makes it an
// invalid reference with a hint.
func (b *binder) missingTable(l *level, tbl string, loc int32) error {
	var byAlias, byRel *nsItem
	for x := l; x != nil; x = x.parent {
		for _, it := range x.ns {
			if byAlias == nil && (it.relVisible || it.hidden && !it.usingAlias) && it.alias == tbl {
				byAlias = it
			}
			if byRel == nil && it.relname == tbl && it.alias != tbl {
				byRel = it
			}
		}
	}
	const invalid = "invalid reference to FROM-clause entry for table \"%s\""
	switch {
	case byAlias != nil && byAlias.notLateral:
		return b.newErr(pgerr.UndefinedTable, loc, invalid, tbl).(*pgerr.Error).
			WithDetail("The combining JOIN type must be INNER or LEFT for a LATERAL reference.")
	case byAlias != nil:
		return b.newErr(pgerr.UndefinedTable, loc, invalid, tbl).(*pgerr.Error).
			WithHint("There is an entry for table \"%s\", but it cannot be referenced from this part of the query.", tbl)
	case byRel != nil && b.tableVisible(l, byRel.alias):
		return b.newErr(pgerr.UndefinedTable, loc, invalid, tbl).(*pgerr.Error).
			WithHint("Perhaps you meant to reference the table alias \"%s\".", byRel.alias)
	case byRel != nil:
		return b.newErr(pgerr.UndefinedTable, loc, invalid, tbl).(*pgerr.Error).
			WithHint("There is an entry for table \"%s\", but it cannot be referenced from this part of the query.", byRel.alias)
	}
	return b.newErr(pgerr.UndefinedTable, loc, "missing FROM-clause entry for table \"%s\"", tbl)
}

// unreachableRef is the error for a reference to an unreachable entry.
func (b *binder) unreachableRef(it *nsItem, loc int32) error {
	return b.newErr(pgerr.UndefinedTable, loc, "invalid reference to FROM-clause entry for table \"%s\"", it.alias).(*pgerr.Error).
		WithHint("There is an entry for table \"%s\", but it cannot be referenced from this part of the query.", it.alias)
}

func (b *binder) tableVisible(l *level, tbl string) bool {
	skip := false
	for x := l; x != nil; x = x.parent {
		if !skip {
			for _, it := range x.ns {
				if it.relVisible && it.alias == tbl {
					return true
				}
			}
		}
		skip = x.hideParent
	}
	return false
}

// lookupIn looks a column name up in one level's namespace.
func (b *binder) lookupIn(l *level, names []string, loc int32) (int, bool, error) {
	col := names[len(names)-1]
	if len(names) == 1 {
		found := -1
		for _, it := range l.ns {
			if !it.colsVisible {
				continue
			}
			for _, c := range it.cols {
				if c.name == col {
					if it.unreachable {
						return 0, false, b.unreachableRef(it, loc)
					}
					if found >= 0 && found != c.id {
						return 0, false, b.newErr(pgerr.AmbiguousColumn, loc, "column reference \"%s\" is ambiguous", col)
					}
					found = c.id
				}
			}
		}
		if found < 0 && col == "tableoid" {
			// The system column of the one system table in this level.
			var sys *nsItem
			for _, it := range l.ns {
				if it.sys != nil && it.colsVisible {
					if sys != nil {
						return 0, false, b.newErr(pgerr.AmbiguousColumn, loc, "column reference \"%s\" is ambiguous", col)
					}
					sys = it
				}
			}
			if sys != nil {
				return b.sysColumn(sys), true, nil
			}
		}
		return found, found >= 0, nil
	}
	tbl := names[len(names)-2]
	for _, it := range l.ns {
		if !it.relVisible || it.alias != tbl {
			continue
		}
		if it.unreachable {
			return 0, false, b.unreachableRef(it, loc)
		}
		found := -1
		for _, c := range it.cols {
			if c.name == col {
				if found >= 0 {
					return 0, false, b.newErr(pgerr.AmbiguousColumn, loc, "column reference \"%s\" is ambiguous", col)
				}
				found = c.id
			}
		}
		if found < 0 && col == "tableoid" && it.sys != nil {
			found = b.sysColumn(it)
		}
		if found < 0 {
			return 0, false, b.withHint(b.newErr(pgerr.UndefinedColumn, loc, "column %s.%s does not exist", tbl, col), b.columnHint(l, tbl, col))
		}
		return found, true, nil
	}
	return 0, false, nil
}

// strs returns the String values of a list of nodes.
func strs(ns []*pg.Node) []string {
	out := make([]string, 0, len(ns))
	for _, n := range ns {
		if s := n.GetString_(); s != nil {
			out = append(out, s.Sval)
		}
	}
	return out
}

// funcName returns a function's unqualified name (pg_catalog. dropped).
func funcName(ns []*pg.Node) string {
	parts := strs(ns)
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		return parts[1]
	}
	return strings.Join(parts, ".")
}

// sysColumn returns the id of a system table item's tableoid column,
// adding it to the item's projection the first time: a constant oid.
func (b *binder) sysColumn(it *nsItem) int {
	if it.sys.tableoid < 0 {
		id := b.newCol("tableoid", it.alias, types.TOid)
		it.sys.proj.ids = append(it.sys.proj.ids, id)
		it.sys.proj.exprs = append(it.sys.proj.exprs, &expr.Const{V: int64(it.sys.oid), T: types.TOid})
		it.sys.tableoid = id
	}
	return it.sys.tableoid
}
