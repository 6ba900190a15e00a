package planner

import (
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
)

// Alter is a planned ALTER TABLE (or ALTER VIEW/TABLE ... RENAME): the new
// definition of one relation and how its stored rows change. Immutable.
type Alter struct {
	// Old is the relation as resolved; nil when IF EXISTS found nothing
	// (Notices then holds PostgreSQL's "skipping" notice).
	Old *catalog.Relation
	// New is Old's new definition (same OID).
	New *catalog.Relation
	// Exprs compute New's columns, in order, from a batch in Old's column
	// layout; nil when the stored layout does not change.
	Exprs []expr.Expr
	// From gives, for each of New's columns, the index of the Old column it
	// continues (renamed or retyped), or -1 for an added column.
	From []int
	// Views are every view depending on Old, checked against New; DropViews
	// those that CASCADE drops with the change.
	Views, DropViews []uint32
	// ViewQueries are new query texts for views that read Old under names
	// a RENAME changes (see renameInViews), by view OID.
	ViewQueries map[uint32]string
	// Notices are the statement's notices (skipped IF [NOT] EXISTS actions,
	// views dropped by CASCADE).
	Notices []*pgerr.Error
	// Validate are CHECK constraints added or validated, to check against
	// the rows already there (over New's layout); ValidateFKs foreign
	// keys likewise (alter_constraints.go).
	Validate    *RowChecks
	ValidateFKs []catalog.ForeignKey
}

// inTransform is the clause of an ALTER COLUMN TYPE ... USING expression.
const inTransform clause = "transform expressions"

// dependentsCatalog is the optional part of Env.Catalog that lists the
// views reading a relation (implemented by *catalog.Catalog).
type dependentsCatalog interface {
	Dependents(oid uint32) []*catalog.Relation
}

// alterState is an ALTER being planned: the working definition and, per
// working column, the expression computing it from Old's layout.
type alterState struct {
	b       *binder
	old     *catalog.Relation
	rel     *catalog.Relation
	src     []expr.Expr // per column of rel, over old's column ids
	from    []int       // per column of rel, old's column index or -1
	ids     []int       // binder ids of old's columns (the batch layout)
	using   *level      // the scope of old's columns for USING
	rewrite bool
	views   []*catalog.Relation // dependents of old
	dropped map[uint32]bool     // views CASCADE drops
	// cascaded are the views that read dropped views (and so on): CASCADE
	// drops them too.
	cascaded []*catalog.Relation
	retyped  map[string]bool // columns whose type this statement changes
	// rewritten are dependent views with their query rewritten for a RENAME.
	rewritten map[uint32]*catalog.Relation
	notices   []*pgerr.Error
	// validate and validateFKs index the CHECK constraints and foreign
	// keys of rel to check against the existing rows (alter_constraints.go).
	validate, validateFKs []int
}

// PlanAlterTable binds an AlterTableStmt (ALTER TABLE and ALTER VIEW).
func PlanAlterTable(env *Env, stmt *pg.AlterTableStmt) (*Alter, error) {
	a, err := startAlter(env, stmt.Relation, stmt.MissingOk)
	if a == nil || err != nil {
		return skipped(err)
	}
	for _, n := range stmt.Cmds {
		if err := a.cmd(n.GetAlterTableCmd()); err != nil {
			return nil, err
		}
	}
	return a.finish()
}

