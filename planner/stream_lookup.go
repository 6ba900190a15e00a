package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
)

// Temporal (lookup) joins: `s JOIN t FOR SYSTEM_TIME AS OF PROCTIME() [AS]
// a ON ...` (inner or LEFT) in a continuous query. The binder marks the
// scan of t (lScan.asOf) and its JOIN (lJoin.temporal); the optimizer
// keeps such a join where it was written (it is not reordered with other
// inner joins, and only conditions on one side move into it); the stream
// planner makes it a stream.TemporalJoin whose table input is t's own scan.
// Everything else is refused with 0A000 naming the clause: AS OF anything
// but PROCTIME(), a table side that stores no rows (a source) or is not a
// table or materialized view, RIGHT and FULL joins, a lookup without an
// equality between the two sides, the clause anywhere but on a JOIN's
// right side, and a stream side that retracts (a retraction would be
// looked up against a table that may have changed since its insert).

// asOf returns the FOR SYSTEM_TIME AS OF clause that follows rv, or nil. It
// refuses an AS OF other than PROCTIME().
func (b *binder) asOf(rv *pg.RangeVar) (*sql.TemporalJoin, error) {
	if b.viewDepth > 0 || b.temporal == nil {
		return nil, nil
	}
	tj, ok := b.temporal[rv.Location]
	if !ok {
		return nil, nil
	}
	if !b.stream {
		return nil, b.newErr(pgerr.FeatureNotSupported, int32(tj.Pos), "FOR SYSTEM_TIME AS OF can only be used in a continuous query")
	}
	if norm := strings.ToLower(strings.Join(strings.Fields(tj.AsOf), "")); norm != "proctime()" {
		return nil, b.newErr(pgerr.FeatureNotSupported, int32(tj.AsOfPos), "FOR SYSTEM_TIME AS OF %s is not supported", tj.AsOf).(*pgerr.Error).
			WithHint("Only FOR SYSTEM_TIME AS OF PROCTIME() is: each row is joined with the table's rows as they are when the row arrives.")
	}
	return &tj, nil
}

// lookupRelErr refuses the table side of a lookup join (why says what it is).
func lookupRelErr(b *binder, rv *pg.RangeVar, why string) error {
	return b.newErr(pgerr.FeatureNotSupported, rv.Location, "FOR SYSTEM_TIME AS OF needs a table or materialized view: %s", why).(*pgerr.Error).
		WithHint("The table side of a lookup join must store its rows: a TABLE (possibly fed by a connector) or a MATERIALIZED VIEW.")
}

// checkLookupRel refuses a lookup join's table side that is not a table or
// materialized view.
func checkLookupRel(b *binder, rv *pg.RangeVar, rel *catalog.Relation) error {
	switch rel.Kind {
	case catalog.KindTable, catalog.KindMatView:
		return nil
	case catalog.KindSource:
		return lookupRelErr(b, rv, "\""+rel.Name+"\" is a source, which stores no rows to look up")
	case catalog.KindView:
		return lookupRelErr(b, rv, "\""+rel.Name+"\" is a view")
	}
	return lookupRelErr(b, rv, "\""+rel.Name+"\" is neither")
}

// lookupJoin marks jn as a lookup join when its right side is a relation
// marked FOR SYSTEM_TIME AS OF, refusing the join types and forms it
// cannot run.
func (b *binder) lookupJoin(jn *lJoin, j *pg.JoinExpr, lateral bool) error {
	sc, ok := jn.right.(*lScan)
	if !ok || sc.asOf == nil {
		return nil
	}
	at := int32(sc.asOf.Pos)
	switch {
	case jn.kind == exec.RightJoin || jn.kind == exec.FullJoin:
		what := "RIGHT JOIN"
		if jn.kind == exec.FullJoin {
			what = "FULL JOIN"
		}
		return b.newErr(pgerr.FeatureNotSupported, at, "FOR SYSTEM_TIME AS OF is not supported with %s", what).(*pgerr.Error).
			WithHint("A lookup join keeps every row of its stream side: use JOIN or LEFT JOIN with the table on the right.")
	case lateral:
		return b.newErr(pgerr.FeatureNotSupported, at, "FOR SYSTEM_TIME AS OF is not supported with LATERAL")
	case j.Quals == nil && !j.IsNatural && len(j.UsingClause) == 0:
		return b.newErr(pgerr.FeatureNotSupported, at, "FOR SYSTEM_TIME AS OF needs a join condition").(*pgerr.Error).
			WithHint("Write ON with an equality between the stream and the table: ... FOR SYSTEM_TIME AS OF PROCTIME() t ON s.k = t.k.")
	}
	jn.temporal, sc.lookup = true, true
	return nil
}

// lookupPlaceErr refuses a relation marked FOR SYSTEM_TIME AS OF that is
// not the right side of a JOIN.
func lookupPlaceErr(b *binder, x *lScan) error {
	return b.newErr(pgerr.FeatureNotSupported, int32(x.asOf.Pos), "FOR SYSTEM_TIME AS OF must mark the right side of a JOIN").(*pgerr.Error).
		WithHint("Write stream JOIN table FOR SYSTEM_TIME AS OF PROCTIME() t ON ... (or LEFT JOIN).")
}

// optimizeLookup places a lookup join's conditions: those on the table
// alone filter the table side (for a LEFT join too: as ON conditions they
// only decide what matches), those on the stream alone filter the stream
// side of an inner join; the rest stay on the join.
func optimizeLookup(x *lJoin) lnode {
	x.conds, x.right = pushSide(x.conds, x.right)
	if x.kind == exec.InnerJoin {
		x.conds, x.left = pushSide(x.conds, x.left)
	}
	if n := windowAfterLookup(x); n != nil {
		return n
	}
	return x
}

