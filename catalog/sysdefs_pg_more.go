package catalog

// More pg_catalog relations psql's describe commands read (\dc, \dRs, \dF,
// \dl, \ddp, \dd), with PostgreSQL 15's OIDs and columns. They are empty:
// there are no conversions, subscriptions, text search configurations,
// large objects, default privileges or operator families. pg_lsn is text
// here.
func init() {
	pgCatalogDefs = append(pgCatalogDefs,
		sysDef{826, "pg_catalog", "pg_default_acl", []Column{
			{Name: "oid", Type: tOid, NotNull: true},
			{Name: "defaclrole", Type: tOid, NotNull: true},
			{Name: "defaclnamespace", Type: tOid, NotNull: true},
			{Name: "defaclobjtype", Type: tChar, NotNull: true},
			{Name: "defaclacl", Type: tTextArr, NotNull: true},
		}},
		sysDef{2607, "pg_catalog", "pg_conversion", []Column{
			{Name: "oid", Type: tOid, NotNull: true},
			{Name: "conname", Type: tName, NotNull: true},
			{Name: "connamespace", Type: tOid, NotNull: true},
			{Name: "conowner", Type: tOid, NotNull: true},
			{Name: "conforencoding", Type: tInt4, NotNull: true},
			{Name: "contoencoding", Type: tInt4, NotNull: true},
			{Name: "conproc", Type: tRegProc, NotNull: true},
			{Name: "condefault", Type: tBool, NotNull: true},
		}},
		sysDef{2753, "pg_catalog", "pg_opfamily", []Column{
			{Name: "oid", Type: tOid, NotNull: true},
			{Name: "opfmethod", Type: tOid, NotNull: true},
			{Name: "opfname", Type: tName, NotNull: true},
			{Name: "opfnamespace", Type: tOid, NotNull: true},
			{Name: "opfowner", Type: tOid, NotNull: true},
		}},
		sysDef{2995, "pg_catalog", "pg_largeobject_metadata", []Column{
			{Name: "oid", Type: tOid, NotNull: true},
			{Name: "lomowner", Type: tOid, NotNull: true},
			{Name: "lomacl", Type: tTextArr},
		}},
		sysDef{3602, "pg_catalog", "pg_ts_config", []Column{
			{Name: "oid", Type: tOid, NotNull: true},
			{Name: "cfgname", Type: tName, NotNull: true},
			{Name: "cfgnamespace", Type: tOid, NotNull: true},
			{Name: "cfgowner", Type: tOid, NotNull: true},
			{Name: "cfgparser", Type: tOid, NotNull: true},
		}},
		sysDef{6100, "pg_catalog", "pg_subscription", []Column{
			{Name: "oid", Type: tOid, NotNull: true},
			{Name: "subdbid", Type: tOid, NotNull: true},
			{Name: "subskiplsn", Type: tText, NotNull: true},
			{Name: "subname", Type: tName, NotNull: true},
			{Name: "subowner", Type: tOid, NotNull: true},
			{Name: "subenabled", Type: tBool, NotNull: true},
			{Name: "subbinary", Type: tBool, NotNull: true},
			{Name: "substream", Type: tBool, NotNull: true},
			{Name: "subtwophasestate", Type: tChar, NotNull: true},
			{Name: "subdisableonerr", Type: tBool, NotNull: true},
			{Name: "subconninfo", Type: tText, NotNull: true},
			{Name: "subslotname", Type: tName},
			{Name: "subsynccommit", Type: tText, NotNull: true},
			{Name: "subpublications", Type: tTextArr, NotNull: true},
		}},
	)
}