// PlanRename binds ALTER TABLE/VIEW ... RENAME [COLUMN] a TO b and ALTER
// TABLE/VIEW ... RENAME TO name.
func PlanRename(env *Env, stmt *pg.RenameStmt) (*Alter, error) {
	switch stmt.RenameType {
	case pg.ObjectType_OBJECT_TABLE, pg.ObjectType_OBJECT_VIEW, pg.ObjectType_OBJECT_COLUMN:
	case pg.ObjectType_OBJECT_MATVIEW, pg.ObjectType_OBJECT_FOREIGN_TABLE:
	default:
		return nil, pgerr.Unsupported("ALTER ... RENAME of %s is not supported", strings.ToLower(strings.TrimPrefix(stmt.RenameType.String(), "OBJECT_")))
	}
	if stmt.RenameType != pg.ObjectType_OBJECT_COLUMN {
		if a, err := renameStreaming(env, stmt); a != nil || err != nil {
			return a, err
		}
	}
	a, err := startAlter(env, stmt.Relation, stmt.MissingOk)
	if a == nil || err != nil {
		return skipped(err)
	}
	if stmt.RenameType == pg.ObjectType_OBJECT_COLUMN {
		i := a.rel.ColumnIndex(stmt.Subname)
		if i < 0 {
			return nil, pgerr.New(pgerr.UndefinedColumn, "column \"%s\" does not exist", stmt.Subname)
		}
		if a.rel.ColumnIndex(stmt.Newname) >= 0 {
			return nil, a.colExists(stmt.Newname)
		}
		a.rel.Columns[i].Name = stmt.Newname
		if err := a.constraintsRenameColumn(stmt.Subname, stmt.Newname); err != nil { // alter_constraints.go
			return nil, err
		}
		a.renameInViews()
		if v := a.broken(); v != nil {
			return nil, pgerr.New(pgerr.FeatureNotSupported, "cannot rename column \"%s\" of %s \"%s\" because view \"%s\" depends on it", stmt.Subname, kindName(a.old.Kind), a.old.Name, v.Name).
				WithHint("Views keep the text of their query: drop the view, rename, and create the view again.")
		}
		return a.finish()
	}
	if stmt.RenameType == pg.ObjectType_OBJECT_VIEW && a.old.Kind != catalog.KindView {
		return nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a view", a.old.Name)
	}
	if stmt.Newname == a.old.Name {
		return nil, pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", stmt.Newname)
	}
	a.rel.Name = stmt.Newname
	a.renameInViews()
	if v := a.broken(); v != nil {
		return nil, pgerr.New(pgerr.FeatureNotSupported, "cannot rename %s \"%s\" because view \"%s\" depends on it", kindName(a.old.Kind), a.old.Name, v.Name).
			WithHint("Views keep the text of their query: drop the view, rename, and create the view again.")
	}
	return a.finish()
}

// skipped turns startAlter's result into a plan: an IF EXISTS notice or an error.
func skipped(err error) (*Alter, error) {
	if e := pgerr.As(err); e != nil && e.Severity == pgerr.SevNotice {
		return &Alter{Notices: []*pgerr.Error{e}}, nil
	}
	return nil, err
}

func kindName(k catalog.RelKind) string {
	switch k {
	case catalog.KindView:
		return "view"
	case catalog.KindMatView:
		return "materialized view"
	case catalog.KindSource:
		return "source"
	}
	return "table"
}

// startAlter resolves the relation. With missingOK a missing relation is
// (nil, notice).
func startAlter(env *Env, rv *pg.RangeVar, missingOK bool) (*alterState, error) {
	b := newBinder(env)
	if env == nil || env.Catalog == nil {
		return nil, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", rv.Relname)
	}
	old, err := env.Catalog.Resolve(rv.Schemaname, rv.Relname, env.SearchPath)
	if err != nil {
		if missingOK && pgerr.CodeOf(err) == pgerr.UndefinedTable {
			n := pgerr.New(pgerr.SuccessfulCompletion, "relation \"%s\" does not exist, skipping", rv.Relname)
			n.Severity = pgerr.SevNotice
			return nil, n
		}
		return nil, err
	}
	switch old.Kind {
	case catalog.KindTable, catalog.KindView:
	case catalog.KindSystem:
		return nil, pgerr.New(pgerr.InsufficientPrivilege, "permission denied: \"%s\" is a system catalog", old.Name)
	default:
		return nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a table or view", old.Name)
	}
	a := &alterState{b: b, old: old, dropped: map[uint32]bool{}, retyped: map[string]bool{}}
	r := *old
	r.Columns = slices.Clone(old.Columns)
	r.PrimaryKey = slices.Clone(old.PrimaryKey)
	r.Unique = slices.Clone(old.Unique)
	r.Checks, r.ForeignKeys = slices.Clone(old.Checks), slices.Clone(old.ForeignKeys)
	a.rel = &r
	scan, l := b.scanForWrite(old, nil, rv)
	a.ids, a.using = scan.ids, l
	for i, id := range scan.ids {
		a.src = append(a.src, b.colRef(id))
		a.from = append(a.from, i)
	}
	if dc, ok := env.Catalog.(dependentsCatalog); ok {
		a.views = dc.Dependents(old.OID)
	}
	return a, nil
}

