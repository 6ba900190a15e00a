package catalog

import (
	"fmt"
	"strconv"

	"github.com/streamsql/streamsql/types"
)

// Rows of the information_schema views.

func init() {
	registerRows("information_schema.tables", isTablesRows)
	registerRows("information_schema.columns", isColumnsRows)
	registerRows("information_schema.schemata", isSchemataRows)
	registerRows("information_schema.views", isViewsRows)
	registerRows("information_schema.table_constraints", isTableConstraintsRows)
	registerRows("information_schema.key_column_usage", isKeyColumnUsageRows)
	registerRows("information_schema.constraint_column_usage", isConstraintColumnUsageRows)
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

func isTablesRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range s.sortedRelations() {
		var typ string
		switch r.Kind {
		case KindTable:
			typ = "BASE TABLE"
		case KindView, KindSystem:
			typ = "VIEW"
		case KindSource:
			typ = "FOREIGN"
		default:
			continue // materialized views are not in information_schema.tables
		}
		err := b.add(row{
			"table_catalog": dbName(ctx), "table_schema": r.Schema, "table_name": r.Name, "table_type": typ,
			"is_insertable_into": yesNo(r.Kind == KindTable), "is_typed": "NO",
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// sqlDataType is information_schema's data_type: the SQL standard name
// ("ARRAY" for arrays).
func sqlDataType(t types.T) string {
	switch t.Kind {
	case types.Array:
		return "ARRAY"
	case types.Bpchar:
		return "character"
	}
	if t.IsUserDefined() { // an enum or composite type (usertype.go)
		return "USER-DEFINED"
	}
	return t.WithTypmod(-1).String()
}

// udtName is the pg_type name of t ("int4", "_numeric").
func udtName(t types.T) string {
	if t.Kind == types.Array {
		return "_" + udtName(*t.Elem)
	}
	if pt := pgTypeByOID(t.OID()); pt != nil {
		return pt.name
	}
	return t.String()
}

// typeFacts fills the length, precision and scale columns of
// information_schema.columns as PostgreSQL does.
func typeFacts(t types.T, r row) {
	const maxOctets = 1073741824
	switch t.Kind {
	case types.Varchar, types.Bpchar:
		if t.Typmod >= 4 {
			r["character_maximum_length"] = int(t.Typmod - 4)
			r["character_octet_length"] = int(t.Typmod-4) * 4
		} else if t.Kind == types.Bpchar {
			r["character_maximum_length"], r["character_octet_length"] = 1, 4
		} else {
			r["character_octet_length"] = maxOctets
		}
	case types.Text:
		r["character_octet_length"] = maxOctets
	case types.Int2, types.Int4, types.Int8:
		r["numeric_precision"] = map[types.Kind]int{types.Int2: 16, types.Int4: 32, types.Int8: 64}[t.Kind]
		r["numeric_precision_radix"], r["numeric_scale"] = 2, 0
	case types.Float4, types.Float8:
		r["numeric_precision"] = map[types.Kind]int{types.Float4: 24, types.Float8: 53}[t.Kind]
		r["numeric_precision_radix"] = 2
	case types.Numeric:
		r["numeric_precision_radix"] = 10
		if t.Typmod >= 4 {
			m := t.Typmod - 4
			r["numeric_precision"], r["numeric_scale"] = int((m>>16)&0xffff), int(m&0xffff)
		}
	case types.Date:
		r["datetime_precision"] = 0
	case types.Time, types.Timestamp, types.TimestampTZ, types.Interval:
		p := 6
		if t.Typmod >= 0 && t.Kind != types.Interval {
			p = int(t.Typmod)
		}
		r["datetime_precision"] = p
	}
}

func isColumnsRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	db := dbName(ctx)
	for _, rel := range s.sortedRelations() {
		if rel.Kind == KindMatView {
			continue // as in PostgreSQL: its columns view lists relkinds r, v, f and p only
		}
		for i, col := range rel.Columns {
			r := row{
				"table_catalog": db, "table_schema": rel.Schema, "table_name": rel.Name, "column_name": col.Name,
				"ordinal_position": i + 1, "column_default": nullIfEmpty(shownDefault(col)), "is_nullable": yesNo(!col.NotNull),
				"data_type": sqlDataType(col.Type), "udt_catalog": db, "udt_schema": "pg_catalog",
				"udt_name": udtName(col.Type), "dtd_identifier": strconv.Itoa(i + 1), "is_self_referencing": "NO",
				"is_identity": "NO", "identity_cycle": "NO", "is_generated": "NEVER",
				"is_updatable": yesNo(rel.Kind == KindTable),
			}
			if ut := col.Type; ut.Kind != types.Array || ut.Elem != nil {
				if ut.Kind == types.Array {
					ut = *ut.Elem
				}
				if sc := ut.UserTypeSchema(); sc != "" { // usertype.go: the type's own schema
					r["udt_schema"] = sc
				}
			}
			if col.Identity != 0 {
				r["is_identity"] = "YES"
				r["identity_generation"] = map[byte]string{'a': "ALWAYS", 'd': "BY DEFAULT"}[col.Identity]
			}
			if col.Generated != "" {
				r["is_generated"], r["generation_expression"] = "ALWAYS", generationText(col.Generated)
			}
			typeFacts(col.Type, r)
			if err := b.add(r); err != nil {
				return err
			}
		}
	}
	return nil
}

func isSchemataRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, sc := range s.sortedSchemas() {
		if err := b.add(row{"catalog_name": dbName(ctx), "schema_name": sc.Name, "schema_owner": userName(ctx)}); err != nil {
			return err
		}
	}
	return nil
}

func isViewsRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range s.sortedRelations() {
		if r.Kind != KindView && r.Kind != KindSystem {
			continue
		}
		err := b.add(row{
			"table_catalog": dbName(ctx), "table_schema": r.Schema, "table_name": r.Name,
			"view_definition": nullIfEmpty(viewDef(r)), "check_option": "NONE", "is_updatable": "NO",
			"is_insertable_into": "NO", "is_trigger_updatable": "NO", "is_trigger_deletable": "NO",
			"is_trigger_insertable_into": "NO",
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// isTableConstraintsRows lists primary keys, UNIQUE constraints and, as PostgreSQL 15 does,
// each NOT NULL column as a CHECK constraint named
// <schema oid>_<table oid>_<attnum>_not_null.
func isTableConstraintsRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	db := dbName(ctx)
	for _, r := range s.sortedRelations() {
		if r.Kind != KindTable {
			continue
		}
		base := row{"constraint_catalog": db, "constraint_schema": r.Schema, "table_catalog": db, "table_schema": r.Schema,
			"table_name": r.Name, "is_deferrable": "NO", "initially_deferred": "NO", "enforced": "YES"}
		for _, x := range r.keyIndexes() {
			kind := "UNIQUE"
			if x.primary {
				kind = "PRIMARY KEY"
			}
			pk := row{"constraint_name": x.name, "constraint_type": kind}
			for k, v := range base {
				pk[k] = v
			}
			if err := b.add(pk); err != nil {
				return err
			}
		}
		for i, col := range r.Columns {
			if !col.NotNull {
				continue
			}
			nn := row{"constraint_name": fmt.Sprintf("%d_%d_%d_not_null", s.schemaOID(r.Schema), r.OID, i+1), "constraint_type": "CHECK"}
			for k, v := range base {
				nn[k] = v
			}
			if err := b.add(nn); err != nil {
				return err
			}
		}
		if err := isTableConstraintsMore(r, base, b); err != nil { // constraints_sys.go
			return err
		}
	}
	return nil
}

func isKeyColumnUsageRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	db := dbName(ctx)
	for _, r := range s.sortedRelations() {
		for _, x := range r.keyIndexes() {
			for i, k := range x.cols {
				err := b.add(row{
					"constraint_catalog": db, "constraint_schema": r.Schema, "constraint_name": x.name,
					"table_catalog": db, "table_schema": r.Schema, "table_name": r.Name,
					"column_name": r.Columns[k].Name, "ordinal_position": i + 1,
				})
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func isConstraintColumnUsageRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	db := dbName(ctx)
	for _, r := range s.sortedRelations() {
		for _, x := range r.keyIndexes() {
			for _, k := range x.cols {
				err := b.add(row{
					"table_catalog": db, "table_schema": r.Schema, "table_name": r.Name, "column_name": r.Columns[k].Name,
					"constraint_catalog": db, "constraint_schema": r.Schema, "constraint_name": x.name,
				})
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// generationText is a generation expression as pg_get_expr prints it
// without pretty-printing: an operator expression in parentheses, a
// column or function call as it is.
func generationText(e string) string {
	if isPlainCall(e) {
		return e
	}
	return "(" + e + ")"
}

// isPlainCall reports a column name or a single function call f(...).
func isPlainCall(e string) bool {
	i := 0
	for i < len(e) && (e[i] == '_' || e[i] >= 'a' && e[i] <= 'z' || e[i] >= '0' && e[i] <= '9' && i > 0) {
		i++
	}
	if i == 0 {
		return false
	}
	if i == len(e) {
		return true
	}
	if e[i] != '(' || e[len(e)-1] != ')' {
		return false
	}
	depth := 0
	for k := i; k < len(e); k++ {
		switch e[k] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 && k != len(e)-1 {
				return false
			}
		}
	}
	return true
}
