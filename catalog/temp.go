package catalog

import (
	"strings"
)

// Temporary relations (CREATE TEMP TABLE / VIEW / SEQUENCE) live, as in
// PostgreSQL, in a schema of their session named pg_temp_N: the session
// puts it first on its search path (before pg_catalog, unless the path
// names pg_temp elsewhere) and drops it, with everything in it, when it
// ends. The schema is created with the session's first temporary relation.
// A server that stopped without dropping them (a crash) drops every
// pg_temp_N schema when it opens the catalog again.

// TempSchemaPrefix starts the name of every session's temporary schema.
const TempSchemaPrefix = "pg_temp_"

// IsTempSchema reports whether name is a session's temporary schema.
func IsTempSchema(name string) bool { return strings.HasPrefix(name, TempSchemaPrefix) }

// IsTemp reports whether r is a temporary relation.
func (r *Relation) IsTemp() bool { return IsTempSchema(r.Schema) }

// ensureTempSchema creates temporary schema name in s if it is one and is
// missing.
func (s *snapshot) ensureTempSchema(name string) {
	if !IsTempSchema(name) || s.schemas[name] != nil {
		return
	}
	s.schemas[name] = &Schema{OID: s.allocOID(), Name: name}
	s.rels[name] = map[string]*Relation{}
}

// tempAlias maps the alias pg_temp to the session's temporary schema, the
// one on searchPath (the session puts it there once it exists); other
// names are returned as they are. Without a temporary schema, pg_temp
// stays: it names no schema, so lookups find nothing in it.
func tempAlias(schema string, searchPath []string) string {
	if schema != "pg_temp" {
		return schema
	}
	for _, p := range searchPath {
		if IsTempSchema(p) {
			return p
		}
	}
	return schema
}

// dropTempSchemas removes the temporary schemas a previous run left (and
// the relations in them) from a freshly loaded snapshot; it reports
// whether there were any. Their stored tables become orphans, which
// reconcile drops.
func (c *Catalog) dropTempSchemas(s *snapshot) bool {
	found := false
	for name := range s.schemas {
		if !IsTempSchema(name) {
			continue
		}
		found = true
		for _, r := range s.rels[name] {
			s.remove(r)
			if r.Kind == KindSequence {
				c.dropSeqState(r.OID)
			}
		}
		delete(s.rels, name)
		delete(s.schemas, name)
	}
	return found
}

// persistence is pg_class.relpersistence: t for temporary, else p.
func persistence(r *Relation) string {
	if r.IsTemp() {
		return "t"
	}
	return "p"
}