// finish converts the working state into the plan.
func (a *alterState) finish() (*Alter, error) {
	if v := a.broken(); v != nil { // every action checks its own; a safety net
		return nil, pgerr.New(pgerr.FeatureNotSupported, "cannot alter %s \"%s\" because view \"%s\" depends on it", kindName(a.old.Kind), a.old.Name, v.Name)
	}
	out := &Alter{Old: a.old, New: a.rel, From: a.from, Notices: a.notices}
	if err := a.validation(out); err != nil { // alter_constraints.go
		return nil, err
	}
	for _, v := range a.views {
		out.Views = append(out.Views, v.OID)
		if a.dropped[v.OID] {
			out.DropViews = append(out.DropViews, v.OID)
		}
	}
	for _, v := range a.cascaded {
		out.DropViews = append(out.DropViews, v.OID)
	}
	for oid, v := range a.rewritten {
		if out.ViewQueries == nil {
			out.ViewQueries = map[uint32]string{}
		}
		out.ViewQueries[oid] = v.ViewQuery
	}
	if a.rewrite {
		ph := &physical{b: a.b}
		for _, e := range a.src {
			pe, err := ph.expr(e, a.ids)
			if err != nil {
				return nil, err
			}
			out.Exprs = append(out.Exprs, pe)
		}
	}
	return out, nil
}

func (a *alterState) colExists(name string) error {
	return pgerr.New(pgerr.DuplicateColumn, "column \"%s\" of relation \"%s\" already exists", name, a.old.Name)
}

func (a *alterState) noColumn(name string) error {
	return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", name, a.old.Name)
}

func (a *alterState) notice(format string, args ...any) {
	n := pgerr.New(pgerr.SuccessfulCompletion, format, args...)
	n.Severity = pgerr.SevNotice
	a.notices = append(a.notices, n)
}

// column finds a column of the working definition.
func (a *alterState) column(name string) (int, error) {
	i := a.rel.ColumnIndex(name)
	if i < 0 {
		return -1, a.noColumn(name)
	}
	return i, nil
}

