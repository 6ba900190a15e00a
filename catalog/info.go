package catalog

import (
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// The expr.CatalogInfo implementation: what SQL functions and reg* casts
// ask of the catalog. All methods read one snapshot and are safe for
// concurrent use.

var _ expr.CatalogInfo = (*Catalog)(nil)

// RelationOID resolves a regclass input: a possibly qualified, possibly
// quoted name, or a number (taken as an OID as is).
func (c *Catalog) RelationOID(name string, searchPath []string) (uint32, error) {
	if n, err := strconv.ParseUint(strings.TrimSpace(name), 10, 32); err == nil {
		return uint32(n), nil
	}
	parts, err := parseQualifiedName(name)
	if err != nil {
		return 0, err
	}
	s := c.snap()
	switch len(parts) {
	case 1:
		if oid := s.lookupAny(parts[0], searchPath); oid != 0 {
			return oid, nil
		}
		return 0, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", parts[0])
	case 2, 3:
		// database.schema.name: the database part is not checked.
		sc, rel := parts[len(parts)-2], parts[len(parts)-1]
		if s.schemas[sc] == nil {
			return 0, pgerr.New(pgerr.UndefinedSchema, "schema \"%s\" does not exist", sc)
		}
		if r := s.rels[sc][rel]; r != nil {
			return r.OID, nil
		}
		if oid := s.indexByName(sc, rel); oid != 0 {
			return oid, nil
		}
		return 0, pgerr.New(pgerr.UndefinedTable, "relation \"%s.%s\" does not exist", sc, rel)
	}
	return 0, pgerr.New("42601", "improper relation name (too many dotted names): %s", name)
}

// RelationName renders a relation OID as regclass output does; ok is false
// for an unknown OID (regclass then prints the number).
func (c *Catalog) RelationName(oid uint32, searchPath []string) (string, bool) {
	s := c.snap()
	if _, _, ok := s.nameOf(oid); !ok {
		return "", false
	}
	return s.displayName(oid, searchPath), true
}

// TypeOID resolves a type name as a regtype cast does: SQL names
// ("integer", "character varying"), internal names ("int4", "_int4"),
// "pg_catalog."-qualified names, "[]" suffixes, and relation row types.
func (c *Catalog) TypeOID(name string) (uint32, error) {
	n := strings.TrimSpace(strings.ToLower(name))
	n = strings.TrimPrefix(n, "pg_catalog.")
	if oid, ok := typeOIDByName(n); ok {
		return oid, nil
	}
	s := c.snap()
	for _, r := range s.byOID {
		if r.RowTypeOID != 0 && (r.Name == n || r.Schema+"."+r.Name == n) {
			return r.RowTypeOID, nil
		}
	}
	for _, d := range s.domains { // domain.go
		if d.Name == n || d.Schema+"."+d.Name == n {
			return d.OID, nil
		}
	}
	if oid, ok := s.userTypeOID(n); ok { // usertype.go
		return oid, nil
	}
	return 0, pgerr.New(pgerr.UndefinedObject, "type \"%s\" does not exist", name)
}

// typeOIDByName finds a built-in type by any of its names.
func typeOIDByName(n string) (uint32, bool) {
	array := false
	if strings.HasSuffix(n, "[]") {
		array = true
		n = strings.TrimSpace(strings.TrimSuffix(n, "[]"))
	}
	if p := strings.IndexByte(n, '('); p > 0 { // varchar(10), numeric(10,2)
		n = strings.TrimSpace(n[:p])
	}
	for _, pt := range pgTypes {
		if pt.name == n || pt.t.String() == n || aliasOf(n) == pt.name {
			if array {
				return arrayOID(pt.t), arrayOID(pt.t) != 0
			}
			return pt.oid, true
		}
		if !array && "_"+pt.name == n && arrayOID(pt.t) != 0 {
			return arrayOID(pt.t), true
		}
	}
	return 0, false
}

// aliasOf maps SQL spellings to pg_type names.
func aliasOf(n string) string {
	switch n {
	case "int", "integer":
		return "int4"
	case "smallint":
		return "int2"
	case "bigint":
		return "int8"
	case "real", "float":
		return "float4"
	case "double precision":
		return "float8"
	case "boolean":
		return "bool"
	case "decimal":
		return "numeric"
	case "character varying":
		return "varchar"
	case "character", "char":
		return "bpchar"
	case "timestamp without time zone":
		return "timestamp"
	case "timestamp with time zone":
		return "timestamptz"
	case "time without time zone":
		return "time"
	case `"char"`:
		return "char"
	}
	return ""
}

// TableIsVisible implements pg_table_is_visible: an unqualified reference
// to the relation's name finds it. Unknown OIDs are not visible.
func (c *Catalog) TableIsVisible(oid uint32, searchPath []string) bool {
	return c.snap().visible(oid, searchPath)
}

// ColumnDefault returns the default expression of column attnum (1-based)
// of a relation, as pg_get_expr shows it.
func (c *Catalog) ColumnDefault(relOID uint32, attnum int16) (string, bool) {
	r := c.snap().byOID[relOID]
	if r == nil || attnum < 1 || int(attnum) > len(r.Columns) || r.Columns[attnum-1].Default == "" {
		return "", false
	}
	return shownDefault(r.Columns[attnum-1]), true
}

// ViewDefinition returns a view's query as pg_get_viewdef does.
func (c *Catalog) ViewDefinition(oid uint32) (string, bool) {
	r := c.snap().byOID[oid]
	if r == nil || (r.Kind != KindView && r.Kind != KindMatView) {
		return "", false
	}
	return viewDef(r), true
}

// viewDef renders a view's stored query the way PostgreSQL frames a view
// definition (a leading space, a closing semicolon); the query itself is
// the stored text, not PostgreSQL's re-printed form.
func viewDef(r *Relation) string {
	q := strings.TrimSpace(r.ViewQuery)
	if q == "" {
		return ""
	}
	return " " + strings.TrimSuffix(q, ";") + ";"
}

// ObjectDescription returns the comment on an object (subID 0) or a column.
func (c *Catalog) ObjectDescription(oid uint32, subID int32) (string, bool) {
	t, ok := c.snap().comments[objKey{oid, subID}]
	return t, ok
}

// UserName renders a role OID as pg_get_userbyid does.
func (c *Catalog) UserName(oid uint32) string { return userNameOf(oid) }

func userNameOf(oid uint32) string {
	switch oid {
	case SuperuserOID:
		return SuperuserName
	case DatabaseOwnerOID:
		return "pg_database_owner"
	}
	return "unknown (OID=" + strconv.FormatUint(uint64(oid), 10) + ")"
}

// SuperuserName is the name of the single role.
const SuperuserName = "streamsql"

// RegNames returns a types.FormatOptions.Names function: it names OIDs for
// regclass (qualified when not visible on searchPath), regtype (as
// format_type without modifier) and regproc output. Safe for concurrent use.
func (c *Catalog) RegNames(searchPath []string) func(k types.Kind, oid uint32) (string, bool) {
	return func(k types.Kind, oid uint32) (string, bool) {
		switch k {
		case types.RegClass:
			return c.RelationName(oid, searchPath)
		case types.RegType:
			if _, ok := types.FromOID(oid); ok {
				return formatTypeOf(c, searchPath, oid, -1, false), true
			}
			s := c.snap()
			for _, r := range s.byOID {
				if r.RowTypeOID == oid {
					return s.displayName(r.OID, searchPath), true
				}
			}
			if s.domains[oid] != nil { // domain.go
				return formatTypeOf(c, searchPath, oid, -1, false), true
			}
			if n, ok := s.userTypeName(oid, searchPath); ok { // usertype.go
				return n, true
			}
		case types.RegProc:
			if n, ok := ProcName(oid); ok {
				return n, true
			}
			if f := c.Function(oid); f != nil {
				if userFunctionVisible(c, f, searchPath) {
					return QuoteIdent(f.Name), true
				}
				return QuoteIdent(f.Schema) + "." + QuoteIdent(f.Name), true
			}
		}
		return "", false
	}
}

// RegOIDs returns a types.FormatOptions.OIDs function resolving regclass,
// regtype and regproc input names, with PostgreSQL's errors for unknown
// names. Safe for concurrent use.
func (c *Catalog) RegOIDs(searchPath []string) func(k types.Kind, name string) (uint32, error) {
	return func(k types.Kind, name string) (uint32, error) {
		switch k {
		case types.RegClass:
			return c.RelationOID(name, searchPath)
		case types.RegType:
			return c.TypeOID(name)
		}
		if oid, ok := ProcOID(strings.TrimSpace(name)); ok {
			return oid, nil
		}
		schema, bare := "", strings.TrimSpace(name)
		if i := strings.LastIndexByte(bare, '.'); i > 0 {
			schema, bare = bare[:i], bare[i+1:]
		}
		switch fns := c.Functions(schema, bare, searchPath); len(fns) {
		case 1:
			return fns[0].OID, nil
		case 0:
		default:
			return 0, pgerr.New(pgerr.AmbiguousFunction, "more than one function named \"%s\"", name)
		}
		return 0, pgerr.New(pgerr.UndefinedFunction, "function \"%s\" does not exist", name)
	}
}
