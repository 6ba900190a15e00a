package planner

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
)

// ALTER TABLE and CHECK / FOREIGN KEY constraints: ADD CONSTRAINT (with
// NOT VALID), VALIDATE CONSTRAINT, DROP CONSTRAINT, and what DROP COLUMN
// and RENAME COLUMN do to them. The rows already in the table are
// checked against a new or validated constraint: Alter.Validate (CHECK,
// by the storage rewrite) and Alter.ValidateFKs (by the engine).

// addCheck adds a CHECK constraint to the working definition.
func (a *alterState) addCheck(c *pg.Constraint) error {
	chk, err := a.b.checkConstraint(a.rel, c, "")
	if err != nil {
		return err
	}
	if chk.Name != "" && a.constraintNamed(chk.Name) {
		return pgerr.New(pgerr.Code("42710"), "constraint \"%s\" for relation \"%s\" already exists", chk.Name, a.old.Name)
	}
	if chk.Name == "" { // named now, for the error of a row that fails it
		parts := []string{a.rel.Name}
		if chk.Column != "" {
			parts = append(parts, chk.Column)
		}
		chk.Name = a.rel.FreeConstraintName(parts, "check")
	}
	a.rel.Checks = append(a.rel.Checks, chk)
	if !chk.NotValid {
		a.validate = append(a.validate, len(a.rel.Checks)-1)
	}
	return nil
}

// columnConstraints adds the CHECK and REFERENCES constraints of a column
// ADD COLUMN adds. The new column holds its default in the rows already
// there: a CHECK is checked against them; a foreign key is refused when
// the column has a default (its rows are checked in the old layout,
// before the column exists), else it holds only NULLs, which pass.
func (a *alterState) columnConstraints(column string, cs []*pg.Constraint) error {
	for _, c := range cs {
		if c.Contype == pg.ConstrType_CONSTR_CHECK {
			if err := a.addCheck(c); err != nil {
				return err
			}
			continue
		}
		if a.rel.Columns[a.rel.ColumnIndex(column)].Default != "" {
			return a.b.newErr(pgerr.FeatureNotSupported, c.Location, "ADD COLUMN ... DEFAULT ... REFERENCES is not supported: add the column, then the foreign key")
		}
		fk, err := a.b.foreignKey(a.rel, c, column)
		if err != nil {
			return err
		}
		if err := a.appendForeignKey(fk, false); err != nil {
			return err
		}
	}
	return nil
}

// addForeignKey adds a FOREIGN KEY constraint to the working definition.
func (a *alterState) addForeignKey(c *pg.Constraint) error {
	fk, err := a.b.foreignKey(a.rel, c, "")
	if err != nil {
		return err
	}
	return a.appendForeignKey(fk, !fk.NotValid)
}

// appendForeignKey names fk if it has no name and adds it; validate
// checks the rows already there against it.
func (a *alterState) appendForeignKey(fk catalog.ForeignKey, validate bool) error {
	if fk.Name != "" && a.constraintNamed(fk.Name) {
		return pgerr.New(pgerr.Code("42710"), "constraint \"%s\" for relation \"%s\" already exists", fk.Name, a.old.Name)
	}
	if fk.Name == "" { // named now, for the error of a row that fails it
		parts := []string{a.rel.Name}
		for _, i := range fk.Columns {
			parts = append(parts, a.rel.Columns[i].Name)
		}
		fk.Name = a.rel.FreeConstraintName(parts, "fkey")
	}
	a.rel.ForeignKeys = append(a.rel.ForeignKeys, fk)
	if validate {
		a.validateFKs = append(a.validateFKs, len(a.rel.ForeignKeys)-1)
	}
	return nil
}

// constraintNamed reports whether the working definition has a
// constraint of that name.
func (a *alterState) constraintNamed(name string) bool {
	if len(a.rel.PrimaryKey) > 0 && a.rel.PKName == name {
		return true
	}
	for _, u := range a.rel.Unique {
		if u.Name == name {
			return true
		}
	}
	for _, c := range a.rel.Checks {
		if c.Name == name {
			return true
		}
	}
	for _, f := range a.rel.ForeignKeys {
		if f.Name == name {
			return true
		}
	}
	return false
}

// validateConstraint is VALIDATE CONSTRAINT: a NOT VALID constraint is
// checked against the rows and becomes valid; a valid one is left alone.
func (a *alterState) validateConstraint(name string) error {
	for i := range a.rel.Checks {
		if c := &a.rel.Checks[i]; c.Name == name {
			if c.NotValid {
				c.NotValid = false
				a.validate = append(a.validate, i)
			}
			return nil
		}
	}
	for i := range a.rel.ForeignKeys {
		if f := &a.rel.ForeignKeys[i]; f.Name == name {
			if f.NotValid {
				f.NotValid = false
				a.validateFKs = append(a.validateFKs, i)
			}
			return nil
		}
	}
	if a.constraintNamed(name) {
		return nil // keys are always valid
	}
	return pgerr.New(pgerr.UndefinedObject, "constraint \"%s\" of relation \"%s\" does not exist", name, a.old.Name)
}

// dropCheckOrFK drops a CHECK constraint or foreign key by name; false
// when there is none.
func (a *alterState) dropCheckOrFK(name string) bool {
	for k, c := range a.rel.Checks {
		if c.Name == name {
			a.rel.Checks = slices.Delete(a.rel.Checks, k, k+1)
			a.validate = nil
			return true
		}
	}
	for k, f := range a.rel.ForeignKeys {
		if f.Name == name {
			a.rel.ForeignKeys = slices.Delete(a.rel.ForeignKeys, k, k+1)
			a.validateFKs = nil
			return true
		}
	}
	return false
}

