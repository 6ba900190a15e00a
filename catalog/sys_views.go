package catalog

// Rows of pg_tables, pg_views, pg_matviews and pg_indexes: PostgreSQL's
// convenience views over pg_class.

func init() {
	registerRows("pg_catalog.pg_tables", pgTablesRows)
	registerRows("pg_catalog.pg_views", pgViewsRows)
	registerRows("pg_catalog.pg_matviews", pgMatviewsRows)
	registerRows("pg_catalog.pg_indexes", pgIndexesRows)
	registerRows("pg_catalog.pg_foreign_table", pgForeignTableRows)
}

// pgForeignTableRows lists the sources, which pg_class shows as foreign
// tables of the server "streamsql" (see sys_streams.go).
func pgForeignTableRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range s.sortedRelations() {
		if r.Kind != KindSource {
			continue
		}
		if err := b.add(row{"ftrelid": r.OID, "ftserver": sourceServerOID, "ftoptions": sourceOptions(r)}); err != nil {
			return err
		}
	}
	return nil
}

// qualified is schema.name, quoted as needed.
func qualified(r *Relation) string { return QuoteIdent(r.Schema) + "." + QuoteIdent(r.Name) }

// nullIfEmpty turns "" into NULL.
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func pgTablesRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range s.sortedRelations() {
		if r.Kind != KindTable {
			continue
		}
		err := b.add(row{
			"schemaname": r.Schema, "tablename": r.Name, "tableowner": ownerName(c, r, ctx),
			"hasindexes": len(r.keyIndexes()) > 0, "hasrules": false, "hastriggers": false, "rowsecurity": false,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func pgViewsRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range s.sortedRelations() {
		if r.Kind != KindView && r.Kind != KindSystem {
			continue
		}
		err := b.add(row{"schemaname": r.Schema, "viewname": r.Name, "viewowner": ownerName(c, r, ctx), "definition": nullIfEmpty(viewDef(r))})
		if err != nil {
			return err
		}
	}
	return nil
}

func pgMatviewsRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range s.sortedRelations() {
		if r.Kind != KindMatView {
			continue
		}
		err := b.add(row{
			"schemaname": r.Schema, "matviewname": r.Name, "matviewowner": ownerName(c, r, ctx),
			"hasindexes": false, "ispopulated": true, "definition": nullIfEmpty(viewDef(r)),
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func pgIndexesRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range s.sortedRelations() {
		for _, k := range r.keyIndexes() {
			if err := b.add(row{"schemaname": r.Schema, "tablename": r.Name, "indexname": k.name, "indexdef": indexDef(r, k, qualified(r))}); err != nil {
				return err
			}
		}
	}
	return nil
}