// cmd applies one action to the working definition.
func (a *alterState) cmd(c *pg.AlterTableCmd) error {
	if c == nil {
		return pgerr.Unsupported("this ALTER TABLE form is not supported")
	}
	if a.old.Kind == catalog.KindView {
		return pgerr.New(pgerr.WrongObjectType, "ALTER action %s cannot be performed on relation \"%s\"", actionName(c), a.old.Name).
			WithDetail("This operation is not supported for views.")
	}
	switch c.Subtype {
	case pg.AlterTableType_AT_AddColumn:
		if cd := c.Def.GetColumnDef(); cd != nil {
			if serial, _ := serialType(cd.TypeName); serial != "" {
				return pgerr.Unsupported("ALTER TABLE ... ADD COLUMN of a serial column is not supported")
			}
			for _, cn := range cd.Constraints {
				switch cn.GetConstraint().GetContype() {
				case pg.ConstrType_CONSTR_IDENTITY:
					return pgerr.Unsupported("ALTER TABLE ... ADD COLUMN of an identity column is not supported")
				}
			}
		}
		return a.addColumn(c.Def.GetColumnDef(), c.MissingOk)
	case pg.AlterTableType_AT_DropColumn:
		cascade := c.Behavior == pg.DropBehavior_DROP_CASCADE
		if err := a.dropGeneratedUsing(c.Name, cascade); err != nil { // alter_generated.go
			return err
		}
		return a.dropColumn(c.Name, c.MissingOk, cascade)
	case pg.AlterTableType_AT_AlterColumnType:
		if gs := a.generatedUsing(c.Name); len(gs) > 0 {
			return pgerr.Unsupported("cannot alter type of a column used by a generated column").
				WithDetail("Column \"%s\" is used by generated column \"%s\".", c.Name, gs[0])
		}
		// A generated column's stored values are cast, as PostgreSQL casts
		// them; later writes compute it in the new type.
		return a.alterType(c.Name, c.Def.GetColumnDef())
	case pg.AlterTableType_AT_DropExpression:
		return a.dropExpression(c.Name, c.MissingOk) // alter_generated.go
	case pg.AlterTableType_AT_ColumnDefault:
		i, err := a.column(c.Name)
		if err != nil {
			return err
		}
		if a.rel.Columns[i].Generated != "" {
			return pgerr.New(pgerr.SyntaxError, "column \"%s\" of relation \"%s\" is a generated column", c.Name, a.old.Name)
		}
		if c.Def == nil {
			a.rel.Columns[i].Default = ""
			return nil
		}
		text, err := a.defaultText(c.Def, a.rel.Columns[i])
		if err != nil {
			return err
		}
		a.rel.Columns[i].Default = text
		return nil
	case pg.AlterTableType_AT_SetNotNull:
		i, err := a.column(c.Name)
		if err != nil {
			return err
		}
		a.rel.Columns[i].NotNull = true // storage checks the rows
		return nil
	case pg.AlterTableType_AT_DropNotNull:
		i, err := a.column(c.Name)
		if err != nil {
			return err
		}
		if slices.Contains(a.rel.PrimaryKey, i) {
			return pgerr.New(pgerr.InvalidTableDefinition, "column \"%s\" is in a primary key", c.Name)
		}
		a.rel.Columns[i].NotNull = false
		return nil
	case pg.AlterTableType_AT_AddConstraint:
		return a.addConstraint(c.Def.GetConstraint())
	case pg.AlterTableType_AT_DropConstraint:
		return a.dropConstraint(c.Name, c.MissingOk)
	case pg.AlterTableType_AT_ValidateConstraint:
		return a.validateConstraint(c.Name)
	case pg.AlterTableType_AT_SetRelOptions, pg.AlterTableType_AT_ResetRelOptions:
		if a.rel.Kind != catalog.KindTable || c.Def.GetList() == nil {
			break
		}
		params, _, err := TableStorageParams(a.rel.StorageParams, c.Def.GetList().Items, c.Subtype == pg.AlterTableType_AT_ResetRelOptions)
		if err != nil {
			return err // PostgreSQL prints no position for these
		}
		a.rel.StorageParams = params // storage_params.go: nothing else changes
		return nil
	}
	return pgerr.Unsupported("ALTER TABLE ... %s is not supported", actionName(c))
}

// defaultText validates a DEFAULT expression for col and returns its text.
// PostgreSQL calls the value a "default expression" when its type does not
// fit the column.
func (a *alterState) defaultText(n *pg.Node, col catalog.Column) (string, error) {
	text, err := a.b.columnDefault(n, col)
	if e := pgerr.As(err); e != nil && e.Code == pgerr.DatatypeMismatch && strings.Contains(e.Message, " but expression is of type ") {
		c := *e
		c.Message = strings.Replace(e.Message, " but expression ", " but default expression ", 1)
		return "", &c
	}
	return text, err
}

// actionName is PostgreSQL's name of an action in messages.
func actionName(c *pg.AlterTableCmd) string {
	switch c.Subtype {
	case pg.AlterTableType_AT_AddColumn:
		return "ADD COLUMN"
	case pg.AlterTableType_AT_DropColumn:
		return "DROP COLUMN"
	case pg.AlterTableType_AT_AlterColumnType:
		return "ALTER COLUMN ... SET DATA TYPE"
	case pg.AlterTableType_AT_ColumnDefault:
		return "ALTER COLUMN ... SET DEFAULT"
	case pg.AlterTableType_AT_SetNotNull:
		return "ALTER COLUMN ... SET NOT NULL"
	case pg.AlterTableType_AT_DropNotNull:
		return "ALTER COLUMN ... DROP NOT NULL"
	case pg.AlterTableType_AT_AddConstraint:
		return "ADD CONSTRAINT"
	case pg.AlterTableType_AT_DropConstraint:
		return "DROP CONSTRAINT"
	}
	return strings.ReplaceAll(strings.TrimPrefix(c.Subtype.String(), "AT_"), "_", " ")
}

