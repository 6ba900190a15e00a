package catalog

import (
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/types"
)

// Rows of the pg_catalog relations that describe types, functions,
// databases, roles and settings rather than relations.

// Fixed OIDs of the objects these rows describe (PostgreSQL 15's values
// where PostgreSQL has the object).
const (
	postgresDBOID  uint32 = 5
	streamsqlDBOID uint32 = 16383 // below FirstUserOID, never assigned to anything else
	otherDBOID     uint32 = 16382 // the session's database when it is neither of the above
	plpgsqlExtOID  uint32 = 13590
	plpgsqlLangOID uint32 = 13589
	internalLang   uint32 = 12
)

func init() {
	registerRows("pg_catalog.pg_type", pgTypeRows)
	registerRows("pg_catalog.pg_proc", pgProcRows)
	registerRows("pg_catalog.pg_database", pgDatabaseRows)
	registerRows("pg_catalog.pg_am", pgAmRows)
	registerRows("pg_catalog.pg_collation", pgCollationRows)
	registerRows("pg_catalog.pg_extension", pgExtensionRows)
	registerRows("pg_catalog.pg_language", pgLanguageRows)
	registerRows("pg_catalog.pg_tablespace", pgTablespaceRows)
	registerRows("pg_catalog.pg_settings", pgSettingsRows)
}

func pgTypeRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, pt := range pgTypes {
		arr := arrayOID(pt.t)
		err := b.add(row{
			"oid": pt.oid, "typname": pt.name, "typnamespace": PgCatalogOID, "typowner": SuperuserOID,
			"typlen": pt.t.Len(), "typbyval": pt.byVal, "typtype": typtypeOf(pt.t), "typcategory": string(rune(pt.t.Category())),
			"typispreferred": pt.preferred, "typisdefined": true, "typdelim": ",", "typrelid": uint32(0),
			"typsubscript": uint32(0), "typelem": typelemOf(pt), "typarray": arr,
			"typinput": pt.procs[0], "typoutput": pt.procs[1], "typreceive": pt.procs[2], "typsend": pt.procs[3],
			"typmodin": pt.procs[4], "typmodout": pt.procs[5], "typanalyze": uint32(0),
			"typalign": string(rune(pt.align)), "typstorage": string(rune(pt.storage)), "typnotnull": false,
			"typbasetype": uint32(0), "typtypmod": -1, "typndims": 0, "typcollation": pt.collation,
		})
		if err != nil {
			return err
		}
		if arr == 0 {
			continue
		}
		err = b.add(row{
			"oid": arr, "typname": "_" + pt.name, "typnamespace": PgCatalogOID, "typowner": SuperuserOID,
			"typlen": -1, "typbyval": false, "typtype": "b", "typcategory": "A",
			"typispreferred": false, "typisdefined": true, "typdelim": ",", "typrelid": uint32(0),
			"typsubscript": procArraySubscript, "typelem": pt.oid, "typarray": uint32(0),
			"typinput": procArrayIn, "typoutput": procArrayOut, "typreceive": procArrayRecv, "typsend": procArraySend,
			"typmodin": pt.procs[4], "typmodout": pt.procs[5], "typanalyze": procArrayTypanalyze,
			"typalign": alignOfArray(pt.t), "typstorage": "x", "typnotnull": false,
			"typbasetype": uint32(0), "typtypmod": -1, "typndims": 0, "typcollation": pt.collation,
		})
		if err != nil {
			return err
		}
	}
	// The domains of information_schema, as PostgreSQL 15 defines them
	// (its relations' columns use the base types here).
	for _, d := range infoSchemaDomains {
		err := b.add(row{
			"oid": d.oid, "typname": d.name, "typnamespace": InformationSchemaOID, "typowner": SuperuserOID,
			"typlen": d.base.Len(), "typbyval": d.byVal, "typtype": "d", "typcategory": string(rune(d.base.Category())),
			"typispreferred": false, "typisdefined": true, "typdelim": ",", "typrelid": uint32(0),
			"typsubscript": uint32(0), "typelem": uint32(0), "typarray": d.oid - 1, // PostgreSQL's array of the domain
			"typinput": procDomainIn, "typoutput": d.procs[0], "typreceive": procDomainRecv, "typsend": d.procs[1],
			"typmodin": uint32(0), "typmodout": uint32(0), "typanalyze": uint32(0),
			"typalign": string(rune(d.align)), "typstorage": string(rune(d.storage)), "typnotnull": false,
			"typbasetype": d.base.OID(), "typtypmod": d.base.Typmod, "typndims": 0, "typcollation": d.collation,
			"typdefault": nullIfEmpty(d.def),
		})
		if err != nil {
			return err
		}
	}
	if err := domainTypeRows(s, b); err != nil { // domain.go
		return err
	}
	if err := userTypeRows(s, b); err != nil { // usertype_file.go
		return err
	}
	// Each user relation's row type.
	for _, r := range s.sortedRelations() {
		if r.RowTypeOID == 0 {
			continue
		}
		err := b.add(row{
			"oid": r.RowTypeOID, "typname": r.Name, "typnamespace": s.schemaOID(r.Schema), "typowner": r.OwnerOID(),
			"typlen": -1, "typbyval": false, "typtype": "c", "typcategory": "C",
			"typispreferred": false, "typisdefined": true, "typdelim": ",", "typrelid": r.OID,
			"typsubscript": uint32(0), "typelem": uint32(0), "typarray": uint32(0),
			"typinput": procRecordIn, "typoutput": procRecordOut, "typreceive": procRecordRecv, "typsend": procRecordSend,
			"typmodin": uint32(0), "typmodout": uint32(0), "typanalyze": uint32(0),
			"typalign": "d", "typstorage": "x", "typnotnull": false,
			"typbasetype": uint32(0), "typtypmod": -1, "typndims": 0, "typcollation": uint32(0),
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// typtypeOf is pg_type.typtype: 'p' for the pseudo-types, 'b' otherwise.
func typtypeOf(t types.T) string {
	if t.Kind == types.Void || t.Kind == types.Unknown || t.Polymorphic() {
		return "p"
	}
	return "b"
}

// typelemOf is pg_type.typelem of a base type: name is a fixed-length
// array of "char" in PostgreSQL.
func typelemOf(pt pgType) uint32 {
	if pt.oid == 19 {
		return 18
	}
	return 0
}

func pgProcRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, p := range pgProcs {
		vol := string(rune(p.volatile))
		err := b.add(row{
			"oid": p.oid, "proname": p.name, "pronamespace": PgCatalogOID, "proowner": SuperuserOID,
			"prolang": internalLang, "procost": float32(1), "prorows": float32(0), "provariadic": uint32(0),
			"prosupport": uint32(0), "prokind": "f", "prosecdef": false, "proleakproof": false,
			"proisstrict": p.strict, "proretset": false, "provolatile": vol, "proparallel": "s",
			"pronargs": len(p.args), "pronargdefaults": 0, "prorettype": p.ret, "proargtypes": p.args,
			"prosrc": p.name,
		})
		if err != nil {
			return err
		}
	}
	return userProcRows(s, b)
}

// ProcOID resolves a built-in function name ("array_in",
// "pg_catalog.int4in") as a regproc cast does; ok is false when unknown.
func ProcOID(name string) (uint32, bool) {
	if len(name) > 11 && name[:11] == "pg_catalog." {
		name = name[11:]
	}
	for _, p := range pgProcs {
		if p.name == name {
			return p.oid, true
		}
	}
	return 0, false
}

// ProcName renders a function OID as regproc output does; ok is false when unknown.
func ProcName(oid uint32) (string, bool) {
	if p := procByOID(oid); p != nil {
		return p.name, true
	}
	return "", false
}

func pgDatabaseRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	names := []string{"postgres", "streamsql"}
	oids := []uint32{postgresDBOID, streamsqlDBOID}
	if db := dbName(ctx); db != "postgres" && db != "streamsql" {
		names, oids = append(names, db), append(oids, otherDBOID)
	}
	for i, name := range names {
		err := b.add(row{
			"oid": oids[i], "datname": name, "datdba": SuperuserOID, "encoding": 6, "datlocprovider": "c",
			"datistemplate": false, "datallowconn": true, "datconnlimit": -1, "datfrozenxid": uint32(716),
			"datminmxid": uint32(1), "dattablespace": uint32(1663), "datcollate": "C.UTF-8", "datctype": "C.UTF-8",
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// pg_roles, pg_authid, pg_user and pg_shadow: users.go.

func pgAmRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	if err := b.add(row{"oid": heapAMOID, "amname": "heap", "amhandler": procHeapHandler, "amtype": "t"}); err != nil {
		return err
	}
	return b.add(row{"oid": btreeAMOID, "amname": "btree", "amhandler": procBtreeHandler, "amtype": "i"})
}

func pgCollationRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range []row{
		{"oid": uint32(100), "collname": "default", "collprovider": "d", "collencoding": -1},
		{"oid": uint32(950), "collname": "C", "collprovider": "c", "collencoding": -1, "collcollate": "C", "collctype": "C"},
		{"oid": uint32(951), "collname": "POSIX", "collprovider": "c", "collencoding": -1, "collcollate": "POSIX", "collctype": "POSIX"},
	} {
		r["collnamespace"], r["collowner"], r["collisdeterministic"] = PgCatalogOID, SuperuserOID, true
		if err := b.add(r); err != nil {
			return err
		}
	}
	return nil
}

func pgExtensionRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	return b.add(row{
		"oid": plpgsqlExtOID, "extname": "plpgsql", "extowner": SuperuserOID, "extnamespace": PgCatalogOID,
		"extrelocatable": false, "extversion": "1.0",
	})
}

func pgLanguageRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	// As in PostgreSQL, plpgsql has a call handler (so psql's \dL lists it),
	// an inline handler and a validator: the three OIDs before its own.
	for _, r := range []row{
		{"oid": uint32(12), "lanname": "internal", "lanispl": false, "lanpltrusted": false, "lanvalidator": uint32(2246)},
		{"oid": uint32(13), "lanname": "c", "lanispl": false, "lanpltrusted": false, "lanvalidator": uint32(2247)},
		{"oid": uint32(14), "lanname": "sql", "lanispl": false, "lanpltrusted": true, "lanvalidator": uint32(2248)},
		{"oid": plpgsqlLangOID, "lanname": "plpgsql", "lanispl": true, "lanpltrusted": true,
			"lanplcallfoid": plpgsqlLangOID - 3, "laninline": plpgsqlLangOID - 2, "lanvalidator": plpgsqlLangOID - 1},
	} {
		r["lanowner"] = SuperuserOID
		for _, k := range []string{"lanplcallfoid", "laninline"} {
			if r[k] == nil {
				r[k] = uint32(0)
			}
		}
		if err := b.add(r); err != nil {
			return err
		}
	}
	return nil
}

func pgTablespaceRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	if err := b.add(row{"oid": uint32(1663), "spcname": "pg_default", "spcowner": SuperuserOID}); err != nil {
		return err
	}
	return b.add(row{"oid": uint32(1664), "spcname": "pg_global", "spcowner": SuperuserOID})
}

