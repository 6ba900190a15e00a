package planner

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Generated columns, GENERATED ALWAYS AS (expr) STORED, as PostgreSQL 15
// has them: the expression reads the row's other columns (not generated
// ones), is immutable, and is computed on every write (RowGen); a value
// given for the column is refused (428C9) unless it is DEFAULT.

// codeInvalidObjectDefinition is SQLSTATE invalid_object_definition.
const codeInvalidObjectDefinition pgerr.Code = "42P17"

// pendingGenerated is a generated column of a table being defined, bound
// once all the table's columns are known.
type pendingGenerated struct {
	col  int
	expr *pg.Node
}

// generatedMark marks a generated column whose expression is not bound
// yet (so that other generation expressions cannot read it either).
const generatedMark = "?"

// generatedColumn checks a column's GENERATED ALWAYS AS (...) STORED
// clause against its other clauses; bindGenerated binds the expression.
func (b *binder) generatedColumn(rel *catalog.Relation, col *catalog.Column, c *pg.Constraint, serial bool) error {
	switch {
	case c.GeneratedWhen != "a":
		return b.newErr(pgerr.SyntaxError, c.Location, "for a generated column, GENERATED ALWAYS must be specified")
	case col.Generated != "":
		return b.newErr(pgerr.SyntaxError, c.Location, "multiple generation clauses specified for column \"%s\" of table \"%s\"", col.Name, rel.Name)
	case col.Identity != 0:
		return b.newErr(pgerr.SyntaxError, c.Location, "both identity and generation expression specified for column \"%s\" of table \"%s\"", col.Name, rel.Name)
	case serial || col.Default != "":
		return b.newErr(pgerr.SyntaxError, c.Location, "both default and generation expression specified for column \"%s\" of table \"%s\"", col.Name, rel.Name)
	}
	col.Generated = generatedMark
	return nil
}

// bindGenerated binds the generation expressions of a table being
// defined and stores their text.
func (b *binder) bindGenerated(rel *catalog.Relation, gens []pendingGenerated) error {
	for _, g := range gens {
		if _, _, err := b.bindGeneration(rel, g.col, g.expr); err != nil {
			return err
		}
	}
	for _, g := range gens {
		text, err := deparseExpr(g.expr)
		if err != nil {
			return err
		}
		rel.Columns[g.col].Generated = text
	}
	return nil
}

// bindGeneration binds column i's generation expression n over a row of
// rel (ids: the row's columns) and checks it as PostgreSQL does.
func (b *binder) bindGeneration(rel *catalog.Relation, i int, n *pg.Node) (expr.Expr, []int, error) {
	it, ids := b.rowScope(rel)         // constraints.go
	col := make(map[int]int, len(ids)) // binder column id -> table column
	for k, id := range ids {
		col[id] = k
	}
	l := &level{clause: inGenExpr, ns: []*nsItem{it}}
	e, err := b.expr(l, n)
	if err != nil {
		return nil, nil, err
	}
	if hasSubquery(e) {
		return nil, nil, b.newErr(pgerr.FeatureNotSupported, nodeLoc(n), "cannot use subquery in column generation expression")
	}
	var genRef string
	mutable := false
	walk(e, func(x expr.Expr) bool {
		switch x := x.(type) {
		case *expr.ColRef:
			if k, ok := col[x.Idx]; ok && rel.Columns[k].Generated != "" && genRef == "" {
				genRef = rel.Columns[k].Name
			}
		case *expr.Call:
			mutable = mutable || x.Fn.Volatile || stableCall(x.Fn)
		case *expr.Cast:
			mutable = mutable || sessionCast(x.E.Type(), x.To)
		}
		return true
	})
	if genRef != "" {
		e := pgerr.New(codeInvalidObjectDefinition, "cannot use generated column \"%s\" in column generation expression", genRef).
			WithDetail("A generated column cannot reference another generated column.")
		loc := nodeLoc(n)
		sql.EachColumnRef(n.ProtoReflect(), func(cr *pg.ColumnRef) { // the reference, as PostgreSQL points at it
			if f := cr.Fields; len(f) > 0 && f[len(f)-1].GetString_().GetSval() == genRef && loc == nodeLoc(n) {
				loc = cr.Location
			}
		})
		if p := b.pos(loc); p > 0 {
			e.Position = p
		}
		return nil, nil, e
	}
	if mutable {
		return nil, nil, pgerr.New(codeInvalidObjectDefinition, "generation expression is not immutable")
	}
	e, err = b.assign(e, rel.Columns[i], nodeLoc(n))
	if err != nil {
		return nil, nil, err
	}
	return e, ids, nil
}