func (a *alterState) addColumn(cd *pg.ColumnDef, ifNotExists bool) error {
	if cd == nil {
		return pgerr.Unsupported("this ADD COLUMN form is not supported")
	}
	if a.rel.ColumnIndex(cd.Colname) >= 0 {
		if ifNotExists {
			a.notice("column \"%s\" of relation \"%s\" already exists, skipping", cd.Colname, a.old.Name)
			return nil
		}
		return a.colExists(cd.Colname)
	}
	if len(a.rel.Columns) >= 1600 {
		return pgerr.New(pgerr.TooManyColumns, "tables can have at most 1600 columns")
	}
	t, err := a.b.bindAnyType(cd.TypeName) // an enum or composite type too (usertype.go)
	if err != nil {
		if a.b.lookupDomain(cd.TypeName) != nil { // domain.go
			return a.b.newErr(pgerr.FeatureNotSupported, cd.TypeName.Location, "ALTER TABLE ... ADD COLUMN of a domain type is not supported")
		}
		return a.b.errAt(err, cd.TypeName.Location)
	}
	if err := a.b.columnCollate(cd, t); err != nil { // collate.go
		return err
	}
	col := catalog.Column{Name: cd.Colname, Type: t, NotNull: cd.IsNotNull}
	var pk, unique, gen *pg.Constraint
	var more []*pg.Constraint // CHECK and REFERENCES (alter_constraints.go)
	for _, cn := range cd.Constraints {
		c := cn.GetConstraint()
		switch c.Contype {
		case pg.ConstrType_CONSTR_GENERATED: // generated.go
			if err := a.b.generatedColumn(a.rel, &col, c, false); err != nil {
				return err
			}
			gen = c
		case pg.ConstrType_CONSTR_CHECK, pg.ConstrType_CONSTR_FOREIGN:
			more = append(more, c)
		case pg.ConstrType_CONSTR_ATTR_DEFERRABLE, pg.ConstrType_CONSTR_ATTR_NOT_DEFERRABLE, pg.ConstrType_CONSTR_ATTR_IMMEDIATE:
		case pg.ConstrType_CONSTR_NOTNULL:
			col.NotNull = true
		case pg.ConstrType_CONSTR_NULL:
		case pg.ConstrType_CONSTR_DEFAULT:
			if col.Generated != "" {
				return a.b.newErr(pgerr.SyntaxError, c.Location, "both default and generation expression specified for column \"%s\" of table \"%s\"", cd.Colname, a.old.Name)
			}
			text, err := a.defaultText(c.RawExpr, col)
			if err != nil {
				return err
			}
			col.Default = text
		case pg.ConstrType_CONSTR_PRIMARY:
			pk = c
		case pg.ConstrType_CONSTR_UNIQUE:
			unique = c
		default:
			return a.b.newErr(pgerr.FeatureNotSupported, c.Location, "%s constraints are not supported", constraintName(c.Contype))
		}
	}
	a.rel.Columns = append(a.rel.Columns, col)
	i := len(a.rel.Columns) - 1
	// Existing rows get the default, evaluated for each row, or a
	// generated column's value.
	var fill expr.Expr
	if gen != nil {
		fill, err = a.generatedFill(i, gen.RawExpr)
	} else {
		fill, err = a.b.defaultExpr(a.rel, i)
	}
	if err != nil {
		return err
	}
	a.src = append(a.src, fill)
	a.from = append(a.from, -1)
	a.rewrite = true
	names := make([]string, i)
	for j := range names {
		names[j] = a.rel.Columns[j].Name
	}
	a.pinInViews(names)
	if v := a.broken(); v != nil { // a view with SELECT * would change
		return pgerr.New(pgerr.FeatureNotSupported, "cannot add column \"%s\" to table \"%s\" because view \"%s\" would change", cd.Colname, a.old.Name, v.Name).
			WithDetail("The view's query selects all the table's columns (*); views keep the text of their query.").
			WithHint("Drop the view, alter the table, and create the view again.")
	}
	if pk != nil {
		if err := a.setPrimaryKey([]string{cd.Colname}, pk.Conname); err != nil {
			return err
		}
	}
	if unique != nil {
		if err := a.addUnique([]string{cd.Colname}, unique); err != nil {
			return err
		}
	}
	return a.columnConstraints(cd.Colname, more)
}

