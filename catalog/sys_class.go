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
		replident := "n"
		switch r.Kind {
		case KindTable:
			relam, filenode, replident = heapAMOID, r.OID, "d"
			if t := c.store.Table(r.OID); t != nil {
				tuples = float32(t.RowCount())
			}
		case KindMatView: // stored like a table, as in PostgreSQL
			relam, filenode, replident = heapAMOID, r.OID, "d"
		}
		err := b.add(row{
			"oid": r.OID, "relname": r.Name, "relnamespace": s.schemaOID(r.Schema), "reltype": r.RowTypeOID,
			"reloftype": uint32(0), "relowner": r.OwnerOID(), "relacl": relACL(c, r, ctx), "relam": relam, "relfilenode": filenode,
			"reltablespace": uint32(0), "relpages": 0, "reltuples": tuples, "relallvisible": 0,
			"reltoastrelid": uint32(0), "relhasindex": len(r.keyIndexes()) > 0, "relisshared": false,
			"relpersistence": persistence(r), "relkind": pgRelKind(r.Kind), "relnatts": len(r.Columns), "relchecks": len(r.Checks),
			"relhasrules": r.Kind == KindView || r.Kind == KindMatView, "relhastriggers": s.hasFKTriggers(r), "relhassubclass": false, // constraints_sys.go "relhassubclass": false,
			"relrowsecurity": false, "relforcerowsecurity": false, "relispopulated": true,
			"relreplident": replident, "relispartition": false, "relrewrite": uint32(0),
			"relfrozenxid": uint32(0), "relminmxid": uint32(0), "reloptions": relOptions(r),
		})
		if err != nil {
			return err
		}
		for _, k := range r.keyIndexes() {
			err := b.add(row{
				"oid": k.oid, "relname": k.name, "relnamespace": s.schemaOID(r.Schema), "reltype": uint32(0),
				"reloftype": uint32(0), "relowner": r.OwnerOID(), "relam": btreeAMOID, "relfilenode": k.oid,
				"reltablespace": uint32(0), "relpages": 1, "reltuples": float32(0), "relallvisible": 0,
				"reltoastrelid": uint32(0), "relhasindex": false, "relisshared": false,
				"relpersistence": persistence(r), "relkind": "i", "relnatts": len(k.cols), "relchecks": 0,
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

// relACL is pg_class.relacl in its text form; NULL for the default ACL.
func relACL(c *Catalog, r *Relation, ctx RowsContext) any {
	if r.ACL == nil {
		return nil
	}
	return c.ACLText(r.ACL, ctx.User)
}

// relOptions is pg_class.reloptions: a table's storage parameters, NULL
// for none.
func relOptions(r *Relation) any {
	if len(r.StorageParams) == 0 {
		return nil
	}
	return r.StorageParams
}

// ownerName names r's owner as the session of ctx sees it.
func ownerName(c *Catalog, r *Relation, ctx RowsContext) string {
	if name, ok := c.roleName(r.OwnerOID(), userName(ctx)); ok {
		return name
	}
	return userNameOf(r.OwnerOID())
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
			ar := attributeRow(r.OID, i+1, col.Name, col.Type, col.NotNull, col.Default != "" || col.Generated != "")
			if col.Identity != 0 {
				ar["attidentity"] = string(rune(col.Identity))
			}
			if col.Generated != "" {
				ar["attgenerated"] = "s"
			}
			if err := b.add(ar); err != nil {
				return err
			}
		}
		for _, x := range r.keyIndexes() {
			for i, k := range x.cols {
				col := r.Columns[k]
				if err := b.add(attributeRow(x.oid, i+1, col.Name, col.Type, false, false)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func pgAttrdefRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range s.sortedRelations() {
		for i, col := range r.Columns {
			if col.Default == "" && col.Generated == "" {
				continue
			}
			// adbin holds the expression text, which pg_get_expr returns as
			// is: the default, or a generated column's expression (psql's
			// \d shows "generated always as (...) stored" for it).
			bin := shownDefault(col)
			if col.Generated != "" {
				bin = col.Generated
			}
			if err := b.add(row{"oid": uint32(0), "adrelid": r.OID, "adnum": i + 1, "adbin": bin}); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyAttnums lists an index's 1-based column numbers.
func keyAttnums(k keyIndex) []int16 {
	out := make([]int16, len(k.cols))
	for i, c := range k.cols {
		out[i] = int16(c + 1)
	}
	return out
}

func pgIndexRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range s.sortedRelations() {
		for _, k := range r.keyIndexes() {
			n := len(k.cols)
			colls, classes, opts := make([]uint32, n), make([]uint32, n), make([]int16, n)
			for i, c := range k.cols {
				colls[i] = collationOf(r.Columns[c].Type)
			}
			err := b.add(row{
				"indexrelid": k.oid, "indrelid": r.OID, "indnatts": n, "indnkeyatts": n,
				"indisunique": true, "indnullsnotdistinct": false, "indisprimary": k.primary, "indisexclusion": false,
				"indimmediate": true, "indisclustered": false, "indisvalid": true, "indcheckxmin": false,
				"indisready": true, "indislive": true, "indisreplident": false, "indkey": keyAttnums(k),
				"indcollation": colls, "indclass": classes, "indoption": opts,
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// A key constraint's OID is its index's OID (OIDs are unique per system
// catalog in PostgreSQL, so pg_constraint may share pg_class's).
func pgConstraintRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range s.sortedRelations() {
		for _, k := range r.keyIndexes() {
			contype := "u"
			if k.primary {
				contype = "p"
			}
			err := b.add(row{
				"oid": k.oid, "conname": k.name, "connamespace": s.schemaOID(r.Schema), "contype": contype,
				"condeferrable": false, "condeferred": false, "convalidated": true, "conrelid": r.OID,
				"contypid": uint32(0), "conindid": k.oid, "conparentid": uint32(0), "confrelid": uint32(0),
				"confupdtype": " ", "confdeltype": " ", "confmatchtype": " ", "conislocal": true,
				"coninhcount": 0, "connoinherit": true, "conkey": keyAttnums(k),
			})
			if err != nil {
				return err
			}
		}
		if err := pgConstraintRowsMore(s, r, b); err != nil { // constraints_sys.go
			return err
		}
	}
	return nil
}

func keyColumnNames(r *Relation, k keyIndex) string {
	names := make([]string, len(k.cols))
	for i, c := range k.cols {
		names[i] = QuoteIdent(r.Columns[c].Name)
	}
	return strings.Join(names, ", ")
}

// constraintDef renders a key constraint as pg_get_constraintdef does.
func constraintDef(r *Relation, k keyIndex) string {
	if k.primary {
		return "PRIMARY KEY (" + keyColumnNames(r, k) + ")"
	}
	return "UNIQUE (" + keyColumnNames(r, k) + ")"
}

// indexDef renders a key index as pg_get_indexdef does; table is the
// table's name as it should appear (qualified or not).
func indexDef(r *Relation, k keyIndex, table string) string {
	return "CREATE UNIQUE INDEX " + QuoteIdent(k.name) + " ON " + table +
		" USING btree (" + keyColumnNames(r, k) + ")"
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