// windowAfterLookup rewrites a lookup join of a window function's rows
// (`FROM TUMBLE(s, ts, ...) s JOIN t FOR SYSTEM_TIME AS OF PROCTIME() ...`)
// into the window function over the lookup join of its input: a lookup
// join maps each row on its own and a window only adds columns computed
// from the row's time, so the two commute; rewritten, a GROUP BY
// window_start over the join is a windowed aggregation. It returns nil
// when the pattern does not apply: the left side is not TUMBLE, HOP or
// CUMULATE (possibly under a projection that renames its columns), or the
// join's conditions read window_start or window_end.
func windowAfterLookup(x *lJoin) lnode {
	var proj *lProject
	w, ok := x.left.(*lTimeWindow)
	if !ok {
		p, ok := x.left.(*lProject)
		if !ok {
			return nil
		}
		if w, ok = p.in.(*lTimeWindow); !ok {
			return nil
		}
		for _, e := range p.exprs {
			if _, ok := e.(*expr.ColRef); !ok {
				return nil
			}
		}
		proj = p
	}
	sc, ok := x.right.(*lScan)
	if !ok || w.spec.Kind == stream.Session {
		return nil
	}
	renamed := map[int]expr.Expr{}
	if proj != nil {
		for i, id := range proj.ids {
			renamed[id] = proj.exprs[i]
		}
	}
	conds := make([]expr.Expr, len(x.conds))
	for i, c := range x.conds {
		c, _ = transform(c, func(e expr.Expr) (expr.Expr, bool, error) {
			if r, ok := e.(*expr.ColRef); ok && renamed[r.Idx] != nil {
				return renamed[r.Idx], true, nil
			}
			return e, false, nil
		})
		if refs := refsOf(c); refs[w.startID] || refs[w.endID] {
			return nil
		}
		conds[i] = c
	}
	w.in = &lJoin{left: w.in, right: sc, kind: x.kind, conds: conds, temporal: true}
	if proj == nil {
		return w
	}
	p := &lProject{in: w, ids: append([]int(nil), proj.ids...), exprs: append([]expr.Expr(nil), proj.exprs...)}
	for i, id := range sc.ids {
		c := sc.rel.Columns[i]
		p.ids = append(p.ids, id)
		p.exprs = append(p.exprs, &expr.ColRef{Idx: id, T: c.Type, Name: c.Name})
	}
	return p
}

// pushLookup pushes WHERE conditions into a lookup join: those on the
// stream side go below it, the others stay above it (on an inner join,
// one on the table alone could go below too; above is as correct).
func pushLookup(x *lJoin, conds []expr.Expr) lnode {
	var keep, down []expr.Expr
	avail := idSet(x.left.outIDs())
	for _, c := range conds {
		if len(refsOf(c)) > 0 && within(c, avail) {
			down = append(down, c)
		} else {
			keep = append(keep, c)
		}
	}
	x.left = push(x.left, down)
	return filterOver(x, keep)
}

// lookupJoin plans a lookup join as a stream.TemporalJoin: equalities
// between the two sides are its keys (at least one is needed), the rest of
// its conditions a residual filter of each pair. The output only inserts
// (the stream side must), so its key is both sides' keys for an inner
// join.
func (s *streamPlanner) lookupJoin(x *lJoin, need map[int]bool) (sout, error) {
	sc := x.right.(*lScan)
	at := int32(sc.asOf.Pos)
	sub := union(need, x.conds...)
	l, err := s.node(x.left, sub)
	if err != nil {
		return sout{}, err
	}
	r, err := s.node(x.right, sub)
	if err != nil {
		return sout{}, err
	}
	if !l.appendOnly {
		return sout{}, s.b.newErr(pgerr.FeatureNotSupported, at, "FOR SYSTEM_TIME AS OF needs a stream side that only inserts").(*pgerr.Error).
			WithHint("The rows joined with \"%s\" come from an input with updates or deletes, whose retractions could not be matched with what their inserts were joined with. "+
				"Use a source or an APPEND ONLY table (a view is read as a changelog, which may retract), or a plain JOIN (which keeps both sides and retracts).", sc.rel.Name)
	}
	all := append(append([]int(nil), l.lay...), r.lay...)
	j := &stream.TemporalJoin{Stream: l.node, Table: r.node, Kind: x.kind}
	var residual []expr.Expr
	if j.StreamKeys, j.TableKeys, residual, err = s.equiKeys(x.conds, l, r); err != nil {
		return sout{}, err
	}
	if len(j.StreamKeys) == 0 {
		return sout{}, s.b.newErr(pgerr.FeatureNotSupported, at, "FOR SYSTEM_TIME AS OF needs an equality between the stream and \"%s\" in its join condition", sc.rel.Name).(*pgerr.Error).
			WithHint("The table is looked up by the columns compared with =: ON s.k = t.k [AND other conditions].")
	}
	if j.Cond, err = s.expr(andOf(residual), all); err != nil {
		return sout{}, err
	}
	j.Cols = s.p.cols(all)
	o := sout{node: j, lay: all, appendOnly: true}
	if x.kind == exec.InnerJoin && l.key != nil && r.key != nil {
		// A stream row arrives once and meets each table row at most once.
		o.key = append(append([]int{}, l.key...), r.key...)
	}
	return o, nil
}