func (a *alterState) dropColumn(name string, ifExists, cascade bool) error {
	i := a.rel.ColumnIndex(name)
	if i < 0 {
		if ifExists {
			a.notice("column \"%s\" of relation \"%s\" does not exist, skipping", name, a.old.Name)
			return nil
		}
		return a.noColumn(name)
	}
	a.constraintsDropColumn(i) // alter_constraints.go
	a.rel.Columns = slices.Delete(a.rel.Columns, i, i+1)
	a.src = slices.Delete(a.src, i, i+1)
	a.from = slices.Delete(a.from, i, i+1)
	a.rewrite = true
	shift := func(cols []int) ([]int, bool) {
		var out []int
		for _, c := range cols {
			switch {
			case c == i:
				return nil, false
			case c > i:
				out = append(out, c-1)
			default:
				out = append(out, c)
			}
		}
		return out, true
	}
	if pk, ok := shift(a.rel.PrimaryKey); ok {
		a.rel.PrimaryKey = pk
	} else { // dropping a key column drops the key
		a.rel.PrimaryKey, a.rel.PKName, a.rel.PKIndexOID = nil, "", 0
	}
	var uniq []catalog.UniqueKey
	for _, u := range a.rel.Unique {
		if cols, ok := shift(u.Columns); ok {
			u.Columns = cols
			uniq = append(uniq, u)
		}
	}
	a.rel.Unique = uniq
	// Views that no longer bind depend on the column.
	var lines []string
	var broken []*catalog.Relation
	for v := a.broken(); v != nil; v = a.broken() {
		broken = append(broken, v)
		a.dropped[v.OID] = true
		lines = append(lines, fmt.Sprintf("%s %s depends on column %s of table %s", kindName(v.Kind), v.Name, name, a.old.Name))
	}
	if len(broken) > 0 && !cascade {
		return pgerr.New(pgerr.DependentObjectsStillExist, "cannot drop column %s of table %s because other objects depend on it", name, a.old.Name).
			WithDetail("%s", strings.Join(lines, "\n")).
			WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
	}
	// Views reading a dropped view go too.
	if dc, ok := a.b.env.Catalog.(dependentsCatalog); ok {
		for i := 0; i < len(broken); i++ {
			for _, d := range dc.Dependents(broken[i].OID) {
				if !a.dropped[d.OID] {
					a.dropped[d.OID] = true
					a.cascaded = append(a.cascaded, d)
					broken = append(broken, d)
				}
			}
		}
	}
	switch {
	case len(broken) == 1:
		a.notice("drop cascades to %s %s", kindName(broken[0].Kind), broken[0].Name)
	case len(broken) > 1:
		detail := make([]string, len(broken))
		for j, v := range broken {
			detail[j] = "drop cascades to " + kindName(v.Kind) + " " + v.Name
		}
		n := pgerr.New(pgerr.SuccessfulCompletion, "drop cascades to %d other objects", len(broken)).WithDetail("%s", strings.Join(detail, "\n"))
		n.Severity = pgerr.SevNotice
		a.notices = append(a.notices, n)
	}
	return nil
}

