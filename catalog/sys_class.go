package catalog

import (
	"sort"
	"strings"

	"github.com/streamsql/streamsql/types"
)

// Rows of pg_namespace, pg_class, pg_attribute, pg_attrdef, pg_index,
// pg_constraint and pg_description: the relations, their columns and keys.

// PostgreSQL OIDs used in these rows.
const (
	pgClassOID      uint32 = 1259
	pgNamespaceOID  uint32 = 2615
	pgConstraintOID uint32 = 2606
	pgExtensionOID  uint32 = 3079
	heapAMOID       uint32 = 2
	btreeAMOID      uint32 = 403
)

func init() {
	registerRows("pg_catalog.pg_namespace", pgNamespaceRows)
	registerRows("pg_catalog.pg_class", pgClassRows)
	registerRows("pg_catalog.pg_attribute", pgAttributeRows)
	registerRows("pg_catalog.pg_attrdef", pgAttrdefRows)
	registerRows("pg_catalog.pg_index", pgIndexRows)
	registerRows("pg_catalog.pg_constraint", pgConstraintRows)
	registerRows("pg_catalog.pg_description", pgDescriptionRows)
}

func pgNamespaceRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, sc := range s.sortedSchemas() {
		owner := SuperuserOID
		if sc.OID == PublicOID { // as in PostgreSQL 15
			owner = DatabaseOwnerOID
		}
		if err := b.add(row{"oid": sc.OID, "nspname": sc.Name, "nspowner": owner}); err != nil {
			return err
		}
	}
	return nil
}

func pgClassRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range s.sortedRelations() {
		relam, filenode := uint32(0), uint32(0)
		tuples := float32(-1)
		if r.Kind == KindTable {
			relam, filenode = heapAMOID, r.OID
			if t := c.store.Table(r.OID); t != nil {
				tuples = float32(t.RowCount())
			}
		}
		replident := "n"
		if r.Kind == KindTable {
			replident = "d"
		}
		err := b.add(row{
			"oid": r.OID, "relname": r.Name, "relnamespace": s.schemaOID(r.Schema), "reltype": r.RowTypeOID,
			"reloftype": uint32(0), "relowner": SuperuserOID, "relam": relam, "relfilenode": filenode,
			"reltablespace": uint32(0), "relpages": 0, "reltuples": tuples, "relallvisible": 0,
			"reltoastrelid": uint32(0), "relhasindex": r.PKIndexOID != 0, "relisshared": false,
			"relpersistence": "p", "relkind": pgRelKind(r.Kind), "relnatts": len(r.Columns), "relchecks": 0,
			"relhasrules": r.Kind == KindView, "relhastriggers": false, "relhassubclass": false,
			"relrowsecurity": false, "relforcerowsecurity": false, "relispopulated": true,
			"relreplident": replident, "relispartition": false, "relrewrite": uint32(0),
			"relfrozenxid": uint32(0), "relminmxid": uint32(0),
		})
		if err != nil {
			return err
		}
		if r.PKIndexOID != 0 {
			err := b.add(row{
				"oid": r.PKIndexOID, "relname": r.PKName, "relnamespace": s.schemaOID(r.Schema), "reltype": uint32(0),
				"reloftype": uint32(0), "relowner": SuperuserOID, "relam": btreeAMOID, "relfilenode": r.PKIndexOID,
				"reltablespace": uint32(0), "relpages": 1, "reltuples": float32(0), "relallvisible": 0,
				"reltoastrelid": uint32(0), "relhasindex": false, "relisshared": false,
				"relpersistence": "p", "relkind": "i", "relnatts": len(r.PrimaryKey), "relchecks": 0,
				"relhasrules": false, "relhastriggers": false, "relhassubclass": false,
				"relrowsecurity": false, "relforcerowsecurity": false, "relispopulated": true,
				"relreplident": "n", "relispartition": false, "relrewrite": uint32(0),
				"relfrozenxid": uint32(0), "relminmxid": uint32(0),
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// attributeRow is one pg_attribute row.
func attributeRow(rel uint32, num int, name string, t types.T, notNull, hasDef bool) row {
	ndims := 0
	elem := t
	if t.Kind == types.Array {
		ndims, elem = 1, *t.Elem
	}
	align, storage, byVal := "i", "p", false
	if pt := pgTypeByOID(elem.OID()); pt != nil {
		align, storage, byVal = string(pt.align), string(pt.storage), pt.byVal
	}
	length := t.Len()
	if ndims > 0 {
		align, storage, byVal, length = alignOfArray(elem), "x", false, -1
	}
	return row{
		"attrelid": rel, "attname": name, "atttypid": t.OID(), "attstattarget": -1, "attlen": length,
		"attnum": num, "attndims": ndims, "attcacheoff": -1, "atttypmod": attTypmod(t), "attbyval": byVal,
		"attalign": align, "attstorage": storage, "attcompression": "", "attnotnull": notNull,
		"atthasdef": hasDef, "atthasmissing": false, "attidentity": "", "attgenerated": "",
		"attisdropped": false, "attislocal": true, "attinhcount": 0, "attcollation": collationOf(t),
	}
}

// alignOfArray is the typalign of an array type: 'd' over 8-byte-aligned elements.
func alignOfArray(elem types.T) string {
	if pt := pgTypeByOID(elem.OID()); pt != nil && pt.align == 'd' {
		return "d"
	}
	return "i"
}

func pgAttributeRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range s.sortedRelations() {
		for i, col := range r.Columns {
			if err := b.add(attributeRow(r.OID, i+1, col.Name, col.Type, col.NotNull, col.Default != "")); err != nil {
				return err
			}
		}
		for i, k := range r.PrimaryKey {
			col := r.Columns[k]
			if err := b.add(attributeRow(r.PKIndexOID, i+1, col.Name, col.Type, false, false)); err != nil {
				return err
			}
		}
	}
	return nil
}

func pgAttrdefRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range s.sortedRelations() {
		for i, col := range r.Columns {
			if col.Default == "" {
				continue
			}
			// adbin holds the expression text, which pg_get_expr returns as is.
			if err := b.add(row{"oid": uint32(0), "adrelid": r.OID, "adnum": i + 1, "adbin": shownDefault(col)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyAttnums lists a primary key's 1-based column numbers.
func keyAttnums(r *Relation) []int16 {
	out := make([]int16, len(r.PrimaryKey))
	for i, k := range r.PrimaryKey {
		out[i] = int16(k + 1)
	}
	return out
}

func pgIndexRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range s.sortedRelations() {
		if r.PKIndexOID == 0 {
			continue
		}
		n := len(r.PrimaryKey)
		colls, classes, opts := make([]uint32, n), make([]uint32, n), make([]int16, n)
		for i, k := range r.PrimaryKey {
			colls[i] = collationOf(r.Columns[k].Type)
		}
		err := b.add(row{
			"indexrelid": r.PKIndexOID, "indrelid": r.OID, "indnatts": n, "indnkeyatts": n,
			"indisunique": true, "indnullsnotdistinct": false, "indisprimary": true, "indisexclusion": false,
			"indimmediate": true, "indisclustered": false, "indisvalid": true, "indcheckxmin": false,
			"indisready": true, "indislive": true, "indisreplident": false, "indkey": keyAttnums(r),
			"indcollation": colls, "indclass": classes, "indoption": opts,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// The primary key constraint's OID is its index's OID (OIDs are unique per
// system catalog in PostgreSQL, so pg_constraint may share pg_class's).
func pgConstraintRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range s.sortedRelations() {
		if r.PKIndexOID == 0 {
			continue
		}
		err := b.add(row{
			"oid": r.PKIndexOID, "conname": r.PKName, "connamespace": s.schemaOID(r.Schema), "contype": "p",
			"condeferrable": false, "condeferred": false, "convalidated": true, "conrelid": r.OID,
			"contypid": uint32(0), "conindid": r.PKIndexOID, "conparentid": uint32(0), "confrelid": uint32(0),
			"confupdtype": " ", "confdeltype": " ", "confmatchtype": " ", "conislocal": true,
			"coninhcount": 0, "connoinherit": true, "conkey": keyAttnums(r),
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// constraintDef renders a primary key as pg_get_constraintdef does.
func constraintDef(r *Relation) string {
	names := make([]string, len(r.PrimaryKey))
	for i, k := range r.PrimaryKey {
		names[i] = QuoteIdent(r.Columns[k].Name)
	}
	return "PRIMARY KEY (" + strings.Join(names, ", ") + ")"
}

// indexDef renders a primary key's index as pg_get_indexdef does; table is
// the table's name as it should appear (qualified or not).
func indexDef(r *Relation, table string) string {
	names := make([]string, len(r.PrimaryKey))
	for i, k := range r.PrimaryKey {
		names[i] = QuoteIdent(r.Columns[k].Name)
	}
	return "CREATE UNIQUE INDEX " + QuoteIdent(r.PKName) + " ON " + table +
		" USING btree (" + strings.Join(names, ", ") + ")"
}

func pgDescriptionRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	keys := make([]objKey, 0, len(s.comments))
	for k := range s.comments {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].OID != keys[j].OID {
			return keys[i].OID < keys[j].OID
		}
		return keys[i].Sub < keys[j].Sub
	})
	schemaOIDs := map[uint32]bool{}
	for _, sc := range s.schemas {
		schemaOIDs[sc.OID] = true
	}
	if err := b.add(row{"objoid": plpgsqlExtOID, "classoid": pgExtensionOID, "objsubid": 0, "description": "PL/pgSQL procedural language"}); err != nil {
		return err
	}
	for _, k := range keys {
		class := pgClassOID
		if schemaOIDs[k.OID] {
			class = pgNamespaceOID
		}
		if err := b.add(row{"objoid": k.OID, "classoid": class, "objsubid": k.Sub, "description": s.comments[k]}); err != nil {
			return err
		}
	}
	return nil
}
