package storage

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// The contract between storage and its users (engine, exec's Scan, catalog).
// STUBS: bodies are placeholders until the table log lands.

// Store owns every table's data in a data directory. Safe for concurrent use.
type Store struct{}

// Table is one table's rows. Safe for concurrent use: writers are
// serialized per table, readers take snapshots without blocking writers.
type Table struct{}

// Snapshot is an immutable view of a table's rows at one moment; later writes
// never change it.
type Snapshot struct {
	Chunks []Chunk
}

// Chunk is a run of rows with consecutive row ids.
type Chunk struct {
	// Rec holds the table's columns in table order (Arrow storage per types/arrow.go).
	Rec arrow.RecordBatch
	// FirstRowID is the row id of Rec's row 0; row i has id FirstRowID+i.
	FirstRowID int64
	// Deleted marks deleted rows (bit i set = row i deleted), LSB-first as in
	// Arrow validity bitmaps; nil when no row of the chunk is deleted.
	Deleted []byte
}

// TableDef is what storage needs to know about a table.
type TableDef struct {
	OID     uint32
	Columns []types.Column
	NotNull []bool
	// PrimaryKey lists column indexes; inserts and updates that duplicate a key
	// fail with 23505, and PK columns are NOT NULL (23502).
	PrimaryKey []int
	PKName     string // constraint name for the error message ("t_pkey")
	TableName  string // for error messages
}

// Open opens (creating if needed) the store in dir and recovers every table
// from its log.
func Open(dir string) (*Store, error) { return &Store{}, nil }

// Close flushes and closes all logs.
func (s *Store) Close() error { return nil }

// CreateTable creates an empty table; durable when it returns.
func (s *Store) CreateTable(def TableDef) (*Table, error) { return &Table{}, nil }

// DropTable removes a table and its files.
func (s *Store) DropTable(oid uint32) error { return nil }

// Table returns a table by OID, or nil.
func (s *Store) Table(oid uint32) *Table { return nil }

// Snapshot returns the table's current rows.
func (t *Table) Snapshot() Snapshot { return Snapshot{} }

// Insert appends rows (columns in table order) and returns when they are
// durable (fsync, grouped with concurrent writers). It checks NOT NULL and
// primary keys first: nothing is written if any row fails.
func (t *Table) Insert(ctx context.Context, rec arrow.RecordBatch) (int64, error) {
	return 0, nil
}

// Delete removes rows by row id; durable on return. Returns the number deleted.
func (t *Table) Delete(ctx context.Context, rowIDs []int64) (int64, error) { return 0, nil }

// Update replaces rows: row rowIDs[i] becomes row i of rec, atomically for
// the whole call (all or nothing, one log record), checking keys and NOT NULL.
func (t *Table) Update(ctx context.Context, rowIDs []int64, rec arrow.RecordBatch) (int64, error) {
	return 0, nil
}

// Truncate removes every row.
func (t *Table) Truncate(ctx context.Context) error { return nil }

// RowCount returns the number of live rows.
func (t *Table) RowCount() int64 { return 0 }