func (a *alterState) alterType(name string, cd *pg.ColumnDef) error {
	i, err := a.column(name)
	if err != nil {
		return err
	}
	if cd == nil || cd.TypeName == nil {
		return pgerr.Unsupported("this ALTER COLUMN TYPE form is not supported")
	}
	t, err := a.b.bindAnyType(cd.TypeName) // an enum or composite type too (usertype.go)
	if err != nil {
		if a.b.lookupDomain(cd.TypeName) != nil { // domain.go
			return a.b.newErr(pgerr.FeatureNotSupported, cd.TypeName.Location, "ALTER COLUMN ... TYPE to a domain is not supported")
		}
		return a.b.errAt(err, cd.TypeName.Location)
	}
	if cc := cd.CollClause; cc != nil { // collate.go; PostgreSQL gives no position here
		if err := a.b.checkCollate(cc.Collname, t, -1); err != nil {
			return err
		}
	}
	if a.retyped[name] {
		return pgerr.New(pgerr.FeatureNotSupported, "cannot alter type of column \"%s\" twice", name)
	}
	a.retyped[name] = true
	col := a.rel.Columns[i]
	col.Type, col.Domain = t, 0
	var e expr.Expr
	if cd.RawDefault != nil { // USING
		a.using.clause = inTransform
		u, err := a.b.expr(a.using, cd.RawDefault)
		if err != nil {
			return err
		}
		if hasSubquery(u) {
			return a.b.newErr(pgerr.FeatureNotSupported, nodeLoc(cd.RawDefault), "cannot use subquery in transform expression")
		}
		if e, err = expr.Coerce(u, t, true); err != nil {
			return pgerr.New(pgerr.DatatypeMismatch, "result of USING clause for column \"%s\" cannot be cast automatically to type %s", name, t).
				WithHint("You might need to add an explicit cast.")
		}
	} else {
		if e, err = expr.Coerce(a.src[i], t, true); err != nil {
			return pgerr.New(pgerr.DatatypeMismatch, "column \"%s\" cannot be cast automatically to type %s", name, t).
				WithHint("You might need to specify \"USING %s::%s\".", catalog.QuoteIdent(name), t)
		}
	}
	if col.Default != "" {
		if _, err := a.b.columnDefault(mustParseExpr(col.Default), col); err != nil {
			return pgerr.New(pgerr.DatatypeMismatch, "default for column \"%s\" cannot be cast automatically to type %s", name, t)
		}
	}
	a.rel.Columns[i] = col
	a.src[i] = e
	a.rewrite = true
	if v := a.broken(); v != nil {
		return pgerr.New(pgerr.FeatureNotSupported, "cannot alter type of a column used by a view or rule").
			WithDetail("rule _RETURN on view %s depends on column \"%s\"", v.Name, name)
	}
	return nil
}

// mustParseExpr parses a stored default's text (valid by construction);
// a NULL constant stands in if it does not parse.
func mustParseExpr(text string) *pg.Node {
	stmts, err := sql.Parse("SELECT " + text)
	if err == nil && len(stmts) == 1 && stmts[0].AST != nil {
		if sel := stmts[0].AST.GetSelectStmt(); sel != nil && len(sel.TargetList) == 1 {
			return sel.TargetList[0].GetResTarget().Val
		}
	}
	return &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Isnull: true}}}
}

func (a *alterState) addConstraint(c *pg.Constraint) error {
	if c == nil {
		return pgerr.Unsupported("this ADD CONSTRAINT form is not supported")
	}
	if err := a.b.refuseDeferrable(c); err != nil { // constraints.go
		return err
	}
	switch c.Contype {
	case pg.ConstrType_CONSTR_PRIMARY:
		return a.setPrimaryKey(strs(c.Keys), c.Conname)
	case pg.ConstrType_CONSTR_UNIQUE:
		return a.addUnique(strs(c.Keys), c)
	case pg.ConstrType_CONSTR_CHECK:
		return a.addCheck(c) // alter_constraints.go
	case pg.ConstrType_CONSTR_FOREIGN:
		return a.addForeignKey(c)
	}
	return a.b.newErr(pgerr.FeatureNotSupported, c.Location, "%s constraints are not supported", constraintName(c.Contype))
}

func (a *alterState) setPrimaryKey(names []string, name string) error {
	var cols []int
	for _, n := range names {
		i := a.rel.ColumnIndex(n)
		if i < 0 {
			return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", n, a.old.Name)
		}
		if slices.Contains(cols, i) {
			return pgerr.New(pgerr.DuplicateColumn, "column \"%s\" appears twice in primary key constraint", n)
		}
		cols = append(cols, i)
	}
	if len(a.rel.PrimaryKey) > 0 {
		return pgerr.New(pgerr.InvalidTableDefinition, "multiple primary keys for table \"%s\" are not allowed", a.old.Name)
	}
	for _, i := range cols {
		a.rel.Columns[i].NotNull = true
	}
	a.rel.PrimaryKey, a.rel.PKName, a.rel.PKIndexOID = cols, name, 0
	return nil
}

