package catalog

import (
	"strings"
)

// CHECK constraints and foreign keys as pg_catalog and information_schema
// show them (constraints.go holds the definitions).

func init() {
	registerRows("information_schema.check_constraints", isCheckConstraintsRows)
	registerRows("information_schema.referential_constraints", isReferentialConstraintsRows)
}

// hasFKTriggers is pg_class.relhastriggers: PostgreSQL enforces foreign
// keys with triggers on both tables (psql shows a table's foreign keys
// and "Referenced by" only when it is set).
func (s *snapshot) hasFKTriggers(r *Relation) bool {
	if len(r.ForeignKeys) > 0 {
		return true
	}
	for _, o := range s.byOID {
		for _, f := range o.ForeignKeys {
			if f.RefTable == r.OID {
				return true
			}
		}
	}
	return false
}

// checkDef renders a CHECK constraint as pg_get_constraintdef does: the
// pretty form "CHECK (a > 0)" or the plain one "CHECK ((a > 0))" (the
// expression is kept as deparsed SQL text, so the plain form only adds
// the outer parentheses PostgreSQL's deparser puts around an operator).
func checkDef(c CheckConstraint, pretty bool) string {
	def := "CHECK (" + c.Expr + ")"
	if !pretty {
		def = "CHECK ((" + c.Expr + "))"
	}
	if c.NotValid {
		def += " NOT VALID"
	}
	return def
}

// fkDef renders a foreign key as pg_get_constraintdef does.
func (s *snapshot) fkDef(r *Relation, f ForeignKey, searchPath []string) string {
	ref := s.byOID[f.RefTable]
	if ref == nil {
		return ""
	}
	cols := func(rel *Relation, idx []int) string {
		names := make([]string, len(idx))
		for i, c := range idx {
			names[i] = QuoteIdent(rel.Columns[c].Name)
		}
		return strings.Join(names, ", ")
	}
	def := "FOREIGN KEY (" + cols(r, f.Columns) + ") REFERENCES " + s.displayName(ref.OID, searchPath) + "(" + cols(ref, f.RefColumns) + ")"
	if f.MatchFull {
		def += " MATCH FULL"
	}
	if f.OnUpdate != FKNoAction && f.OnUpdate != 0 {
		def += " ON UPDATE " + FKActionName(f.OnUpdate)
	}
	if f.OnDelete != FKNoAction && f.OnDelete != 0 {
		def += " ON DELETE " + FKActionName(f.OnDelete)
	}
	if f.NotValid {
		def += " NOT VALID"
	}
	return def
}

// constraintByOID finds a CHECK constraint or foreign key by OID: the
// definition pg_get_constraintdef shows, and whether there is one.
func (s *snapshot) constraintDefByOID(oid uint32, pretty bool, searchPath []string) (string, bool) {
	for _, r := range s.byOID {
		for _, c := range r.Checks {
			if c.OID == oid {
				return checkDef(c, pretty), true
			}
		}
		for _, f := range r.ForeignKeys {
			if f.OID == oid {
				return s.fkDef(r, f, searchPath), true
			}
		}
	}
	return "", false
}

// refKeyIndex is the OID of ref's key index over exactly cols, or 0.
func refKeyIndex(ref *Relation, cols []int) (uint32, string) {
	if ref == nil {
		return 0, ""
	}
	for _, k := range ref.keyIndexes() {
		if sameSet(intsToOIDs(k.cols), intsToOIDs(cols)) {
			return k.oid, k.name
		}
	}
	return 0, ""
}

func attnums(cols []int) []int16 {
	out := make([]int16, len(cols))
	for i, c := range cols {
		out[i] = int16(c + 1)
	}
	return out
}

// pgConstraintRowsMore adds r's CHECK and foreign key rows to pg_constraint.
func pgConstraintRowsMore(s *snapshot, r *Relation, b *rowBuilder) error {
	for _, c := range r.Checks {
		var key []int16
		if i := r.ColumnIndex(c.Column); c.Column != "" && i >= 0 {
			key = []int16{int16(i + 1)}
		}
		err := b.add(row{
			"oid": c.OID, "conname": c.Name, "connamespace": s.schemaOID(r.Schema), "contype": "c",
			"condeferrable": false, "condeferred": false, "convalidated": !c.NotValid, "conrelid": r.OID,
			"contypid": uint32(0), "conindid": uint32(0), "conparentid": uint32(0), "confrelid": uint32(0),
			"confupdtype": " ", "confdeltype": " ", "confmatchtype": " ", "conislocal": true,
			"coninhcount": 0, "connoinherit": false, "conkey": key, "conbin": c.Expr,
		})
		if err != nil {
			return err
		}
	}
	for _, f := range r.ForeignKeys {
		idx, _ := refKeyIndex(s.byOID[f.RefTable], f.RefColumns)
		match := "s"
		if f.MatchFull {
			match = "f"
		}
		err := b.add(row{
			"oid": f.OID, "conname": f.Name, "connamespace": s.schemaOID(r.Schema), "contype": "f",
			"condeferrable": false, "condeferred": false, "convalidated": !f.NotValid, "conrelid": r.OID,
			"contypid": uint32(0), "conindid": idx, "conparentid": uint32(0), "confrelid": f.RefTable,
			"confupdtype": string(f.OnUpdate), "confdeltype": string(f.OnDelete), "confmatchtype": match, "conislocal": true,
			"coninhcount": 0, "connoinherit": true, "conkey": attnums(f.Columns), "confkey": attnums(f.RefColumns),
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// isTableConstraintsMore adds r's CHECK and FOREIGN KEY rows to
// information_schema.table_constraints (base holds the common columns).
func isTableConstraintsMore(r *Relation, base row, b *rowBuilder) error {
	add := func(name, kind string) error {
		x := row{"constraint_name": name, "constraint_type": kind}
		for k, v := range base {
			x[k] = v
		}
		return b.add(x)
	}
	for _, c := range r.Checks {
		if err := add(c.Name, "CHECK"); err != nil {
			return err
		}
	}
	for _, f := range r.ForeignKeys {
		if err := add(f.Name, "FOREIGN KEY"); err != nil {
			return err
		}
	}
	return nil
}

func isCheckConstraintsRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	db := dbName(ctx)
	for _, r := range s.sortedRelations() {
		for _, ch := range r.Checks {
			err := b.add(row{"constraint_catalog": db, "constraint_schema": r.Schema, "constraint_name": ch.Name,
				"check_clause": "((" + ch.Expr + "))"})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func isReferentialConstraintsRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	db := dbName(ctx)
	for _, r := range s.sortedRelations() {
		for _, f := range r.ForeignKeys {
			ref := s.byOID[f.RefTable]
			_, keyName := refKeyIndex(ref, f.RefColumns)
			match := "NONE"
			if f.MatchFull {
				match = "FULL"
			}
			x := row{"constraint_catalog": db, "constraint_schema": r.Schema, "constraint_name": f.Name,
				"unique_constraint_catalog": db, "unique_constraint_name": keyName,
				"match_option": match, "update_rule": FKActionName(f.OnUpdate), "delete_rule": FKActionName(f.OnDelete)}
			if ref != nil {
				x["unique_constraint_schema"] = ref.Schema
			}
			if err := b.add(x); err != nil {
				return err
			}
		}
	}
	return nil
}
