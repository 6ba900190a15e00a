// Package catalog owns streamsql's relations: tables, views and the virtual
// system relations of pg_catalog and information_schema. It assigns OIDs,
// resolves names along a search_path, tracks which views depend on which
// relations, persists itself in the data directory, and implements the
// pg_catalog functions (format_type, pg_get_expr, pg_table_is_visible, ...).
//
// Concurrency: a *Catalog is safe for concurrent use. Readers (Resolve,
// Table, the system relations' Rows, the CatalogInfo methods) load an
// immutable snapshot and never block. DDL (CreateTable, CreateView, Drop,
// CreateSchema, DropSchema, Comment) is serialized by a mutex; each DDL
// builds a new snapshot, persists it, then publishes it atomically.
//
// Durability: the catalog lives in <dataDir>/catalog.json, rewritten
// atomically (temp file, fsync, rename, fsync of the directory) by every DDL.
// OIDs are stable across restarts; user OIDs start at 16384.
//
// The pg_catalog functions are registered into the expression registry by
// this package's init (see funcs.go); they reach the catalog through
// expr.Context.Catalog, which the engine sets to the *Catalog.
package catalog