func (a *alterState) addUnique(names []string, c *pg.Constraint) error {
	if c.NullsNotDistinct || len(c.Including) > 0 || len(c.Options) > 0 || c.Indexspace != "" {
		return a.b.newErr(pgerr.FeatureNotSupported, c.Location, "UNIQUE NULLS NOT DISTINCT, INCLUDE, WITH and USING INDEX TABLESPACE are not supported")
	}
	var cols []int
	for _, n := range names {
		i := a.rel.ColumnIndex(n)
		if i < 0 {
			return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", n, a.old.Name)
		}
		if slices.Contains(cols, i) {
			return pgerr.New(pgerr.DuplicateColumn, "column \"%s\" appears twice in unique constraint", n)
		}
		cols = append(cols, i)
	}
	a.rel.Unique = append(a.rel.Unique, catalog.UniqueKey{Name: c.Conname, Columns: cols})
	return nil
}

func (a *alterState) dropConstraint(name string, ifExists bool) error {
	if len(a.rel.PrimaryKey) > 0 && a.rel.PKName == name {
		a.rel.PrimaryKey, a.rel.PKName, a.rel.PKIndexOID = nil, "", 0
		return nil
	}
	for k, u := range a.rel.Unique {
		if u.Name == name {
			a.rel.Unique = slices.Delete(a.rel.Unique, k, k+1)
			return nil
		}
	}
	if a.dropCheckOrFK(name) { // alter_constraints.go
		return nil
	}
	if ifExists {
		a.notice("constraint \"%s\" of relation \"%s\" does not exist, skipping", name, a.old.Name)
		return nil
	}
	return pgerr.New(pgerr.UndefinedObject, "constraint \"%s\" of relation \"%s\" does not exist", name, a.old.Name)
}

// broken returns the first view depending on the relation (and not yet
// dropped) whose stored query no longer binds to the same columns against
// the working definition, or nil.
func (a *alterState) broken() *catalog.Relation {
	if len(a.views) == 0 {
		return nil
	}
	env := *a.b.env
	env.Catalog = &alterOverlay{Catalog: env.Catalog, old: a.old, rel: a.rel, views: a.rewritten}
	env.Source, env.Params = "", nil
	for _, v := range a.views {
		if a.dropped[v.OID] {
			continue
		}
		check := v
		if r := a.rewritten[v.OID]; r != nil {
			check = r
		}
		if !viewStillBinds(&env, check) {
			return v
		}
	}
	return nil
}

// viewStillBinds reports whether view v's query binds in env to columns
// of the types the catalog records.
func viewStillBinds(env *Env, v *catalog.Relation) bool {
	stmts, err := sql.Parse(v.ViewQuery)
	if err != nil || len(stmts) != 1 || stmts[0].AST == nil {
		return false
	}
	b := newBinder(env)
	b.stream = v.Kind == catalog.KindMatView // it may read sources
	if stmts[0].Ext != nil {
		b.sessionFrames = stmts[0].Ext.SessionFrames
	}
	plan, err := b.query(stmts[0].AST, nil, nil, false)
	if err != nil {
		return false
	}
	ids := plan.outIDs()
	if len(ids) != len(v.Columns) {
		return false
	}
	for i, id := range ids {
		if !b.cols[id].t.Equal(v.Columns[i].Type) {
			return false
		}
	}
	return true
}

// alterOverlay is a catalog in which the altered relation already has its
// new definition (for re-binding the views that read it).
type alterOverlay struct {
	Catalog
	old, rel *catalog.Relation
	views    map[uint32]*catalog.Relation // views with rewritten queries
}

// Resolve finds the altered relation under its new name only.
func (o *alterOverlay) Resolve(schema, name string, searchPath []string) (*catalog.Relation, error) {
	if name == o.rel.Name && name != o.old.Name && (schema == "" || schema == o.rel.Schema) {
		return o.rel, nil
	}
	r, err := o.Catalog.Resolve(schema, name, searchPath)
	if err == nil && r.OID == o.old.OID {
		if name != o.rel.Name {
			return nil, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", name)
		}
		return o.rel, nil
	}
	if err == nil && o.views[r.OID] != nil {
		return o.views[r.OID], nil
	}
	return r, err
}
