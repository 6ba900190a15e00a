package planner

import (
	"fmt"
	"slices"
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Table CHECK constraints and FOREIGN KEY constraints: binding them in
// CREATE TABLE and ALTER TABLE ... ADD CONSTRAINT, and the compiled
// checks an INSERT, UPDATE or COPY FROM evaluates (RowChecks). Foreign
// keys are enforced by the engine (engine/fk.go); see
// docs/contributing/constraints.md.

// pendingConstraint is a CHECK or FOREIGN KEY of a CREATE TABLE, bound
// once every column is known. column is the column of a column constraint.
type pendingConstraint struct {
	c      *pg.Constraint
	column string
}

// refuseDeferrable refuses INITIALLY DEFERRED. DEFERRABLE (INITIALLY
// IMMEDIATE) is accepted: its constraints are checked at the end of each
// statement, which is when every constraint here is checked (storage
// checks a statement's keys together; foreign keys are checked after its
// writes), so it changes nothing.
func (b *binder) refuseDeferrable(c *pg.Constraint) error {
	if c.Initdeferred {
		return b.newErr(pgerr.FeatureNotSupported, c.Location, "INITIALLY DEFERRED constraints are not supported")
	}
	return nil
}

// checkConstraint binds a CHECK constraint of rel (its columns final) and
// returns its catalog form (named by the catalog when c has no name).
func (b *binder) checkConstraint(rel *catalog.Relation, c *pg.Constraint, column string) (catalog.CheckConstraint, error) {
	if c.IsNoInherit {
		return catalog.CheckConstraint{}, b.newErr(pgerr.FeatureNotSupported, c.Location, "NO INHERIT constraints are not supported (there is no table inheritance)")
	}
	if err := b.refuseDeferrable(c); err != nil {
		return catalog.CheckConstraint{}, err
	}
	if _, _, err := b.bindRowCheck(rel, c.RawExpr); err != nil {
		return catalog.CheckConstraint{}, err
	}
	text, err := deparseExpr(c.RawExpr)
	if err != nil {
		return catalog.CheckConstraint{}, err
	}
	// PostgreSQL names an unnamed check after the one column it reads
	// (t_a_check), else after the table alone (t_check).
	column = ""
	refs := columnRefs(c.RawExpr)
	slices.Sort(refs)
	if refs = slices.Compact(refs); len(refs) == 1 {
		column = refs[0]
	}
	return catalog.CheckConstraint{Name: c.Conname, Expr: text, Column: column, NotValid: c.SkipValidation}, nil
}

// rowScope is a FROM item of one row of rel, named as rel, and the
// binder ids of its columns (the layout of a row batch).
func (b *binder) rowScope(rel *catalog.Relation) (*nsItem, []int) {
	it := &nsItem{alias: rel.Name, relname: rel.Name, relVisible: true, colsVisible: true}
	ids := make([]int, len(rel.Columns))
	for i, c := range rel.Columns {
		ids[i] = b.newCol(c.Name, rel.Name, c.Type)
		it.cols = append(it.cols, nsCol{name: c.Name, id: ids[i]})
	}
	return it, ids
}

// bindRowCheck binds a CHECK expression over rel's columns: it must be
// boolean and read no tables. Returns it and the column ids of rel's
// columns (the layout of a row batch).
func (b *binder) bindRowCheck(rel *catalog.Relation, n *pg.Node) (expr.Expr, []int, error) {
	it, ids := b.rowScope(rel)
	l := &level{clause: inCheck, ns: []*nsItem{it}}
	e, err := b.expr(l, n)
	if err != nil {
		return nil, nil, err
	}
	if hasSubquery(e) {
		return nil, nil, b.newErr(pgerr.FeatureNotSupported, nodeLoc(n), "cannot use subquery in check constraint")
	}
	e, err = b.boolArg(e, "CHECK", nodeLoc(n))
	return e, ids, err
}

// RowChecks are a table's CHECK constraints compiled over a batch in the
// table's column layout, sorted by name (PostgreSQL checks them in name
// order, so a row failing two reports the first). Immutable; safe for
// concurrent use.
type RowChecks struct {
	Table   string
	Columns []types.Column
	NotNull []bool
	Names   []string
	Exprs   []expr.Expr
	// Validating reports a failure as ALTER TABLE does for the rows
	// already in the table ("is violated by some row").
	Validating bool
}

// CompileChecks compiles rel's CHECK constraints; nil when it has none.
func CompileChecks(env *Env, rel *catalog.Relation) (rc *RowChecks, err error) {
	defer recoverTo(&err)
	return compileChecks(env, rel)
}

func compileChecks(env *Env, rel *catalog.Relation) (*RowChecks, error) {
	if rel == nil || len(rel.Checks) == 0 {
		return nil, nil
	}
	checks := slices.Clone(rel.Checks)
	sort.SliceStable(checks, func(i, j int) bool { return checks[i].Name < checks[j].Name })
	rc := &RowChecks{Table: rel.Name, Columns: rel.ColumnTypes()}
	for _, c := range rel.Columns {
		rc.NotNull = append(rc.NotNull, c.NotNull)
	}
	for _, c := range checks {
		b := newBinder(&Env{Catalog: env.Catalog, SearchPath: env.SearchPath, Eval: env.Eval})
		e, ids, err := b.bindRowCheck(rel, mustParseExpr(c.Expr))
		if err != nil {
			return nil, fmt.Errorf("check constraint %s of %s: %w", c.Name, rel.Name, err)
		}
		pe, err := (&physical{b: b}).expr(e, ids)
		if err != nil {
			return nil, err
		}
		rc.Names = append(rc.Names, c.Name)
		rc.Exprs = append(rc.Exprs, pe)
	}
	return rc, nil
}

// foreignKey binds a FOREIGN KEY (or column REFERENCES) constraint of rel
// (its columns and keys final; rel.OID 0 while CREATE TABLE builds it).
func (b *binder) foreignKey(rel *catalog.Relation, c *pg.Constraint, column string) (catalog.ForeignKey, error) {
	var fk catalog.ForeignKey
	if err := b.refuseDeferrable(c); err != nil {
		return fk, err
	}
	switch c.FkMatchtype {
	case "p":
		return fk, b.newErr(pgerr.FeatureNotSupported, c.Location, "MATCH PARTIAL not yet implemented")
	case "f":
		fk.MatchFull = true
	}
	if len(c.FkDelSetCols) > 0 {
		return fk, b.newErr(pgerr.FeatureNotSupported, c.Location, "ON DELETE SET NULL/SET DEFAULT with a column list is not supported")
	}
	for _, a := range []struct {
		code string
		to   *byte
	}{{c.FkUpdAction, &fk.OnUpdate}, {c.FkDelAction, &fk.OnDelete}} {
		switch a.code {
		case "", "a":
			*a.to = catalog.FKNoAction
		case "r", "c", "n", "d":
			*a.to = a.code[0]
		default:
			return fk, b.newErr(pgerr.FeatureNotSupported, c.Location, "foreign key action %q is not supported", a.code)
		}
	}
	fk.Name, fk.NotValid = c.Conname, c.SkipValidation
	names := strs(c.FkAttrs)
	if column != "" {
		names = []string{column}
	}
	for _, n := range names {
		i := rel.ColumnIndex(n)
		if i < 0 {
			return fk, b.newErr(pgerr.UndefinedColumn, c.Location, "column \"%s\" referenced in foreign key constraint does not exist", n)
		}
		fk.Columns = append(fk.Columns, i)
	}
	ref := rel
	self := c.Pktable.Relname == rel.Name && (c.Pktable.Schemaname == "" || c.Pktable.Schemaname == rel.Schema)
	if rel.OID != 0 || !self {
		if b.env == nil || b.env.Catalog == nil {
			return fk, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", c.Pktable.Relname)
		}
		r, err := b.env.Catalog.Resolve(c.Pktable.Schemaname, c.Pktable.Relname, b.env.SearchPath)
		if err != nil {
			return fk, err // PostgreSQL gives no position here
		}
		self = r.OID == rel.OID
		if !self {
			ref = r
		}
	}
	if ref.Kind != catalog.KindTable && ref != rel {
		return fk, b.newErr(pgerr.WrongObjectType, c.Pktable.Location, "referenced relation \"%s\" is not a table", ref.Name)
	}
	if ref.Connector != "" { // its ingest writes around foreign keys
		return fk, b.newErr(pgerr.FeatureNotSupported, c.Location, "a foreign key referencing table \"%s\", which has a connector, is not supported", ref.Name)
	}
	if !self {
		fk.RefTable = ref.OID
	} else {
		fk.RefTable = rel.OID // 0 in CREATE TABLE: the catalog fills it in
	}
	refNames := strs(c.PkAttrs)
	if len(refNames) == 0 {
		if len(ref.PrimaryKey) == 0 {
			return fk, b.newErr(pgerr.UndefinedObject, c.Location, "there is no primary key for referenced table \"%s\"", ref.Name)
		}
		fk.RefColumns = slices.Clone(ref.PrimaryKey)
	} else {
		for _, n := range refNames {
			i := ref.ColumnIndex(n)
			if i < 0 {
				return fk, b.newErr(pgerr.UndefinedColumn, c.Location, "column \"%s\" referenced in foreign key constraint does not exist", n)
			}
			fk.RefColumns = append(fk.RefColumns, i)
		}
	}
	if len(fk.Columns) != len(fk.RefColumns) {
		return fk, b.newErr(pgerr.InvalidForeignKey, c.Location, "number of referencing and referenced columns for foreign key disagree")
	}
	if len(refNames) > 0 && !hasKeyOver(ref, fk.RefColumns) {
		return fk, b.newErr(pgerr.InvalidForeignKey, c.Location, "there is no unique constraint matching given keys for referenced table \"%s\"", ref.Name)
	}
	for k, i := range fk.Columns {
		ct, pt := rel.Columns[i].Type, ref.Columns[fk.RefColumns[k]].Type
		if !ct.Equal(pt) {
			name := fk.Name
			if name == "" {
				name = rel.Name + "_" + rel.Columns[i].Name + "_fkey"
			}
			if _, err := expr.NewBinary("=", &expr.ColRef{Idx: 0, T: ct}, &expr.ColRef{Idx: 1, T: pt}); err != nil {
				return fk, pgerr.New(pgerr.DatatypeMismatch, "foreign key constraint \"%s\" cannot be implemented", name).
					WithDetail("Key columns \"%s\" and \"%s\" are of incompatible types: %s and %s.", rel.Columns[i].Name, ref.Columns[fk.RefColumns[k]].Name, ct, pt)
			}
			return fk, b.newErr(pgerr.FeatureNotSupported, c.Location, "a foreign key between columns of different types (%s and %s) is not supported", ct, pt)
		}
	}
	return fk, nil
}

// hasKeyOver reports whether r has a primary key or UNIQUE constraint
// over exactly the columns cols (in any order).
func hasKeyOver(r *catalog.Relation, cols []int) bool {
	same := func(k []int) bool {
		if len(k) != len(cols) {
			return false
		}
		for _, c := range k {
			if !slices.Contains(cols, c) {
				return false
			}
		}
		return true
	}
	if len(r.PrimaryKey) > 0 && same(r.PrimaryKey) {
		return true
	}
	for _, u := range r.Unique {
		if same(u.Columns) {
			return true
		}
	}
	return false
}

// tableConstraints binds the CHECK and FOREIGN KEY constraints of a
// CREATE TABLE into rel.
func (b *binder) tableConstraints(rel *catalog.Relation, pending []pendingConstraint) error {
	for _, p := range pending {
		switch p.c.Contype {
		case pg.ConstrType_CONSTR_CHECK:
			chk, err := b.checkConstraint(rel, p.c, p.column)
			if err != nil {
				return err
			}
			chk.NotValid = false // NOT VALID means nothing for a new table
			rel.Checks = append(rel.Checks, chk)
		case pg.ConstrType_CONSTR_FOREIGN:
			fk, err := b.foreignKey(rel, p.c, p.column)
			if err != nil {
				return err
			}
			fk.NotValid = false
			rel.ForeignKeys = append(rel.ForeignKeys, fk)
		}
	}
	return nil
}