// sessionCast reports casts PostgreSQL marks stable: to or from
// timestamptz (TimeZone), and between text and the date/time types
// (DateStyle, IntervalStyle).
func sessionCast(from, to types.T) bool {
	if (from.Kind == types.TimestampTZ) != (to.Kind == types.TimestampTZ) {
		return true
	}
	datetime := func(t types.T) bool {
		switch t.Kind {
		case types.Date, types.Timestamp, types.TimestampTZ, types.Time, types.Interval:
			return true
		}
		return false
	}
	return from.IsString() && datetime(to) || datetime(from) && to.IsString()
}

// stableFunc are the functions PostgreSQL marks stable in every form
// (they read the session's clock, settings or locale) that a generation
// expression may not call; the expression model only marks volatile ones
// (expr.Func.Volatile).
var stableFunc = map[string]bool{
	"now": true, "current_timestamp": true, "transaction_timestamp": true, "statement_timestamp": true,
	"localtimestamp": true, "current_date": true, "current_time": true, "localtime": true,
	"current_setting": true, "current_user": true, "session_user": true, "current_schema": true,
	"current_database": true, "to_char": true,
}

// stableCall reports a call PostgreSQL marks stable: a stableFunc, age of
// one timestamp (against today), and date_trunc or date_part (extract) of
// a timestamptz (in the session's TimeZone); their other forms are
// immutable.
func stableCall(f *expr.Func) bool {
	switch {
	case stableFunc[f.Name]:
		return true
	case f.Name == "age":
		return len(f.Args) == 1
	case f.Name == "date_trunc", f.Name == "date_part", f.Name == "extract":
		for _, t := range f.Args {
			if t.Kind == types.TimestampTZ {
				return true
			}
		}
	}
	return false
}

// RowGen computes a table's generated columns over rows in the table's
// column layout. Immutable; safe for concurrent use.
type RowGen struct {
	Cols  []int       // the generated columns
	Exprs []expr.Expr // their expressions over the row
}

// CompileGenerated compiles rel's generation expressions; nil when it has
// no generated column.
func CompileGenerated(env *Env, rel *catalog.Relation) (g *RowGen, err error) {
	defer recoverTo(&err)
	return compileGenerated(env, rel)
}

func compileGenerated(env *Env, rel *catalog.Relation) (*RowGen, error) {
	if rel == nil || !HasGenerated(rel) {
		return nil, nil
	}
	g := &RowGen{}
	for i, c := range rel.Columns {
		if c.Generated == "" {
			continue
		}
		b := newBinder(&Env{Catalog: env.Catalog, SearchPath: env.SearchPath, Eval: env.Eval})
		e, ids, err := b.bindGeneration(withoutGenerated(rel, i), i, mustParseExpr(c.Generated))
		if err != nil {
			return nil, fmt.Errorf("generated column %s of %s: %w", c.Name, rel.Name, err)
		}
		pe, err := (&physical{b: b}).expr(e, ids)
		if err != nil {
			return nil, err
		}
		g.Cols = append(g.Cols, i)
		g.Exprs = append(g.Exprs, pe)
	}
	return g, nil
}

// withoutGenerated is rel with column i not generated (its own
// expression is bound over the row; the other generated columns stay
// marked, so that reading one is still refused).
func withoutGenerated(rel *catalog.Relation, i int) *catalog.Relation {
	r := *rel
	r.Columns = append([]catalog.Column(nil), rel.Columns...)
	r.Columns[i].Generated = ""
	return &r
}

// HasGenerated reports whether rel has a generated column.
func HasGenerated(rel *catalog.Relation) bool {
	for _, c := range rel.Columns {
		if c.Generated != "" {
			return true
		}
	}
	return false
}

// Apply returns rec (rows in the table's layout) with the generated
// columns computed. A nil g returns rec.
func (g *RowGen) Apply(ctx *expr.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if g == nil || rec == nil || rec.NumRows() == 0 {
		return rec, nil
	}
	cols := append([]arrow.Array(nil), rec.Columns()...)
	for k, e := range g.Exprs {
		a, err := e.Eval(ctx, rec)
		if err != nil {
			return nil, err
		}
		cols[g.Cols[k]] = a
	}
	return array.NewRecordBatch(rec.Schema(), cols, rec.NumRows()), nil
}

// generatedInsertError is PostgreSQL's 428C9 for a value given to a
// generated column by INSERT.
func generatedInsertError(c catalog.Column) error {
	return pgerr.New(pgerr.GeneratedAlways, "cannot insert a non-DEFAULT value into column \"%s\"", c.Name).
		WithDetail("Column \"%s\" is a generated column.", c.Name)
}

// generatedUpdateError is PostgreSQL's 428C9 for UPDATE ... SET c = x of a
// generated column.
func generatedUpdateError(c catalog.Column) error {
	return pgerr.New(pgerr.GeneratedAlways, "column \"%s\" can only be updated to DEFAULT", c.Name).
		WithDetail("Column \"%s\" is a generated column.", c.Name)
}
