package catalog

import (
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// sysDef is a system relation's identity and columns.
type sysDef struct {
	oid    uint32
	schema string
	name   string
	cols   []Column
}

// Column types of the system relations (PostgreSQL's internal types map to
// the closest type streamsql has: int2vector -> smallint[], oidvector and
// xid -> oid, aclitem[] -> text[], pg_node_tree -> text, the
// information_schema domains to their base types).
var (
	tBool    = types.TBool
	tInt2    = types.TInt2
	tInt4    = types.TInt4
	tInt8    = types.TInt8
	tFloat4  = types.TFloat4
	tText    = types.TText
	tVarchar = types.TVarchar
	tName    = types.TName
	tChar    = types.TChar
	tOid     = types.TOid
	tRegProc = types.TRegProc
	tTextArr = types.ArrayOf(types.TText)
	tInt2Arr = types.ArrayOf(types.TInt2)
	tOidArr  = types.ArrayOf(types.TOid)
)

// sysRows fills a system relation's rows from one snapshot.
type sysRows func(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error

// sysRowFuncs maps "schema.name" to the function producing its rows; system
// relations not listed here are always empty (what psql and the drivers
// need of pg_policy, pg_publication, pg_inherits and the like).
var sysRowFuncs = map[string]sysRows{}

// registerRows is called from init functions of the sys_*.go files.
func registerRows(name string, fn sysRows) { sysRowFuncs[name] = fn }

// systemRelations builds the pg_catalog and information_schema relations of c.
func systemRelations(c *Catalog) []*Relation {
	defs := append(append([]sysDef(nil), pgCatalogDefs...), infoSchemaDefs...)
	out := make([]*Relation, 0, len(defs))
	for _, d := range defs {
		d := d
		r := &Relation{OID: d.oid, Schema: d.schema, Name: d.name, Kind: KindSystem, Columns: d.cols}
		cols := r.ColumnTypes()
		fn := sysRowFuncs[d.schema+"."+d.name]
		r.Rows = func(ctx RowsContext) (batches []arrow.RecordBatch, err error) {
			defer func() { // a bug here must not take the server down
				if p := recover(); p != nil {
					batches, err = nil, fmt.Errorf("catalog: building %s.%s: %v", d.schema, d.name, p)
				}
			}()
			b := newRowBuilder(cols)
			if fn != nil {
				if err := fn(c, c.snap(), ctx, b); err != nil {
					return nil, err
				}
			}
			return []arrow.RecordBatch{b.finish()}, nil
		}
		out = append(out, r)
	}
	return out
}

// pgRelKind is pg_class.relkind for a relation.
func pgRelKind(k RelKind) string {
	switch k {
	case KindSystem:
		return "v"
	case KindSource:
		return "f"
	case KindSequence:
		return "S"
	}
	return string(rune(k))
}

// sortedRelations returns every relation of s (system ones included) in
// OID order, except sinks, which only streamsql_sinks lists (sortedSinks).
func (s *snapshot) sortedRelations() []*Relation {
	out := make([]*Relation, 0, len(s.byOID))
	for _, r := range s.byOID {
		if r.Kind != KindSink {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].OID < out[j].OID })
	return out
}

// sortedSchemas returns the schemas of s in OID order.
func (s *snapshot) sortedSchemas() []*Schema {
	out := make([]*Schema, 0, len(s.schemas))
	for _, sc := range s.schemas {
		out = append(out, sc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].OID < out[j].OID })
	return out
}

// schemaOID returns the OID of a schema of s (0 if unknown).
func (s *snapshot) schemaOID(name string) uint32 {
	if sc := s.schemas[name]; sc != nil {
		return sc.OID
	}
	return 0
}

// attTypmod is pg_attribute.atttypmod: an array column carries its
// element's modifier.
func attTypmod(t types.T) int32 {
	if t.Kind == types.Array && t.Typmod < 0 {
		return t.Elem.Typmod
	}
	return t.Typmod
}

// collationOf is pg_attribute.attcollation: "default" (100) for the
// collatable string types, C (950) for name, 0 otherwise.
func collationOf(t types.T) uint32 {
	if t.Kind == types.Array {
		t = *t.Elem
	}
	switch t.Kind {
	case types.Text, types.Varchar, types.Bpchar:
		return 100
	case types.Name:
		return 950
	}
	return 0
}

// userName is the role name shown for SuperuserOID: the session's user, so
// that current_user and pg_roles agree (any user name maps to the one role).
func userName(ctx RowsContext) string {
	if ctx.User != "" {
		return ctx.User
	}
	return SuperuserName
}

// dbName is the current database's name.
func dbName(ctx RowsContext) string {
	if ctx.Database != "" {
		return ctx.Database
	}
	return "streamsql"
}
