package catalog

import (
	"strings"

	"github.com/streamsql/streamsql/pgerr"
)

// effectivePath is the list of existing schemas searched for an unqualified
// name: pg_catalog first unless the path names it explicitly (as PostgreSQL
// does), then the path's entries in order; "$user" and unknown schemas are
// skipped. A session's temporary schema leading the path (where the session
// puts it unless its search_path names pg_temp elsewhere) stays ahead of
// pg_catalog, as PostgreSQL searches it.
func (s *snapshot) effectivePath(searchPath []string) []string {
	out := make([]string, 0, len(searchPath)+1)
	if len(searchPath) > 0 && IsTempSchema(searchPath[0]) {
		if s.schemas[searchPath[0]] != nil {
			out = append(out, searchPath[0])
		}
		searchPath = searchPath[1:]
	}
	explicit := false
	for _, n := range searchPath {
		if n == "pg_catalog" {
			explicit = true
		}
	}
	if !explicit {
		out = append(out, "pg_catalog")
	}
	for _, n := range searchPath {
		if n == "$user" || s.schemas[n] == nil {
			continue
		}
		out = append(out, n)
	}
	return out
}

// Resolve finds a relation by name; schema "" searches pg_catalog then
// searchPath. Errors: 3F000 `schema "s" does not exist` for a qualified name
// in a missing schema, 42P01 `relation "x" does not exist`.
func (c *Catalog) Resolve(schema, name string, searchPath []string) (*Relation, error) {
	return c.snap().resolve(schema, name, searchPath)
}

func (s *snapshot) resolve(schema, name string, searchPath []string) (*Relation, error) {
	schema = tempAlias(schema, searchPath)
	if schema != "" {
		m, ok := s.rels[schema]
		if !ok {
			return nil, pgerr.New(pgerr.UndefinedSchema, "schema \"%s\" does not exist", schema)
		}
		if r := m[name]; r != nil {
			return r, nil
		}
		return nil, pgerr.New(pgerr.UndefinedTable, "relation \"%s.%s\" does not exist", schema, name)
	}
	if r := s.lookup(name, searchPath); r != nil {
		return r, nil
	}
	return nil, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", name)
}

// lookup finds an unqualified name along the path; nil if absent.
func (s *snapshot) lookup(name string, searchPath []string) *Relation {
	for _, sc := range s.effectivePath(searchPath) {
		if r := s.rels[sc][name]; r != nil {
			return r
		}
	}
	return nil
}

// lookupAny finds a relation or a primary key index by unqualified name
// along the path, returning its OID (0 if absent) and schema.
func (s *snapshot) lookupAny(name string, searchPath []string) uint32 {
	for _, sc := range s.effectivePath(searchPath) {
		if r := s.rels[sc][name]; r != nil {
			return r.OID
		}
		if oid := s.indexByName(sc, name); oid != 0 {
			return oid
		}
	}
	return 0
}

// indexByName finds a key index in a schema; 0 if none.
func (s *snapshot) indexByName(schema, name string) uint32 {
	for oid, r := range s.indexes {
		if k, ok := r.keyIndex(oid); ok && r.Schema == schema && k.name == name {
			return oid
		}
	}
	return 0
}

// nameOf returns the schema and name of a relation or index OID.
func (s *snapshot) nameOf(oid uint32) (schema, name string, ok bool) {
	if r := s.byOID[oid]; r != nil {
		return r.Schema, r.Name, true
	}
	if r := s.indexes[oid]; r != nil {
		k, _ := r.keyIndex(oid)
		return r.Schema, k.name, true
	}
	return "", "", false
}

// visible reports whether an unqualified reference to the object finds it.
func (s *snapshot) visible(oid uint32, searchPath []string) bool {
	_, name, ok := s.nameOf(oid)
	return ok && s.lookupAny(name, searchPath) == oid
}

// displayName renders a relation's name as regclass output and dependency
// messages do: qualified (and quoted as needed) unless visible.
func (s *snapshot) displayName(oid uint32, searchPath []string) string {
	schema, name, ok := s.nameOf(oid)
	if !ok {
		return ""
	}
	if s.visible(oid, searchPath) {
		return QuoteIdent(name)
	}
	return QuoteIdent(schema) + "." + QuoteIdent(name)
}