// pgSettingsRows lists ctx.Settings when the engine gives it; otherwise the
// parameters of settingDefs, valued by ctx.Setting (the session) or their
// boot values.
func pgSettingsRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	var settings []Setting
	if ctx.Settings != nil {
		settings = ctx.Settings()
	} else {
		for _, d := range settingDefs {
			d.Setting, d.Source, d.ResetVal = d.BootVal, "default", d.BootVal
			if ctx.Setting != nil {
				if v, ok := ctx.Setting(d.Name); ok {
					d.Setting = inUnit(v, d.Unit)
					if d.Setting != d.BootVal {
						d.Source = "session"
					}
				}
			}
			settings = append(settings, d)
		}
	}
	for _, st := range settings {
		err := b.add(row{
			"name": st.Name, "setting": st.Setting, "unit": nullIfEmpty(st.Unit), "category": st.Category,
			"short_desc": st.ShortDesc, "context": st.Context, "vartype": st.VarType, "source": st.Source,
			"boot_val": st.BootVal, "reset_val": st.ResetVal, "pending_restart": false,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// inUnit converts a SHOW-style value with a unit ("4MB", "10s") to a count
// of the parameter's unit ("4096" kB, "10000" ms), as pg_settings shows it.
func inUnit(v, unit string) string {
	if unit == "" {
		return v
	}
	num := strings.TrimRightFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	n, err := strconv.ParseInt(num, 10, 64)
	suffix := strings.TrimSpace(v[len(num):])
	if err != nil || suffix == "" {
		return v
	}
	scale := map[string]int64{"B": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40,
		"us": 1, "ms": 1000, "s": 1000_000, "min": 60_000_000, "h": 3600_000_000, "d": 86400_000_000}
	from, ok1 := scale[suffix]
	to, ok2 := scale[unit]
	if !ok1 || !ok2 {
		return v
	}
	return strconv.FormatInt(n*from/to, 10)
}

// infoSchemaDomain is a domain of information_schema in pg_type.
type infoSchemaDomain struct {
	oid            uint32
	name           string
	base           types.T
	byVal          bool
	align, storage byte
	collation      uint32
	procs          [2]uint32 // the base type's output and send (input and receive are domain_in, domain_recv)
	def            string
}

// infoSchemaDomains are PostgreSQL 15's (OIDs as initdb assigns them).
var infoSchemaDomains = []infoSchemaDomain{
	{13221, "cardinal_number", types.TInt4, true, 'i', 'p', 0, [2]uint32{43, 2407}, ""},
	{13224, "character_data", types.TVarchar, false, 'i', 'x', 950, [2]uint32{1047, 2433}, ""},
	{13226, "sql_identifier", types.TName, false, 'c', 'p', 950, [2]uint32{35, 2423}, ""},
	{13232, "time_stamp", types.TTimestampTZ.WithTypmod(2), true, 'd', 'p', 0, [2]uint32{1151, 2477}, "CURRENT_TIMESTAMP(2)"},
	{13234, "yes_or_no", types.TVarchar.WithTypmod(7), false, 'i', 'x', 950, [2]uint32{1047, 2433}, ""},
}