// constraintsDropColumn drops the constraints over column i of the working
// definition (PostgreSQL drops them with the column) and renumbers the
// foreign keys' columns. Runs before the column leaves a.rel.
func (a *alterState) constraintsDropColumn(i int) {
	name := a.rel.Columns[i].Name
	var checks []catalog.CheckConstraint
	for _, c := range a.rel.Checks {
		if !slices.Contains(columnRefs(mustParseExpr(c.Expr)), name) {
			checks = append(checks, c)
		}
	}
	a.rel.Checks = checks
	var fks []catalog.ForeignKey
	for _, f := range a.rel.ForeignKeys {
		self := f.RefTable == a.rel.OID
		if slices.Contains(f.Columns, i) || self && slices.Contains(f.RefColumns, i) {
			continue
		}
		f.Columns = shiftCols(f.Columns, i)
		if self {
			f.RefColumns = shiftCols(f.RefColumns, i)
		}
		fks = append(fks, f)
	}
	a.rel.ForeignKeys = fks
	a.validate, a.validateFKs = nil, nil
}

func shiftCols(cols []int, dropped int) []int {
	out := make([]int, len(cols))
	for k, c := range cols {
		out[k] = c
		if c > dropped {
			out[k] = c - 1
		}
	}
	return out
}

// constraintsRenameColumn rewrites the CHECK constraints and generation
// expressions of the working definition for a column renamed from old to
// new.
func (a *alterState) constraintsRenameColumn(old, new string) error {
	for k, c := range a.rel.Checks {
		text, err := renameColumnIn(c.Expr, old, new)
		if err != nil {
			return err
		}
		a.rel.Checks[k].Expr = text
	}
	for k, c := range a.rel.Columns { // generation expressions (generated.go)
		if c.Generated == "" {
			continue
		}
		text, err := renameColumnIn(c.Generated, old, new)
		if err != nil {
			return err
		}
		a.rel.Columns[k].Generated = text
	}
	return nil
}

// renameColumnIn is the expression text e with its references to column
// old naming new (e itself when it has none).
func renameColumnIn(e, old, new string) (string, error) {
	n := mustParseExpr(e)
	if !slices.Contains(columnRefs(n), old) {
		return e, nil
	}
	sql.EachColumnRef(n.ProtoReflect(), func(cr *pg.ColumnRef) {
		if f := cr.Fields; len(f) > 0 && f[len(f)-1].GetString_().GetSval() == old {
			f[len(f)-1] = &pg.Node{Node: &pg.Node_String_{String_: &pg.String{Sval: new}}}
		}
	})
	return deparseExpr(n)
}

// columnRefs lists the column names an expression refers to.
func columnRefs(n *pg.Node) []string {
	var out []string
	sql.EachColumnRef(n.ProtoReflect(), func(cr *pg.ColumnRef) {
		if f := cr.Fields; len(f) > 0 {
			out = append(out, f[len(f)-1].GetString_().GetSval())
		}
	})
	return out
}

// referencingCatalog is the optional part of Env.Catalog that lists the
// foreign keys referencing a table (implemented by *catalog.Catalog).
type referencingCatalog interface {
	Referencing(oid uint32) []catalog.ReferencingKey
}

// refuseRetypedKeys refuses ALTER COLUMN TYPE of a column a foreign key
// uses, on either side (keys must keep equal types; PostgreSQL would
// re-check the key).
func (a *alterState) refuseRetypedKeys() error {
	if len(a.retyped) == 0 {
		return nil
	}
	refuse := func(col, fk string) error {
		return pgerr.Unsupported("ALTER COLUMN ... TYPE of column \"%s\" is not supported: foreign key constraint \"%s\" uses it", col, fk)
	}
	for _, f := range a.rel.ForeignKeys {
		for _, i := range f.Columns {
			if a.retyped[a.rel.Columns[i].Name] {
				return refuse(a.rel.Columns[i].Name, f.Name)
			}
		}
	}
	if rc, ok := a.b.env.Catalog.(referencingCatalog); ok {
		for _, rk := range rc.Referencing(a.old.OID) {
			for _, i := range rk.Key.RefColumns {
				if i < len(a.old.Columns) && a.retyped[a.old.Columns[i].Name] {
					return refuse(a.old.Columns[i].Name, rk.Key.Name)
				}
			}
		}
	}
	return nil
}

// validation fills the plan's checks of the rows already in the table.
func (a *alterState) validation(out *Alter) error {
	if err := a.refuseRetypedKeys(); err != nil {
		return err
	}
	if len(a.validate) > 0 {
		r := *a.rel
		r.Checks = nil
		for _, i := range a.validate {
			if i < len(a.rel.Checks) {
				r.Checks = append(r.Checks, a.rel.Checks[i])
			}
		}
		rc, err := compileChecks(a.b.env, &r)
		if err != nil {
			return err
		}
		rc.Validating = true
		out.Validate = rc
	}
	if len(a.validateFKs) > 0 && a.rewrite {
		return pgerr.Unsupported("ALTER TABLE that changes columns and adds or validates a foreign key in one statement is not supported: run them as separate statements")
	}
	for _, i := range a.validateFKs {
		if i < len(a.rel.ForeignKeys) {
			out.ValidateFKs = append(out.ValidateFKs, a.rel.ForeignKeys[i])
		}
	}
	return nil
}