// QuoteIdent quotes an identifier when PostgreSQL's quote_ident would: when
// it is not all lower-case letters, digits and underscores starting with a
// letter or underscore, or is a reserved keyword.
func QuoteIdent(s string) string {
	safe := s != "" && (s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z'))
	for i := 0; safe && i < len(s); i++ {
		ch := s[i]
		safe = ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')
	}
	if safe && !reservedWords[s] {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// reservedWords are the keywords quote_ident quotes (PostgreSQL's reserved
// and column-name keywords most likely to be used as names).
var reservedWords = map[string]bool{
	"all": true, "analyse": true, "analyze": true, "and": true, "any": true, "array": true, "as": true,
	"asc": true, "asymmetric": true, "both": true, "case": true, "cast": true, "check": true, "collate": true,
	"column": true, "constraint": true, "create": true, "current_catalog": true, "current_date": true,
	"current_role": true, "current_time": true, "current_timestamp": true, "current_user": true,
	"default": true, "deferrable": true, "desc": true, "distinct": true, "do": true, "else": true,
	"end": true, "except": true, "false": true, "fetch": true, "for": true, "foreign": true, "from": true,
	"grant": true, "group": true, "having": true, "in": true, "initially": true, "intersect": true,
	"into": true, "lateral": true, "leading": true, "limit": true, "localtime": true, "localtimestamp": true,
	"not": true, "null": true, "offset": true, "on": true, "only": true, "or": true, "order": true,
	"placing": true, "primary": true, "references": true, "returning": true, "select": true,
	"session_user": true, "some": true, "symmetric": true, "table": true, "then": true, "to": true,
	"trailing": true, "true": true, "union": true, "unique": true, "user": true, "using": true,
	"variadic": true, "when": true, "where": true, "window": true, "with": true,
	// column-name and type-function-name keywords commonly hit
	"between": true, "bigint": true, "bit": true, "boolean": true, "char": true, "character": true,
	"coalesce": true, "dec": true, "decimal": true, "exists": true, "extract": true, "float": true,
	"greatest": true, "inout": true, "int": true, "integer": true, "interval": true, "least": true,
	"national": true, "nchar": true, "none": true, "nullif": true, "numeric": true, "out": true,
	"overlay": true, "position": true, "precision": true, "real": true, "row": true, "setof": true,
	"smallint": true, "substring": true, "time": true, "timestamp": true, "treat": true, "trim": true,
	"values": true, "varchar": true, "xmlattributes": true,
	"authorization": true, "binary": true, "collation": true, "concurrently": true, "cross": true,
	"current_schema": true, "freeze": true, "full": true, "ilike": true, "inner": true, "is": true,
	"isnull": true, "join": true, "left": true, "like": true, "natural": true, "notnull": true,
	"outer": true, "overlaps": true, "right": true, "similar": true, "tablesample": true, "verbose": true,
}

// parseQualifiedName splits a possibly qualified, possibly quoted name as
// regclass input does: unquoted parts are lower-cased, "" in a quoted part is
// a quote. Errors are 42602 `invalid name syntax`.
func parseQualifiedName(s string) ([]string, error) {
	bad := pgerr.New("42602", "invalid name syntax")
	var parts []string
	i := 0
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		var part strings.Builder
		if i < len(s) && s[i] == '"' {
			i++
			for {
				if i >= len(s) {
					return nil, bad
				}
				if s[i] == '"' {
					if i+1 < len(s) && s[i+1] == '"' {
						part.WriteByte('"')
						i += 2
						continue
					}
					i++
					break
				}
				part.WriteByte(s[i])
				i++
			}
		} else {
			start := i
			for i < len(s) && s[i] != '.' && s[i] != ' ' && s[i] != '"' {
				i++
			}
			if i == start {
				return nil, bad
			}
			part.WriteString(strings.ToLower(s[start:i]))
		}
		parts = append(parts, part.String())
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i == len(s) {
			return parts, nil
		}
		if s[i] != '.' {
			return nil, bad
		}
		i++
	}
}
